# Folio. `make run` starts the daemon on ./folio-data; `make test` runs the tests.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
BIN      := bin/folio
DATA     ?= ./folio-data
PKGS     := ./...

.PHONY: build run test testrace fuzz bench lint clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/folio

run: build
	./scripts/run.sh $(BIN) $(DATA)

# The test command CI runs (see README): the whole suite, short fuzz seeds included.
test:
	$(GO) test -count=1 -timeout 15m $(PKGS)

testrace:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

fuzz:
	./scripts/fuzz.sh 10s

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 $(PKGS) | tee bench/last-go.txt
	./bench/git_vs_folio.sh
	./bench/packs.sh
	$(GO) run ./bench/taskbench -n 10000
	$(GO) test ./assistant -run '^$$' -bench 'RequestToSuggestion|Accept' -benchtime 200x -count 1 | tee bench/last-assistant.txt

lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
