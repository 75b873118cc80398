package server

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const repoImport = "github.com/foliodev/folio/internal/repo"

// reachOptions say what contentReaches reports.
type reachOptions struct {
	// concrete reports mentions of repo.Repo (the concrete service).
	concrete bool
}

// contentReaches returns "file:line: what" for every place in files
// where code reaches past the content service's interface: a mention of
// repo.Repo (when o.concrete), and any selector named DB or Hub — the
// store and the stream hub reached through the service, called or taken
// as a value (a pack.Stores' DB field too: exports get their stores from
// PackStores whole).
func contentReaches(fset *token.FileSet, files []*ast.File, o reachOptions) []string {
	var out []string
	report := func(n ast.Node, format string, a ...any) {
		p := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%s:%d: %s", filepath.Base(p.Filename), p.Line, fmt.Sprintf(format, a...)))
	}
	for _, f := range files {
		repoName := "" // what internal/repo is called in this file
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil || path != repoImport {
				continue
			}
			repoName = "repo"
			if imp.Name != nil {
				repoName = imp.Name.Name
			}
			if repoName == "." && o.concrete {
				report(imp, "imports internal/repo with a dot: its Repo would go unnoticed")
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch name := sel.Sel.Name; {
			case name == "DB" || name == "Hub":
				report(sel, "%s reaches past Content; give Content a method for what it is needed for", selectorText(sel))
			case name == "Repo" && o.concrete && repoName != "":
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == repoName {
					report(sel, "names repo.Repo; the server holds the content service as Content")
				}
			}
			return true
		})
	}
	return out
}

// selectorText renders a selector for a message ("s.content.DB").
func selectorText(sel *ast.SelectorExpr) string {
	var b strings.Builder
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			b.WriteString(e.Name)
		case *ast.SelectorExpr:
			walk(e.X)
			b.WriteString("." + e.Sel.Name)
		case *ast.CallExpr:
			walk(e.Fun)
			b.WriteString("()")
		case *ast.TypeAssertExpr:
			walk(e.X)
			b.WriteString(".(…)")
		case *ast.ParenExpr:
			walk(e.X)
		default:
			b.WriteString("…")
		}
	}
	walk(sel)
	return b.String()
}

// parseDir parses the non-test Go files matching pattern.
func parseDir(t *testing.T, fset *token.FileSet, pattern string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files match %s", pattern)
	}
	return files
}

// The server depends on the content service through Content alone: no
// *repo.Repo in package server, and neither it nor its sync adapter
// reaches the store or the hub with DB() or Hub(). (Tests may still
// build a real *repo.Repo to serve.)
func TestContentOnlyThroughInterface(t *testing.T) {
	fset := token.NewFileSet()
	bad := contentReaches(fset, parseDir(t, fset, "*.go"), reachOptions{concrete: true})
	// syncrepo is the adapter to the sync protocol: it may name
	// repo.Repo to assert what implements it, but it is handed the
	// streams through an interface too.
	for _, b := range contentReaches(fset, parseDir(t, fset, filepath.Join("syncrepo", "*.go")), reachOptions{}) {
		bad = append(bad, "syncrepo/"+b)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// The check reports what it is for, with the file and line, and nothing
// else: an alias of the import, a call on a call, a method value.
func TestContentReachesFindsOffenders(t *testing.T) {
	const src = `package server

import (
	rp "github.com/foliodev/folio/internal/repo"
)

type holder struct{ r *rp.Repo }

func (h holder) failed() error { return h.r.DB().Failure() }

func (h holder) wake() any { return h.r.Hub }

// A comment naming *repo.Repo and r.DB() is not code.
func (h holder) fine(c Content) (any, error) { return c.PackStores(), c.Failure() }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "offender.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := contentReaches(fset, []*ast.File{f}, reachOptions{concrete: true})
	want := []string{
		"offender.go:7: names repo.Repo; the server holds the content service as Content",
		"offender.go:9: h.r.DB reaches past Content; give Content a method for what it is needed for",
		"offender.go:11: h.r.Hub reaches past Content; give Content a method for what it is needed for",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := contentReaches(fset, []*ast.File{f}, reachOptions{}); len(got) != 2 {
		t.Errorf("without concrete, reported %q; want the DB and Hub reaches only", got)
	}
}
