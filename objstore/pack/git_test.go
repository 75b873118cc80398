package pack_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
)

func git(tb testing.TB, dir string, stdin []byte, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_TERMINAL_PROMPT=0")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func TestGitExport(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	s := openStore(t)
	docs, versions := 4, 6
	b := build(t, s, docs, versions)

	var stream bytes.Buffer
	st, err := pack.ExportGit(ctx, s, &stream, pack.GitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Commits != docs*versions || st.Docs != docs {
		t.Fatalf("stats %+v", st)
	}
	// Deterministic: a second export is byte-identical.
	var again bytes.Buffer
	if _, err := pack.ExportGit(ctx, s, &again, pack.GitOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stream.Bytes(), again.Bytes()) {
		t.Fatal("two git exports of the same store differ")
	}

	dir := filepath.Join(t.TempDir(), "repo")
	git(t, filepath.Dir(dir), nil, "init", "-q", "--initial-branch=main", dir)
	git(t, dir, stream.Bytes(), "fast-import", "--quiet")
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	log := git(t, dir, nil, "log", "--reverse", "--format=%H%x09%an%x09%at%x09%s%x09%(trailers:key=Folio-Hash,valueonly,separator=)", "main")
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != docs*versions {
		t.Fatalf("git log shows %d commits, want %d", len(lines), docs*versions)
	}
	checked := 0
	lastTime := int64(0)
	for i, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("log line %q", line)
		}
		commit, author, subject := f[0], f[1], f[3]
		id, err := objstore.ParseID(strings.TrimSpace(f[4]))
		if err != nil {
			t.Fatalf("commit %s: Folio-Hash trailer: %v", commit, err)
		}
		v, err := s.Objects.GetVersion(id)
		if err != nil {
			t.Fatal(err)
		}
		if author != v.Author || !strings.Contains(subject, v.Label) || !strings.Contains(subject, "("+v.Kind+")") {
			t.Fatalf("commit %s: author %q subject %q for %s %s", commit, author, subject, v.Label, v.Kind)
		}
		if v.Time < lastTime {
			t.Fatalf("commit %d goes back in time", i)
		}
		lastTime = v.Time
		if i%5 != 0 && i != len(lines)-1 {
			continue
		}
		path := st.Paths[v.Doc]
		got := git(t, dir, nil, "show", commit+":"+path+".json")
		want := pack.VersionJSON(b.Bodies[id])
		if got != string(want) {
			t.Fatalf("%s@%s: git show %s:%s.json =\n%s\nwant\n%s", v.Doc, v.Label, commit[:12], path, got, want)
		}
		if d, err := flowdoc.Parse([]byte(got)); err != nil || len(d.Blocks) != len(v.Blocks) {
			t.Fatalf("%s.json does not parse back: %v", path, err)
		}
		md := git(t, dir, nil, "show", commit+":"+path+".md")
		if !strings.HasPrefix(md, "---\ntitle: ") || !strings.Contains(md, "version: \""+v.Label+"\"") {
			t.Fatalf("%s.md front matter:\n%s", path, md)
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("compared only %d commits", checked)
	}
	// Slugs name the files; history follows each file.
	if st.Paths["doc-0002"] != "docs/notes-0002" {
		t.Fatalf("paths %v", st.Paths)
	}
	if n := strings.Count(git(t, dir, nil, "log", "--format=%H", "--", "docs/notes-0002.json"), "\n"); n != versions {
		t.Fatalf("git log of one document shows %d commits, want %d", n, versions)
	}

	// --doc limits the export.
	var one bytes.Buffer
	st, err = pack.ExportGit(ctx, s, &one, pack.GitOptions{Docs: []string{"doc-0003"}})
	if err != nil || st.Commits != versions {
		t.Fatalf("one document: %+v %v", st, err)
	}
}
