package flowdoc

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	ghtml "github.com/yuin/goldmark/renderer/html"
)

// TestMarkdownCorpus imports the READMEs and blog posts under
// testdata/flowdoc/markdown/corpus (English and Chinese, see its README)
// and checks what a writer would notice:
//
//   - import -> render -> import gives the same document, and rendering
//     that gives the same Markdown (a fixpoint after one import);
//   - every word a reader of the source sees (as goldmark renders it to
//     HTML, image alt texts and footnotes included) is in the document,
//     as often as in the source: nothing is lost silently;
//   - every <script> and <style> element is dropped and reported;
//   - none of the artifacts reported against the old import comes back
//     (blanks kept as "&#32;" around a <br>, footnotes as "\[^1\]",
//     checkboxes as "\[ \]").
func TestMarkdownCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenRoot, "markdown/corpus/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "README.md" {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, un, err := ImportMarkdown(src)
			if err != nil {
				t.Fatal(err)
			}
			checkStructure(t, d)
			md := RenderMarkdown(d)
			back, _, err := ImportMarkdown([]byte(md))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := CanonicalJSON(back), CanonicalJSON(d); !bytes.Equal(got, want) {
				t.Fatalf("import -> render -> import changed the document\nrendered:\n%s\nfirst:  %s\nsecond: %s", md, want, got)
			}
			if again := RenderMarkdown(back); again != md {
				t.Fatalf("rendering is no fixpoint:\n%s\n----\n%s", md, again)
			}

			want, got := readerWords(t, src), documentWords(d)
			var missing []string
			for w, n := range want {
				if got[w] < n {
					missing = append(missing, w)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("words of the source missing from the document: %q\nrendered:\n%s", missing, md)
			}

			scripts := len(scriptElement.FindAllString(readerHTML(t, src), -1))
			reported := 0
			lines := bytes.Count(src, []byte("\n")) + 1
			for _, u := range un {
				if u.Kind == UnsupportedScript {
					reported++
				}
				if u.Line < 1 || u.Line > lines {
					t.Errorf("report %+v names a line outside 1..%d", u, lines)
				}
			}
			if reported != scripts {
				t.Errorf("%d script/style elements in the source, %d reported: %+v", scripts, reported, un)
			}
			for _, bad := range []string{"&#32;", `\[^`, `\[ \]`, `\[x\]`} {
				if strings.Contains(md, bad) {
					t.Errorf("rendered Markdown contains %q:\n%s", bad, md)
				}
			}
		})
	}
	if n < 4 {
		t.Fatalf("found %d corpus files, want at least 4", n)
	}
}

var (
	footnoteRef  = regexp.MustCompile(`\[\^[^\]\s]+\]:?`)
	htmlComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	altAttribute = regexp.MustCompile(`(?i)\balt="([^"]*)"`)
)

// readerHTML is the source as goldmark renders it for a reader, raw HTML
// included. Footnotes are read as text: the extension would drop a
// definition nothing references, and labels are not words a reader sees.
func readerHTML(t *testing.T, src []byte) string {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
		goldmark.WithRendererOptions(ghtml.WithUnsafe()))
	var b bytes.Buffer
	if err := md.Convert(footnoteRef.ReplaceAll(src, nil), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// readerWords are the words of the rendered source: its text and image
// alt texts, without scripts, styles and comments (dropped and reported).
func readerWords(t *testing.T, src []byte) map[string]int {
	t.Helper()
	h := htmlComment.ReplaceAllString(scriptElement.ReplaceAllString(readerHTML(t, src), ""), "")
	var text strings.Builder
	for _, m := range altAttribute.FindAllStringSubmatch(h, -1) {
		text.WriteString(" " + m[1] + " ")
	}
	text.WriteString(htmlTag.ReplaceAllString(h, " "))
	return words(html.UnescapeString(text.String()))
}

// documentWords are the words of everything a document shows.
func documentWords(d Document) map[string]int {
	var b strings.Builder
	runs := func(rs []Run) {
		for _, r := range rs {
			b.WriteString(" " + r.Text + " " + r.Equation + " ")
		}
	}
	var items func(its []ListItem)
	items = func(its []ListItem) {
		for _, it := range its {
			runs(it.RichText)
			items(it.Items)
		}
	}
	var blocks func(bs []Block)
	blocks = func(bs []Block) {
		for _, bl := range bs {
			runs(bl.RichText)
			items(bl.Items)
			for _, r := range bl.Rows {
				for _, c := range r.Cells {
					runs(c)
				}
			}
			if a := bl.Attrs; a != nil {
				b.WriteString(" " + a.Text + " " + a.Latex + " " + a.Alt + " " + a.Caption + " ")
			}
			blocks(bl.Children)
			for _, c := range bl.Cols {
				blocks(c.Blocks)
			}
		}
	}
	blocks(d.Blocks)
	return words(b.String())
}

// words counts the words of s: runs of letters and digits, and each CJK
// character on its own (CJK text has no blanks between words).
func words(s string) map[string]int {
	out := map[string]int{}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out[cur.String()]++
			cur.Reset()
		}
	}
	for _, c := range s {
		switch {
		case isCJKWide(c) && !isCJKPunct(c):
			flush()
			out[string(c)]++
		case unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.Is(unicode.Mn, c):
			cur.WriteRune(c)
		default:
			flush()
		}
	}
	flush()
	return out
}
