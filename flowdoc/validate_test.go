package flowdoc

import (
	"errors"
	"strings"
	"testing"
)

func mkPara(id string, runs ...Run) Block { return Block{ID: id, Type: Paragraph, RichText: runs} }

func mkDoc(bs ...Block) Document { return Document{SchemaVersion: 1, Blocks: bs} }

func problemList(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// TestValidateRules checks one rule per row: the document must report
// exactly the problems listed (path and a fragment of the rule).
func TestValidateRules(t *testing.T) {
	text := func(s string) []Run { return []Run{{Text: s}} }
	tests := []struct {
		name string
		doc  Document
		want []string // "path: rule fragment"
	}{
		{"valid paragraph", mkDoc(mkPara("p1", Run{Text: "x"})), nil},
		{"schema version", Document{SchemaVersion: 3}, []string{"schemaVersion: schema version must be 1"}},
		{"id required", mkDoc(mkPara("", Run{Text: "x"})), []string{"blocks[0].id: block id is required"}},
		{"id charset", mkDoc(mkPara("a.b", Run{Text: "x"})), []string{"blocks[0].id: block id must be 1-64"}},
		{"id length", mkDoc(mkPara(strings.Repeat("a", 65), Run{Text: "x"})), []string{"blocks[0].id: block id must be 1-64"}},
		{"id unique nested", mkDoc(mkPara("a"), Block{ID: "d", Type: Details, Children: []Block{mkPara("a")}}),
			[]string{`blocks[1].children[0].id: block id "a" is already used at blocks[0]`}},
		{"type required", mkDoc(Block{ID: "a"}), []string{"blocks[0].type: block type is required"}},
		{"type known", mkDoc(Block{ID: "a", Type: "blink"}), []string{`blocks[0].type: unknown block type "blink"`}},
		{"heading level low", mkDoc(Block{ID: "h", Type: Heading, RichText: text("x")}), []string{"blocks[0].attrs.level: heading level must be 1..6"}},
		{"list start on bullets", mkDoc(Block{ID: "l", Type: List, Attrs: &Attrs{Start: 3}, Items: []ListItem{{RichText: text("a")}}}), []string{"blocks[0].attrs.start: a bullet list has no start; set ordered"}},
		{"list start negative", mkDoc(Block{ID: "l", Type: List, Attrs: &Attrs{Ordered: true, Start: -1}, Items: []ListItem{{RichText: text("a")}}}), []string{"blocks[0].attrs.start: list start must be 2..999999999 (absent is 1)"}},
		{"heading level high", mkDoc(Block{ID: "h", Type: Heading, Attrs: &Attrs{Level: 7}}), []string{"blocks[0].attrs.level: heading level must be 1..6"}},
		{"attr not for type", mkDoc(Block{ID: "q", Type: Quote, Attrs: &Attrs{Ordered: true}}), []string{"blocks[0].attrs.ordered: a quote block has no ordered attribute"}},
		{"field not for type", mkDoc(Block{ID: "e", Type: Equation, Attrs: &Attrs{Latex: "x"}, RichText: text("y")}), []string{"blocks[0].richText: an equation block has no richText"}},
		{"list needs items", mkDoc(Block{ID: "l", Type: List}), []string{"blocks[0].items: a list needs at least one item"}},
		{"code language", mkDoc(Block{ID: "c", Type: Code, Attrs: &Attrs{Language: strings.Repeat("x", 33)}}), []string{"blocks[0].attrs.language: code language"}},
		{"equation latex", mkDoc(Block{ID: "e", Type: Equation}), []string{"blocks[0].attrs.latex: an equation needs latex"}},
		{"media kind", mkDoc(Block{ID: "m", Type: Media, Attrs: &Attrs{Kind: "gif", Src: "https://x.example/a.gif"}}), []string{"blocks[0].attrs.kind: media kind must be image or video"}},
		{"media src", mkDoc(Block{ID: "m", Type: Media, Attrs: &Attrs{Kind: "image", Src: "javascript:alert(1)"}}), []string{"blocks[0].attrs.src: URL scheme must be http or https"}},
		{"table rows", mkDoc(Block{ID: "t", Type: Table}), []string{"blocks[0].rows: a table needs at least one row"}},
		{"table columns", mkDoc(Block{ID: "t", Type: Table, Rows: []TableRow{{Cells: [][]Run{text("a"), text("b")}}, {Cells: [][]Run{text("c")}}}}),
			[]string{"blocks[0].rows[1].cells: row has 1 cell(s) but the first row has 2"}},
		{"callout icon", mkDoc(Block{ID: "c", Type: Callout, Attrs: &Attrs{Icon: strings.Repeat("★", 17)}}), []string{"blocks[0].attrs.icon: callout icon must be at most 16"}},
		{"details depth", mkDoc(Block{ID: "d1", Type: Details, Children: []Block{{ID: "d2", Type: Details, Children: []Block{{ID: "d3", Type: Details, Children: []Block{{ID: "d4", Type: Details, Children: []Block{mkPara("p")}}}}}}}}),
			[]string{"blocks[0].children[0].children[0].children[0].children[0]: blocks nest deeper than 4"}},
		{"columns count", mkDoc(Block{ID: "k", Type: Columns}), []string{"blocks[0].columns: a columns block needs 1..6 columns"}},
		{"columns nested path", mkDoc(Block{ID: "k", Type: Columns, Cols: []Column{{}, {Blocks: []Block{{ID: "h", Type: Heading, Attrs: &Attrs{Level: 7}}}}}}),
			[]string{"blocks[0].columns[1].blocks[0].attrs.level: heading level must be 1..6"}},
		{"bookmark url", mkDoc(Block{ID: "b", Type: Bookmark, Attrs: &Attrs{URL: "ftp://x.example/"}}), []string{"blocks[0].attrs.url: URL scheme must be http or https"}},
		{"file name and size", mkDoc(Block{ID: "f", Type: File, Attrs: &Attrs{Src: "https://x.example/f", Size: -3}}),
			[]string{"blocks[0].attrs.name: a file needs a name", "blocks[0].attrs.size: file size must not be negative"}},
		{"embed url", mkDoc(Block{ID: "e", Type: Embed}), []string{"blocks[0].attrs.url: an embed needs a url"}},
		{"run text xor equation", mkDoc(mkPara("p", Run{Text: "a", Equation: "b"})), []string{"blocks[0].richText[0]: a run is either text or an inline equation"}},
		{"run empty", mkDoc(mkPara("p", Run{})), []string{"blocks[0].richText[0]: a run needs text or an equation"}},
		{"run mark unknown", mkDoc(mkPara("p", Run{Text: "a", Marks: []Mark{"shout"}})), []string{`blocks[0].richText[0].marks[0]: unknown mark "shout"`}},
		{"run link scheme", mkDoc(mkPara("p", Run{Text: "a"}, Run{Text: "b"}, Run{Text: "c", Link: "javascript:x"})), []string{"blocks[0].richText[2].link: link scheme must be http, https or mailto"}},
		{"run utf8", mkDoc(mkPara("p", Run{Text: "a\xff"})), []string{"blocks[0].richText[0]: text must be valid UTF-8"}},
		{"list item link", mkDoc(Block{ID: "l", Type: List, Items: []ListItem{{RichText: text("a"), Items: []ListItem{{RichText: []Run{{Text: "b", Link: "data:x"}}}}}}}),
			[]string{"blocks[0].items[0].items[0].richText[0].link: link scheme must be"}},
		{"every problem reported", mkDoc(mkPara(""), Block{ID: "h", Type: Heading}, mkPara("p", Run{Text: "x", Link: "vbscript:x"})),
			[]string{"blocks[0].id: block id is required", "blocks[1].attrs.level: heading level", "blocks[2].richText[0].link: link scheme"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemList(Validate(tt.doc, DefaultLimits))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %q", len(got), got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestURLPolicy(t *testing.T) {
	tests := []struct {
		url            string
		link, resource bool // allowed as a link, as a resource URL
	}{
		{"https://example.com", true, true},
		{"http://example.com/a?b=c#d", true, true},
		{"HTTPS://EXAMPLE.COM/", true, true},
		{"https://例え.jp/パス", true, true},
		{"https://[::1]:8080/x", true, true},
		{"mailto:someone@example.com", true, false},
		{"mailto:?subject=x", false, false},
		{"javascript:alert(1)", false, false},
		{"JavaScript:alert(1)", false, false},
		{"java\tscript:alert(1)", false, false},
		{"data:text/html;base64,PHNjcmlwdD4=", false, false},
		{"vbscript:msgbox", false, false},
		{"file:///etc/passwd", false, false},
		{"ftp://example.com/x", false, false},
		{"/relative/path", true, false},
		{"relative", true, false},
		{"../post/", true, false},
		{"?page=2", true, false},
		{"//example.com/x", false, false},
		{"/\\example.com/x", false, false},
		{"%zz", false, false},
		{"#anchor", true, false},
		{"https://", false, false},
		{"https:example.com", false, false},
		{"https://u:p@example.com", false, false},
		{"https://example.com/\x00", false, false},
		{"https://example.com/" + strings.Repeat("a", MaxURLLength), false, false},
	}
	for _, tt := range tests {
		if got := checkLink(tt.url) == ""; got != tt.link {
			t.Errorf("link %q allowed = %v, want %v (%s)", tt.url, got, tt.link, checkLink(tt.url))
		}
		if got := checkResource(tt.url) == ""; got != tt.resource {
			t.Errorf("resource %q allowed = %v, want %v (%s)", tt.url, got, tt.resource, checkResource(tt.url))
		}
		// A media src is a resource that may be relative as links may.
		media := tt.resource || tt.link && !strings.HasPrefix(tt.url, "mailto:")
		if got := checkMediaSrc(tt.url) == ""; got != media {
			t.Errorf("media src %q allowed = %v, want %v (%s)", tt.url, got, media, checkMediaSrc(tt.url))
		}
	}
}

func TestLimits(t *testing.T) {
	d := mkDoc(mkPara("a", Run{Text: "x"}), Block{ID: "d", Type: Details, Children: []Block{mkPara("b"), mkPara("c")}})
	if ps := Validate(d, Limits{MaxBlocks: 4}); len(ps) != 0 {
		t.Fatalf("4 blocks within a limit of 4: %v", ps)
	}
	ps := Validate(d, Limits{MaxBlocks: 3})
	if len(ps) != 1 || ps[0].Path != "$" || !strings.Contains(ps[0].Rule, "4 blocks") {
		t.Fatalf("nested blocks must count against MaxBlocks: %v", ps)
	}
	size := len(CanonicalJSON(d))
	if ps := Validate(d, Limits{MaxBytes: size}); len(ps) != 0 {
		t.Fatalf("document of exactly MaxBytes: %v", ps)
	}
	if ps := Validate(d, Limits{MaxBytes: size - 1}); len(ps) != 1 || !strings.Contains(ps[0].Rule, "bytes of canonical JSON") {
		t.Fatalf("byte limit: %v", ps)
	}
	if ps := Validate(d, Limits{}); len(ps) != 0 {
		t.Fatalf("zero limits mean the defaults: %v", ps)
	}
}

func TestNormalizeError(t *testing.T) {
	_, err := Normalize(mkDoc(Block{ID: "h", Type: Heading, Attrs: &Attrs{Level: 9}}), DefaultLimits)
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("Normalize error %T %v is not a *ValidationError matching ErrInvalid", err, err)
	}
	if want := "invalid document: blocks[0].attrs.level: heading level must be 1..6"; err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
}

func TestParseStrict(t *testing.T) {
	tests := []struct {
		in   string
		want string // first problem, "" for success
	}{
		{`{"schemaVersion":1,"blocks":[]}`, ""},
		{`{"blocks":null}`, ""},
		{`{"schemaVersion":0,"blocks":[{"id":"a","type":"paragraph","richText":null,"attrs":null}]}`, ""},
		{`{"schemaVersion":2}`, "schemaVersion: schema version must be 1"},
		{`{"schemaVersion":"1"}`, "schemaVersion: must be a number"},
		{`{"blocks":[{"id":"a","type":"paragraph","richText":[{"text":"x","bold":true}]}]}`, "blocks[0].richText[0].bold: unknown field in run"},
		{`{"blocks":[{"id":"a","type":"table","rows":[{"cells":[[{"text":"x"}]],"span":2}]}]}`, "blocks[0].rows[0].span: unknown field in table row"},
		{`{"blocks":[{"id":"a","type":"list","items":[{"richText":[],"checked":true}]}]}`, "blocks[0].items[0].checked: unknown field in list item"},
		{`{"blocks":[{"id":"a","type":"columns","columns":[{"blocks":[],"width":2}]}]}`, "blocks[0].columns[0].width: unknown field in column"},
		{`{"blocks":[null]}`, "blocks[0]: block must be a JSON object"},
		{`{"blocks":[{"id":"a","type":"file","attrs":{"size":1e3}}]}`, "blocks[0].attrs.size: must be an integer"},
		{`{"Blocks":[]}`, "Blocks: unknown field in document"},
		{``, "$: not JSON: empty input"},
		{`{"blocks":[]}x`, "$: unexpected data after the document"},
		{`{"blocks":[{"id":"a","id":"b","type":"paragraph"}]}`, "blocks[0].id: duplicate field"},
		{"{\"blocks\":[{\"id\":\"a\xff\"}]}", "$: input is not valid UTF-8"},
		{`{"blocks":[{"id":"\ud800"}]}`, "$: a \\u escape is half of a UTF-16 surrogate pair (a lone surrogate is not a character)"},
		{`{"blocks":[{"id":"\udc00\ud800"}]}`, "$: a \\u escape is half of a UTF-16 surrogate pair (a lone surrogate is not a character)"},
		{`{"blocks":[{"id":"\ud800\u0041"}]}`, "$: a \\u escape is half of a UTF-16 surrogate pair (a lone surrogate is not a character)"},
		{`{"blocks":[{"id":"\ud83d\ude00","type":"paragraph"}]}`, ""},
		{`{"blocks":[{"id":"a"`, "$: not JSON: unexpected end of input"},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), "$: not JSON: nesting deeper than 100 levels"},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.in))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Parse(%s): %v", tt.in, err)
			} else if d.SchemaVersion != SchemaVersion {
				t.Errorf("Parse(%s): schema version %d, want 1", tt.in, d.SchemaVersion)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) == 0 {
			t.Errorf("Parse(%s) = %v, want a *ValidationError", tt.in, err)
			continue
		}
		if got := ve.Problems[0].String(); got != tt.want {
			t.Errorf("Parse(%s) first problem %q, want %q", tt.in, got, tt.want)
		}
	}
}
