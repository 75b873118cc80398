package docs_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/foliodev/folio"

// checkedTable returns the rows (cells trimmed) of the table after the
// <!-- check: name --> line of doc, header and rule left out.
func checkedTable(t *testing.T, doc, name string) [][]string {
	t.Helper()
	lines := strings.Split(doc, "\n")
	i := slices.Index(lines, "<!-- check: "+name+" -->")
	if i < 0 {
		t.Fatalf("docs/architecture.md has no <!-- check: %s --> table", name)
	}
	var rows [][]string
	for _, l := range lines[i+1:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("the %s table has no rows", name)
	}
	return rows[2:]
}

var backticked = regexp.MustCompile("`([^`]+)`")

// pkgInfo is one package of the module as go list sees it.
type pkgInfo struct {
	path        string // relative to the module: internal/kv
	imports     []string
	testImports []string // of its _test.go files, both packages
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", module+"/...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var pkgs []pkgInfo
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "|")
		if len(f) != 3 {
			t.Fatalf("go list line %q", l)
		}
		pkgs = append(pkgs, pkgInfo{path: rel(f[0]), imports: strings.Fields(f[1]), testImports: strings.Fields(f[2])})
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func rel(p string) string {
	if p == module {
		return "."
	}
	return strings.TrimPrefix(p, module+"/")
}

// matches reports whether package p is named by pattern (x or x/...).
func matches(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// TestArchitecture holds the code to docs/architecture.md: every package
// of the module is on exactly one floor of the floors table and imports
// only packages of its floor or below; and the packages that import the
// storage engine (Pebble), in code or in tests, are exactly those of the
// engine-imports table.
func TestArchitecture(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	type floor struct {
		n        int
		name     string
		patterns []string
	}
	var floors []floor
	for _, row := range checkedTable(t, doc, "floors") {
		num, name, _ := strings.Cut(row[0], " ")
		n, err := strconv.Atoi(num)
		if err != nil || len(row) < 3 {
			t.Fatalf("floors row %q: want | <number> <name> | `pkg`, … | what it owns |", row)
		}
		f := floor{n: n, name: name}
		for _, m := range backticked.FindAllStringSubmatch(row[1], -1) {
			f.patterns = append(f.patterns, m[1])
		}
		floors = append(floors, f)
	}
	// The longest pattern naming a package decides its floor, so that
	// assistant/sentence can sit below assistant/....
	floorOf := func(p string) (floor, bool) {
		var found floor
		best := -1
		for _, f := range floors {
			for _, pat := range f.patterns {
				if matches(pat, p) && len(pat) > best {
					found, best = f, len(pat)
				}
			}
		}
		return found, best >= 0
	}
	pkgs := listPackages(t)
	for _, p := range pkgs {
		f, ok := floorOf(p.path)
		if !ok {
			t.Errorf("package %s is on no floor of docs/architecture.md: add it to the floors table", p.path)
			continue
		}
		for _, imp := range p.imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			g, ok := floorOf(rel(imp))
			if ok && g.n > f.n {
				t.Errorf("%s (floor %d %s) imports %s (floor %d %s): imports point down, never up (docs/architecture.md)",
					p.path, f.n, f.name, rel(imp), g.n, g.name)
			}
		}
	}

	var allowed []string
	for _, row := range checkedTable(t, doc, "engine-imports") {
		m := backticked.FindStringSubmatch(row[0])
		if m == nil {
			t.Fatalf("engine-imports row %q names no package", row)
		}
		allowed = append(allowed, m[1])
	}
	var actual []string
	for _, p := range pkgs {
		for _, imp := range append(slices.Clone(p.imports), p.testImports...) {
			if imp == "github.com/cockroachdb/pebble" || strings.HasPrefix(imp, "github.com/cockroachdb/pebble/") {
				actual = append(actual, p.path)
				break
			}
		}
	}
	for _, p := range actual {
		if !slices.Contains(allowed, p) {
			t.Errorf("%s imports Pebble: only internal/kv names the storage engine; use the kv types (kv.Batch, kv.Reader, kv.Iter, kv.FS), or add a row with the reason to docs/architecture.md's engine-imports table if a test truly must", p)
		}
	}
	for _, p := range allowed {
		if !slices.Contains(actual, p) {
			t.Errorf("docs/architecture.md's engine-imports table lists %s, which does not import Pebble: remove the row", p)
		}
		if !matches("internal/kv/...", p) {
			t.Errorf("docs/architecture.md allows %s, outside internal/kv, to import Pebble", p)
		}
	}
}

// TestFlowdocIsPure holds flowdoc, the document model, free of transports
// and of the error taxonomy (docs/architecture.md, "The document model"):
// no package of flowdoc/... depends, directly or through another package,
// on internal/errs or net/http. Its errors give their kind by name
// (ErrKindName) and internal/errs maps it.
func TestFlowdocIsPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "../flowdoc/...").Output()
	if err != nil {
		t.Fatalf("go list -deps ../flowdoc/...: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == module+"/internal/errs" || p == "net/http" {
			t.Errorf("flowdoc/... depends on %s: flowdoc is the pure document model; give its errors an ErrKindName and let internal/errs map them", p)
		}
	}
}
