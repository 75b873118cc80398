package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// folio runs the CLI as main does (flags may follow arguments) and returns
// standard output, standard error and the exit code.
func folio(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	r := runCLI(args...)
	return r.stdout, r.stderr, r.code
}

func mustFolio(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := folio(t, args...)
	if code != 0 {
		t.Fatalf("folio %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

type logEntry struct {
	Label string `json:"label"`
	Hash  string `json:"hash"`
}

func logOf(t *testing.T, data, doc string) (string, []logEntry) {
	t.Helper()
	out := mustFolio(t, "--data", data, "log", doc, "--format", "json")
	var es []logEntry
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		t.Fatalf("log %s: %v\n%s", doc, err, out)
	}
	return out, es
}

// history makes docs documents with a few checkpoints each through the CLI.
func history(t *testing.T, data, dir string, docs, saves int) []string {
	t.Helper()
	mustFolio(t, "--data", data, "init")
	var ids []string
	for d := 1; d <= docs; d++ {
		id := fmt.Sprintf("doc%d", d)
		md := filepath.Join(dir, id+".md")
		body := fmt.Sprintf("# Essay %d\n\nFirst paragraph of essay %d.\n\n```go\nfmt.Println(%d)\n```\n", d, d, d)
		os.WriteFile(md, []byte(body), 0o644)
		mustFolio(t, "--data", data, "doc", "new", "--id", id, "--title", fmt.Sprintf("Essay %d", d), "--from", md)
		for s := 1; s <= saves; s++ {
			body += fmt.Sprintf("\nAddition %d to essay %d, with café and 数据.\n", s, d)
			os.WriteFile(md, []byte(body), 0o644)
			mustFolio(t, "--data", data, "doc", "save", id, "--from", md, "--checkpoint", "-m", fmt.Sprintf("save %d", s))
		}
		ids = append(ids, id)
	}
	return ids
}

func TestPackCommandsEndToEnd(t *testing.T) {
	t.Setenv("FOLIO_USER", "ada")
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	docs := history(t, src, tmp, 3, 3)
	full := filepath.Join(tmp, "full.fpack")

	_, errs, code := folio(t, "--data", src, "pack", "export", "-o", full)
	if code != 0 || !strings.Contains(errs, "and 3 heads") {
		t.Fatalf("export: exit %d\n%s", code, errs)
	}
	out := mustFolio(t, "pack", "verify", full)
	if !strings.Contains(out, "valid folio pack") || !strings.Contains(out, "12 versions") {
		t.Fatalf("verify:\n%s", out)
	}

	// Restore into an empty store: log and show identical, fsck clean.
	mustFolio(t, "--data", dst, "init")
	out = mustFolio(t, "--data", dst, "pack", "import", full)
	if !strings.Contains(out, "3 created") {
		t.Fatalf("import:\n%s", out)
	}
	for _, doc := range docs {
		srcLog, entries := logOf(t, src, doc)
		dstLog, _ := logOf(t, dst, doc)
		if srcLog != dstLog {
			t.Fatalf("log %s differs after restore:\n%s\nvs\n%s", doc, srcLog, dstLog)
		}
		for _, e := range entries {
			a := mustFolio(t, "--data", src, "show", doc+"@"+e.Label, "--format", "json")
			b := mustFolio(t, "--data", dst, "show", doc+"@"+e.Label, "--format", "json")
			if a != b {
				t.Fatalf("show %s@%s differs after restore", doc, e.Label)
			}
		}
	}
	if out, errs, code := folio(t, "--data", dst, "fsck"); code != 0 {
		t.Fatalf("fsck after restore: exit %d\n%s%s", code, out, errs)
	}
	out = mustFolio(t, "--data", dst, "pack", "import", full)
	if !strings.Contains(out, "0 new") || !strings.Contains(out, "3 unchanged") {
		t.Fatalf("second import:\n%s", out)
	}

	// Incremental: the mirror's heads as haves; two new checkpoints hold
	// 2 versions, 2 txns and the changed blocks only.
	heads := mustFolio(t, "--data", dst, "pack", "heads")
	haveFile := filepath.Join(tmp, "haves")
	os.WriteFile(haveFile, []byte(heads), 0o644)
	md := filepath.Join(tmp, "doc2.md")
	b, _ := os.ReadFile(md)
	for i := 0; i < 2; i++ {
		b = append(b, fmt.Sprintf("\nLate addition %d.\n", i)...)
		os.WriteFile(md, b, 0o644)
		mustFolio(t, "--data", src, "doc", "save", "doc2", "--from", md, "--checkpoint")
	}
	inc := filepath.Join(tmp, "inc.fpack")
	_, errs, code = folio(t, "--data", src, "pack", "export", "--have", haveFile, "-o", inc)
	if code != 0 {
		t.Fatal(errs)
	}
	vr := mustFolio(t, "pack", "verify", inc)
	if !strings.Contains(vr, "(2 versions, 2 txns, ") || !strings.Contains(errs, "exported ") {
		t.Fatalf("incremental pack:\n%s%s", vr, errs)
	}
	if n := regexp.MustCompile(`\((\d+) versions?, (\d+) txns?, (\d+) contents?\)`).FindStringSubmatch(vr); n == nil || n[3] == "0" || len(n[3]) > 1 {
		t.Fatalf("incremental pack should hold a few new contents: %s", vr)
	}
	out = mustFolio(t, "--data", dst, "pack", "import", inc)
	if !strings.Contains(out, "1 forwarded") {
		t.Fatalf("incremental import:\n%s", out)
	}
	if a, _ := logOf(t, src, "doc2"); a != func() string { s, _ := logOf(t, dst, "doc2"); return s }() {
		t.Fatal("log doc2 differs after incremental import")
	}

	// A damaged pack: exit 5, the byte offset named, nothing moved.
	data, _ := os.ReadFile(full)
	data[len(data)/2] ^= 1
	bad := filepath.Join(tmp, "bad.fpack")
	os.WriteFile(bad, data, 0o644)
	before := mustFolio(t, "--data", dst, "pack", "heads")
	_, errs, code = folio(t, "--data", dst, "pack", "import", bad)
	if code != exitInvalid || !strings.Contains(errs, "at byte") {
		t.Fatalf("damaged pack: exit %d\n%s", code, errs)
	}
	if after := mustFolio(t, "--data", dst, "pack", "heads"); after != before {
		t.Fatal("a damaged pack moved heads")
	}

	// Diverged history: refused with exit 4, unless --into backup/NAME.
	b = append(b, "\nOnly in the mirror.\n"...)
	os.WriteFile(md, b, 0o644)
	mustFolio(t, "--data", dst, "doc", "save", "doc2", "--from", md, "--checkpoint")
	os.WriteFile(md, append(b[:len(b)-len("\nOnly in the mirror.\n")], "\nOnly in the source.\n"...), 0o644)
	mustFolio(t, "--data", src, "doc", "save", "doc2", "--from", md, "--checkpoint")
	mustFolio(t, "--data", src, "pack", "export", "-o", full)
	before = mustFolio(t, "--data", dst, "pack", "heads")
	_, errs, code = folio(t, "--data", dst, "pack", "import", full)
	if code != exitConflict || !strings.Contains(errs, "docs/doc2/head") || !strings.Contains(errs, "--into backup/NAME") {
		t.Fatalf("diverged import: exit %d\n%s", code, errs)
	}
	if after := mustFolio(t, "--data", dst, "pack", "heads"); after != before {
		t.Fatal("a refused import moved heads")
	}
	out = mustFolio(t, "--data", dst, "pack", "import", full, "--into", "backup/nightly")
	if !strings.Contains(out, "3 set") {
		t.Fatalf("import --into:\n%s", out)
	}
	if heads := mustFolio(t, "--data", dst, "pack", "heads"); !strings.Contains(heads, " backup/nightly/docs/doc2/head\n") {
		t.Fatalf("heads after --into:\n%s", heads)
	}
	if _, errs, code = folio(t, "--data", dst, "pack", "import", full, "--into", "nightly"); code != exitConflict || !strings.Contains(errs, "backup/NAME") {
		t.Fatalf("--into without backup/: exit %d %s", code, errs)
	}
	if _, _, code = folio(t, "pack", "import"); code != exitUsage {
		t.Fatalf("import without FILE: exit %d", code)
	}
}

func TestExportGitMatchesShow(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Setenv("FOLIO_USER", "ada")
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	docs := history(t, src, tmp, 2, 3)
	stream := filepath.Join(tmp, "history.fi")
	_, errs, code := folio(t, "--data", src, "export", "git", "-o", stream)
	if code != 0 || !strings.Contains(errs, "2 documents as 8 commits") {
		t.Fatalf("export git: exit %d\n%s", code, errs)
	}
	repo := filepath.Join(tmp, "git")
	gitRun := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+tmp)
		if stdin != "" {
			f, _ := os.Open(stdin)
			defer f.Close()
			cmd.Stdin = f
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	os.MkdirAll(repo, 0o755)
	gitRun("", "init", "-q", "--initial-branch=main")
	gitRun(stream, "fast-import", "--quiet")
	gitRun("", "fsck", "--strict")
	log := gitRun("", "log", "--format=%H %(trailers:key=Folio-Document,valueonly,separator=) %(trailers:key=Folio-Version,valueonly,separator=)")
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 8 {
		t.Fatalf("git log: %d commits\n%s", len(lines), log)
	}
	compared := 0
	for _, l := range lines {
		f := strings.Fields(l)
		commit, doc, label := f[0], f[1], f[2]
		want := mustFolio(t, "--data", src, "show", doc+"@"+label, "--format", "json")
		got := gitRun("", "show", commit+":docs/"+doc+".json")
		if got != want {
			t.Fatalf("%s@%s: git show differs from folio show:\n%q\n%q", doc, label, got, want)
		}
		md := gitRun("", "show", commit+":docs/"+doc+".md")
		if !strings.Contains(md, "# ") && !strings.Contains(md, "Essay") {
			t.Fatalf("%s@%s markdown:\n%s", doc, label, md)
		}
		compared++
	}
	if compared != 8 || len(docs) != 2 {
		t.Fatal("not every commit compared")
	}
}
