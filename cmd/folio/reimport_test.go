package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// reimportParas are the blocks of the article TestReimportKeepsBlockIDs
// writes: 60 blocks, a heading every tenth, paragraphs of their own words.
func reimportParas() []string {
	var out []string
	for i := 0; i < 60; i++ {
		switch {
		case i%10 == 0:
			out = append(out, fmt.Sprintf("## Part %c%c", 'a'+i/10, 'k'+i/10))
		case i == 45:
			out = append(out, "In order to win, the team made a decision.")
		default:
			var w []string
			for k := 0; k < 12; k++ {
				w = append(w, fmt.Sprintf("w%dx%d", i, k))
			}
			out = append(out, strings.Join(w, " ")+".")
		}
	}
	return out
}

// A Markdown file saved again keeps the ids of the blocks it still has:
// delete, insert, move, edit and split paragraphs, and diff, history,
// suggestions and restore --block see exactly those changes, directly and
// through a daemon alike.
func TestReimportKeepsBlockIDs(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	paras := reimportParas()
	v1 := writeFile(t, tmp, "v1.md", "---\ntitle: Reimport\ntags: [a, b]\n---\n\n"+strings.Join(paras, "\n\n")+"\n")
	noFront := writeFile(t, tmp, "nofront.md", strings.Join(paras, "\n\n")+"\n")

	edited := slices.Clone(paras)
	edited[31] = strings.Replace(edited[31], "w31x5", "changed", 1)
	half := strings.Fields(edited[51])
	split := []string{strings.Join(half[:6], " "), strings.Join(half[6:], " ")}
	moved := edited[21]
	var v2 []string
	for i, p := range edited {
		switch i {
		case 5, 21: // deleted; moved below
			continue
		case 10:
			v2 = append(v2, p, "A brand new paragraph nobody wrote before.")
		case 40:
			v2 = append(v2, p, moved)
		case 51:
			v2 = append(v2, split...)
		default:
			v2 = append(v2, p)
		}
	}
	v2file := writeFile(t, tmp, "v2.md", strings.Join(v2, "\n\n")+"\n")

	dirA := filepath.Join(tmp, "a")
	if r := runCLI("--data", dirA, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	if r := runCLI("--data", dirA, "user", "add", "admin", "--admin"); r.code != 0 {
		t.Fatalf("user add: %+v", r)
	}
	d := startDaemon(t, filepath.Join(tmp, "b"), "")
	defer d.stop(t)
	for _, mode := range []struct {
		name string
		args []string
	}{{"direct", []string{"--data", dirA}}, {"daemon", []string{"--server", d.url, "--token", d.token}}} {
		t.Run(mode.name, func(t *testing.T) {
			cli := func(args ...string) cliResult {
				t.Helper()
				r := runCLI(append(mode.args, args...)...)
				if r.code != 0 {
					t.Fatalf("folio %s: %+v", strings.Join(args, " "), r)
				}
				return r
			}
			type blockView struct{ ID, Type, Text string }
			blocks := func(ref string) []blockView {
				var bs []blockView
				if err := json.Unmarshal([]byte(cli("blocks", ref, "--format", "json").stdout), &bs); err != nil {
					t.Fatal(err)
				}
				return bs
			}
			idOf := func(bs []blockView, prefix string) string {
				t.Helper()
				if len(prefix) > 24 {
					prefix = prefix[:24] // blocks shows the first words
				}
				for _, b := range bs {
					if strings.HasPrefix(b.Text, prefix) {
						return b.ID
					}
				}
				t.Fatalf("no block starts %q", prefix)
				return ""
			}
			type change struct {
				Kind, BlockID string
				Moved         bool
			}
			diff := func(from, to string) []change {
				var v struct{ Changes []change }
				if err := json.Unmarshal([]byte(cli("diff", "doc1", from, to, "--format", "json").stdout), &v); err != nil {
					t.Fatal(err)
				}
				return v.Changes
			}

			cli("doc", "new", "--id", "doc1", "--title", "Reimport", "--from", v1)
			before := blocks("doc1")
			// The reported case: the same article without its front
			// matter changes no block (and, having no front matter, none
			// of the attributes either).
			if out := cli("doc", "save", "doc1", "--from", noFront, "--checkpoint").stdout; !strings.Contains(out, "nothing to seal (head is v1.r0)") {
				t.Errorf("saving the article without its front matter: %q, want nothing to seal", out)
			}
			if show := cli("show", "doc1", "--format", "md").stdout; !strings.HasPrefix(show, "---\ntitle: \"Reimport\"\ntags: [\"a\", \"b\"]\n---\n\n## Part ak\n") {
				t.Errorf("show --format md does not start with the article's front matter:\n%.200s", show)
			}

			// A suggestion on a block the re-save leaves alone.
			target := idOf(before, "In order to win")
			sg := jsonID(t, cli("assist", "doc1", "--scope", "block:"+target, "--editing-preset", "six-rules", "--wait", "--format", "json"), "suggestion", "id")

			cli("doc", "save", "doc1", "--from", v2file, "--checkpoint")
			after := blocks("doc1")
			if len(after) != len(before)-1+1+1 { // 5 gone, new and split half added
				t.Errorf("%d blocks after the re-save, want %d", len(after), len(before))
			}
			got := diff("v1.r0", "v1.r1")
			newID := idOf(after, "A brand new")
			secondHalf := idOf(after, split[1])
			want := []change{
				{"deleted", idOf(before, paras[5]), false},
				{"added", newID, false},
				{"modified", idOf(before, paras[31]), false},
				{"moved", idOf(before, paras[21]), true},
				{"modified", idOf(before, paras[51]), false},
				{"added", secondHalf, false},
			}
			// Changes come in the order of the new document.
			if !slices.Equal(got, want) {
				t.Errorf("diff after the re-save:\n got %+v\nwant %+v", got, want)
			}
			if idOf(after, split[0]) != idOf(before, paras[51]) {
				t.Errorf("the first half of a split paragraph has a new id")
			}
			for _, b := range before {
				if b.ID == newID || b.ID == secondHalf {
					t.Errorf("new block took the id %s of an old one", b.ID)
				}
			}
			// An untouched block has one revision, also after two saves.
			var hist []any
			if err := json.Unmarshal([]byte(cli("history", "doc1", idOf(after, paras[33]), "--format", "json").stdout), &hist); err != nil || len(hist) != 1 {
				t.Errorf("history of an untouched block: %d revisions (%v), want 1", len(hist), err)
			}
			// The suggestion still names its block, which still holds the
			// text it was made for (its accept is refused as stale all the
			// same: the article moved on).
			if s := cli("suggestion", "show", sg, "--format", "json").stdout; !strings.Contains(s, `"blockId": "`+target+`"`) {
				t.Errorf("suggestion show does not name %s:\n%s", target, s)
			}
			if idOf(after, "In order to win") != target {
				t.Errorf("block %s no longer holds the text the suggestion was made for", target)
			}
			// restore --block brings the edited paragraph back in place,
			// once.
			cli("restore", "doc1", "v1.r0", "--block", idOf(before, paras[31]))
			md := cli("show", "doc1").stdout
			if strings.Count(md, paras[31]) != 1 || strings.Contains(md, "changed") {
				t.Errorf("restore --block: the paragraph is there %d times:\n%s", strings.Count(md, paras[31]), md)
			}
			if got := len(blocks("doc1")); got != len(after) {
				t.Errorf("restore --block changed the number of blocks: %d, want %d", got, len(after))
			}
		})
	}
}

// A Markdown file's front matter fills the article's attributes (its
// first heading is the title when the front matter has none), unknown
// keys are notes, and show --format md writes them back.
func TestMarkdownFrontMatterAttributes(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	if r := runCLI("--data", data, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	md := writeFile(t, tmp, "post.md", "---\ntitle: \"Plain text: a year\"\nslug: plain-text\ntags: [writing, tools]\nlayout: post\n---\n\nBody.\n")
	r := runCLI("--data", data, "doc", "new", "--id", "p", "--from", md)
	if r.code != 0 || !strings.Contains(r.stderr, "note: "+md+":5: front-matter-key has no block: layout: post") || strings.Contains(r.stderr, "folio:") {
		t.Fatalf("doc new from front matter: %+v", r)
	}
	r = runCLI("--data", data, "show", "p", "--format", "md")
	want := "---\ntitle: \"Plain text: a year\"\nslug: \"plain-text\"\ntags: [\"writing\", \"tools\"]\n---\n\nBody.\n"
	if r.stdout != want {
		t.Errorf("show --format md:\n%s\nwant\n%s", r.stdout, want)
	}
	// Saved again with another title, the title changes and nothing else.
	md2 := writeFile(t, tmp, "post2.md", "# Another year\n\nBody.\n")
	if r := runCLI("--data", data, "doc", "save", "p", "--from", md2, "--checkpoint"); r.code != 0 || r.stderr != "" {
		t.Fatalf("save: %+v", r)
	}
	r = runCLI("--data", data, "show", "p", "--format", "md")
	if want := "---\ntitle: \"Another year\"\nslug: \"plain-text\"\ntags: [\"writing\", \"tools\"]\n---\n\nBody.\n"; r.stdout != want {
		t.Errorf("after the save:\n%s\nwant\n%s", r.stdout, want)
	}
	// Without a title anywhere, doc new asks for one.
	bare := writeFile(t, tmp, "bare.md", "Body.\n")
	if r := runCLI("--data", data, "doc", "new", "--from", bare); r.code != exitUsage || !strings.Contains(r.stderr, "needs --title") {
		t.Errorf("doc new without a title: %+v", r)
	}
}
