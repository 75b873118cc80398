# Folio. `make run` starts the daemon on ./folio-data; `make test` runs the tests.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
BIN      := bin/folio
# make install puts folio here: the first entry of GOPATH's bin, where
# `go install` puts commands (put it on PATH). INSTALL_DIR=… overrides it.
INSTALL_DIR ?= $(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin
DATA     ?= ./folio-data
PKGS     := ./...

.PHONY: build install run test test-postgres testrace fuzz bench lint deadcode clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/folio

install:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(INSTALL_DIR)/folio ./cmd/folio
	@echo "installed $(INSTALL_DIR)/folio"
	@case ":$$PATH:" in *":$(INSTALL_DIR):"*) ;; \
	*) echo "note: $(INSTALL_DIR) is not on your PATH; add it, e.g. export PATH=\"$(INSTALL_DIR):\$$PATH\"" ;; esac

run: build
	./scripts/run.sh $(BIN) $(DATA)

# The test command CI runs (see README): the whole suite, short fuzz seeds
# included; then, when PostgreSQL's server is installed (or must be:
# FOLIO_REQUIRE_POSTGRES, CI=true), the repository and publishing suites
# again with their stores on PostgreSQL.
PG_PKGS     := ./internal/repo ./internal/repo/publish
PG_ALL_PKGS := $(PG_PKGS) ./assistant ./persona
HAVE_PG     := $(if $(wildcard /usr/lib/postgresql/*/bin/initdb),yes,$(if $(FOLIO_REQUIRE_POSTGRES)$(filter true,$(CI)),yes,))
test:
	$(GO) test -count=1 -timeout 15m $(PKGS)
ifeq ($(HAVE_PG),yes)
	FOLIO_TEST_ENGINE=postgres $(GO) test -count=1 -timeout 20m $(PG_PKGS)
else
	@echo "PostgreSQL NOT FOUND: the suites were NOT run on the PostgreSQL engine (apt-get install postgresql)"
endif

# The suites that can run on PostgreSQL (FOLIO_TEST_ENGINE), all of them.
test-postgres:
	FOLIO_TEST_ENGINE=postgres $(GO) test -count=1 -timeout 30m $(PG_ALL_PKGS)

testrace:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

fuzz:
	./scripts/fuzz.sh 10s

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 $(PKGS) | tee bench/last-go.txt
	./bench/git_vs_folio.sh
	./bench/packs.sh
	$(GO) run ./bench/taskbench -n 10000
	{ $(GO) test ./assistant -run '^$$' -bench 'RequestToSuggestion|Accept' -benchtime 200x -count 1 && \
	  $(GO) test ./internal/server -run '^$$' -bench 'SyncAssist' -benchtime 200x -count 1 && \
	  $(GO) test ./internal/llm/localedit -run '^$$' -bench 'Edit(Chinese|English)' -benchtime 100x -count 3; } | tee bench/last-assistant.txt
	$(GO) run ./bench/publicread -folio bin/folio -articles 200 -duration 10s | tee bench/last-publicread.txt

# go vet, gofmt, staticcheck (pinned by the tool directive in go.mod, built
# by `go tool` on first use), and no binaries or files over 1 MiB in git.
lint:
	./scripts/check-tracked.sh
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) tool staticcheck $(PKGS)

# Functions nothing calls, tests included (deadcode, pinned in go.mod). Not
# part of lint: an API may land a little before its first caller.
deadcode:
	@out=$$($(GO) tool deadcode -test $(PKGS)) || exit 1; \
	if [ -n "$$out" ]; then echo "unreachable code (delete it, or call it):"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
