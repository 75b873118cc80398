package flowdoc

import (
	"bytes"
	"encoding/json"
	"flag"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	ghtml "github.com/yuin/goldmark/renderer/html"
)

var specVerbose = flag.Bool("spec.verbose", false, "print every CommonMark example the Markdown round trip does not keep")

// Floors of TestMarkdownSpec: raise them when the round trip gets better,
// never lower them.
const (
	specKeptFloor = 540 // examples whose rendering survives import -> export
	// Ceilings: lower them as they shrink, never raise them.
	specNoisyCeiling  = 1 // kept examples that raised a note anyway
	specWordsCeiling  = 6 // examples whose export loses a word a reader sees
	specSilentCeiling = 3 // lost examples that raised no note
)

// TestMarkdownSpec runs the CommonMark spec's examples
// (testdata/flowdoc/markdown/commonmark) through import -> RenderMarkdown
// and compares what goldmark renders (as HTML, normalized) from the
// original and from the exported Markdown. An example is kept when both
// render alike. It logs how many are kept and holds the count to a floor,
// and it checks the promises of docs/markdown.md on every example: no
// word a reader sees is lost, a lost example raised a note, and a kept
// one raised none.
func TestMarkdownSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenRoot, "markdown/commonmark/spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	var examples []struct {
		Markdown string `json:"markdown"`
		Example  int    `json:"example"`
		Section  string `json:"section"`
	}
	if err := json.Unmarshal(data, &examples); err != nil {
		t.Fatal(err)
	}
	if len(examples) != 652 {
		t.Fatalf("%d examples, want the 652 of CommonMark 0.31.2", len(examples))
	}
	kept, silent, noisy, wordsLost := 0, 0, 0, 0
	bySection := map[string][2]int{}
	for _, ex := range examples {
		d, notes, err := ImportMarkdown([]byte(ex.Markdown))
		if err != nil {
			t.Fatalf("example %d: %v", ex.Example, err)
		}
		out := RenderMarkdown(d)
		a, b := specHTML(t, ex.Markdown), specHTML(t, out)
		same := normalizeHTML(a) == normalizeHTML(b)
		s := bySection[ex.Section]
		s[1]++
		if same {
			kept++
			s[0]++
			if len(notes) > 0 {
				noisy++
				if *specVerbose {
					t.Logf("example %d (%s) round-trips but raised notes %+v", ex.Example, ex.Section, notes)
				}
			}
		} else {
			if len(notes) == 0 {
				silent++
			}
			if *specVerbose {
				t.Logf("example %d (%s) not kept, notes %+v\n--- markdown\n%s--- exported\n%s--- html\n%s--- html of the export\n%s",
					ex.Example, ex.Section, notes, ex.Markdown, out, a, b)
			}
		}
		bySection[ex.Section] = s
		want, got := htmlWords(a), htmlWords(b)
		for w, n := range want {
			if got[w] < n {
				wordsLost++
				if *specVerbose {
					t.Logf("example %d (%s) loses the word %q", ex.Example, ex.Section, w)
				}
				break
			}
		}
	}
	var sections []string
	for s := range bySection {
		sections = append(sections, s)
	}
	sort.Strings(sections)
	var sb strings.Builder
	for _, s := range sections {
		if v := bySection[s]; v[0] < v[1] {
			sb.WriteString("\n  " + s + ": " + strconv.Itoa(v[0]) + "/" + strconv.Itoa(v[1]))
		}
	}
	t.Logf("CommonMark spec examples kept by import -> export: %d of %d; lost without a note: %d; kept but noted: %d; losing words: %d\nsections not fully kept:%s",
		kept, len(examples), silent, noisy, wordsLost, sb.String())
	if kept < specKeptFloor {
		t.Errorf("%d examples kept, the floor is %d", kept, specKeptFloor)
	}
	if noisy > specNoisyCeiling || wordsLost > specWordsCeiling || silent > specSilentCeiling {
		t.Errorf("kept but noted %d (at most %d), losing words %d (at most %d), lost without a note %d (at most %d)",
			noisy, specNoisyCeiling, wordsLost, specWordsCeiling, silent, specSilentCeiling)
	}
}

// specHTML renders Markdown as a reader would see it, with the GFM
// extensions the import reads and raw HTML passed through.
func specHTML(t *testing.T, src string) string {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
		goldmark.WithRendererOptions(ghtml.WithUnsafe()))
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	htmlToken  = regexp.MustCompile(`<[^>]*>|[^<]+`)
	blockTagRE = regexp.MustCompile(`^</?(p|li|ul|ol|blockquote|h[1-6]|pre|table|thead|tbody|tr|td|th|hr|div|details|summary|br)\b`)
	spaceRun   = regexp.MustCompile(`\s+`)
)

// normalizeHTML makes renderings that a reader sees alike compare equal,
// as the CommonMark spec's normalizer does: white space collapses outside
// <pre>, white space next to a block tag goes, entities are decoded and
// encoded one way.
func normalizeHTML(s string) string {
	toks := htmlToken.FindAllString(s, -1)
	var out []string
	inPre := 0
	for i, tok := range toks {
		if strings.HasPrefix(tok, "<") {
			switch {
			case strings.HasPrefix(tok, "<pre"):
				inPre++
			case strings.HasPrefix(tok, "</pre"):
				inPre--
			}
			out = append(out, tok)
			continue
		}
		text := html.EscapeString(html.UnescapeString(tok))
		if inPre == 0 {
			text = spaceRun.ReplaceAllString(text, " ")
			if i == 0 || blockTagRE.MatchString(toks[i-1]) {
				text = strings.TrimLeft(text, " ")
			}
			if i == len(toks)-1 || blockTagRE.MatchString(toks[i+1]) {
				text = strings.TrimRight(text, " ")
			}
		}
		if text != "" {
			out = append(out, text)
		}
	}
	return strings.Join(out, "")
}

// htmlWords are the words of rendered HTML: its text and alt texts.
func htmlWords(h string) map[string]int {
	var text strings.Builder
	for _, m := range altAttribute.FindAllStringSubmatch(h, -1) {
		text.WriteString(" " + m[1] + " ")
	}
	text.WriteString(htmlTag.ReplaceAllString(h, " "))
	return words(html.UnescapeString(text.String()))
}
