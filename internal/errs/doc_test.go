package errs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/errs"
)

// docTable returns the rows of the first Markdown table in doc whose
// header starts with header, as trimmed cells.
func docTable(t *testing.T, doc, header string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("docs/%s has no table starting %q", doc, header)
	}
	return rows
}

var codeSpan = regexp.MustCompile("`([a-z_]+)`")

// TestDocsTableMatchesKinds keeps the one table of kinds in docs/api.md
// equal to the table in errs.go: every kind, its HTTP status, exit code
// and retryability, and nothing else.
func TestDocsTableMatchesKinds(t *testing.T) {
	rows := docTable(t, "api.md", "| kind (default code) | HTTP | exit | retry |")
	seen := map[string]bool{}
	for _, r := range rows {
		if len(r) < 5 {
			t.Fatalf("short row %q", r)
		}
		m := codeSpan.FindStringSubmatch(r[0])
		if m == nil {
			t.Fatalf("row %q names no kind", r)
		}
		k, ok := errs.KindFromName(m[1])
		if !ok {
			t.Errorf("docs/api.md lists %q, which is not a kind", m[1])
			continue
		}
		seen[m[1]] = true
		if r[1] != strconv.Itoa(k.HTTPStatus()) {
			t.Errorf("%s: docs say HTTP %s, the code %d", k, r[1], k.HTTPStatus())
		}
		if r[2] != strconv.Itoa(k.ExitCode()) {
			t.Errorf("%s: docs say exit %s, the code %d", k, r[2], k.ExitCode())
		}
		if want := map[bool]string{true: "yes", false: "no"}[k.Retryable()]; r[3] != want {
			t.Errorf("%s: docs say retry %s, the code %s", k, r[3], want)
		}
	}
	for _, k := range errs.Kinds() {
		if !seen[k.String()] {
			t.Errorf("kind %s is not in the table of docs/api.md", k)
		}
	}
}

// TestCLIExitTableMatchesKinds keeps the exit codes of docs/cli.md equal
// to the kinds': each code lists exactly the kinds that exit with it.
func TestCLIExitTableMatchesKinds(t *testing.T) {
	want := map[int][]string{}
	for _, k := range errs.Kinds() {
		want[k.ExitCode()] = append(want[k.ExitCode()], k.String())
	}
	rows := docTable(t, "cli.md", "| exit | kinds | meaning |")
	seen := map[int]bool{}
	for _, r := range rows {
		code, err := strconv.Atoi(r[0])
		if err != nil {
			t.Fatalf("row %q: exit code %q", r, r[0])
		}
		seen[code] = true
		var got []string
		for _, m := range codeSpan.FindAllStringSubmatch(r[1], -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		w := slices.Clone(want[code])
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("docs/cli.md: exit %d lists %v, the code gives it to %v", code, got, w)
		}
	}
	for code := range want {
		if !seen[code] {
			t.Errorf("exit code %d (%v) is not in docs/cli.md", code, want[code])
		}
	}
	if !seen[0] {
		t.Error("docs/cli.md does not list exit 0")
	}
}
