package flowdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestImportArticle(t *testing.T) {
	tests := []struct {
		name  string
		md    string
		attrs Attributes
		set   []string
		body  int      // blocks in the body
		notes []string // kinds
	}{
		{"yaml", "---\nlayout: post\ntitle: \"Moving: a \\\"story\\\"\"\ndate: 2024-03-02\ntags: [writing, \"tools, old\"]\ncategories:\n  - notes\n  - misc\nslug: moving\ndescription: >\n  Six years\n  in one file.\n---\n\nText.\n",
			Attributes{Title: `Moving: a "story"`, Tags: []string{"writing", "tools, old"}, Category: "notes", Slug: "moving", Summary: "Six years in one file."},
			[]string{"title", "summary", "slug", "category", "tags"}, 1, []string{UnsupportedFrontMatterKey, UnsupportedFrontMatterKey}},
		{"toml", "+++\ntitle = \"把博客搬回纯文本\"\ndate = 2024-05-20\ntags = [\"写作\", \"工具\"]\n[extra]\nx = 1\n+++\n\n正文。\n",
			Attributes{Title: "把博客搬回纯文本", Tags: []string{"写作", "工具"}}, []string{"title", "tags"}, 1, []string{UnsupportedFrontMatterKey, UnsupportedFrontMatterKey}},
		{"first heading is the title", "# Notes\n\nText.\n", Attributes{Title: "Notes"}, []string{"title"}, 1, nil},
		{"heading repeating the title stays", "---\ntitle: Notes\n---\n# Notes\n\nText.\n", Attributes{Title: "Notes"}, []string{"title"}, 2, nil},
		{"another heading stays", "---\ntitle: Notes\n---\n# Other\n\nText.\n", Attributes{Title: "Notes"}, []string{"title"}, 2, nil},
		{"second-level heading stays", "## Part\n\nText.\n", Attributes{}, nil, 2, nil},
		{"nothing", "Text.\n", Attributes{}, nil, 1, nil},
		{"not understood", "---\ntitle: T\n  nested: x\n---\nText.\n", Attributes{Title: "T"}, []string{"title"}, 1, []string{UnsupportedFrontMatterKey}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, notes, err := ImportArticle([]byte(tc.md), true)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Attrs, tc.attrs) || !reflect.DeepEqual(a.Set, tc.set) {
				t.Errorf("attrs %+v set %v, want %+v %v", a.Attrs, a.Set, tc.attrs, tc.set)
			}
			if len(a.Body.Blocks) != tc.body {
				t.Errorf("%d blocks, want %d: %s", len(a.Body.Blocks), tc.body, CanonicalJSON(a.Body))
			}
			var kinds []string
			for _, n := range notes {
				kinds = append(kinds, n.Kind)
			}
			if !reflect.DeepEqual(kinds, tc.notes) {
				t.Errorf("notes %+v, want kinds %v", notes, tc.notes)
			}
			// Written back, the article reads as itself.
			back, notes, err := ImportArticle([]byte(RenderArticleMarkdown(a)), true)
			if err != nil || len(notes) != 0 {
				t.Fatalf("reimport: %v %+v", err, notes)
			}
			if !reflect.DeepEqual(back.Attrs, a.Attrs) || !bytes.Equal(CanonicalJSON(back.Body), CanonicalJSON(a.Body)) {
				t.Errorf("round trip:\n%s\ngave %#v %s\nwant %#v %s", RenderArticleMarkdown(a), back.Attrs, CanonicalJSON(back.Body), a.Attrs, CanonicalJSON(a.Body))
			}
		})
	}
	// Without titleFromHeading the first heading stays in the body.
	if a, _, _ := ImportArticle([]byte("# Notes\n\nText.\n"), false); a.Attrs.Title != "" || len(a.Body.Blocks) != 2 {
		t.Errorf("without titleFromHeading: %+v %s", a.Attrs, CanonicalJSON(a.Body))
	}
	// Lines after the front matter are reported where they are.
	_, notes, _ := ImportArticle([]byte("---\ntitle: T\n---\n\n[x](javascript:y)\n"), true)
	if len(notes) != 1 || notes[0].Line != 5 {
		t.Errorf("notes %+v, want a refused link on line 5", notes)
	}
}

// The corpus's blog posts keep their attributes and body through
// ImportArticle -> RenderArticleMarkdown -> ImportArticle.
func TestImportArticleCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "markdown/corpus/*-blog.md"))
	if len(files) < 2 {
		t.Fatalf("found %d blog posts", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a, _, err := ImportArticle(src, true)
		if err != nil {
			t.Fatal(err)
		}
		if a.Attrs.Title == "" || len(a.Attrs.Tags) != 2 {
			t.Errorf("%s: attributes %+v, want a title and two tags", f, a.Attrs)
		}
		if len(a.Body.Blocks) > 0 && a.Body.Blocks[0].Type == Code {
			t.Errorf("%s: the front matter became a code block", f)
		}
		back, _, err := ImportArticle([]byte(RenderArticleMarkdown(a)), true)
		if err != nil || !reflect.DeepEqual(back.Attrs, a.Attrs) || !bytes.Equal(CanonicalJSON(back.Body), CanonicalJSON(a.Body)) {
			t.Errorf("%s: round trip changed the article: %+v", f, back.Attrs)
		}
	}
}
