package specdoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = "# Title\n" +
	"\n" +
	"Text with `code`.\n" +
	"\n" +
	"<!-- check: invalid maxBlocks=3 note=\"two words\" -->\n" +
	"```json\n" +
	"{\"a\": 1}\n" +
	"```\n" +
	"\n" +
	"```json\n" +
	"{\"b\": 2}\n" +
	"{\"c\": 3}\n" +
	"```\n" +
	"\n" +
	"- a list item with a fence:\n" +
	"\n" +
	"  ```js\n" +
	"  let x = 1;\n" +
	"    indented();\n" +
	"  ```\n" +
	"\n" +
	"## Limits\n" +
	"\n" +
	"<!-- check: limits -->\n" +
	"| name | value |\n" +
	"|---|---:|\n" +
	"| `MaxDepth` | 4 |\n" +
	"| a \\| b | `x` |\n" +
	"\n" +
	"````text\n" +
	"```\n" +
	"not a fence end\n" +
	"````\n"

func TestParse(t *testing.T) {
	d, err := Parse("s.md", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Examples) != 4 {
		t.Fatalf("%d examples, want 4: %+v", len(d.Examples), d.Examples)
	}
	e := d.Examples[0]
	if e.Line != 6 || e.Lang != "json" || e.Text != `{"a": 1}` || e.Check.Kind != "invalid" ||
		e.Check.Arg("maxBlocks") != "3" || e.Check.Arg("note") != "two words" || e.Where() != "s.md:6" {
		t.Fatalf("first example: %+v", e)
	}
	var v struct{ A int }
	if err := e.DecodeJSON(&v); err != nil || v.A != 1 {
		t.Fatalf("DecodeJSON: %v %+v", err, v)
	}
	var w struct{ B int }
	if err := e.DecodeJSON(&w); err == nil {
		t.Fatal("DecodeJSON accepted an unknown field")
	}
	if u := d.Unannotated("json"); len(u) != 1 || u[0].Line != 10 {
		t.Fatalf("Unannotated: %+v", u)
	}
	vals, err := d.Examples[1].JSONValues()
	if err != nil || len(vals) != 2 || string(vals[1]) != `{"c":3}` {
		t.Fatalf("JSONValues: %v %q", err, vals)
	}
	if err := d.Examples[1].DecodeJSON(&struct{ B int }{}); err == nil {
		t.Fatal("DecodeJSON accepted two values")
	}
	if js := d.Examples[2]; js.Lang != "js" || js.Text != "let x = 1;\n  indented();" {
		t.Fatalf("indented fence: %q", js.Text)
	}
	if tx := d.Examples[3]; tx.Text != "```\nnot a fence end" {
		t.Fatalf("long fence: %q", tx.Text)
	}
	tb, err := d.Table("limits")
	if err != nil {
		t.Fatal(err)
	}
	if tb.Line != 25 || len(tb.Rows) != 2 || tb.Rows[1].Cell("name") != "a | b" ||
		Plain(tb.Rows[0].Cell("NAME")) != "MaxDepth" || Plain(tb.Rows[1].Cell("value")) != "x" ||
		tb.Rows[0].Cell("missing") != "" || tb.Rows[1].Where() != "s.md:28" {
		t.Fatalf("table: %+v", tb)
	}
	if err := tb.RequireColumns("name", "value"); err != nil {
		t.Fatal(err)
	}
	if err := tb.RequireColumns("default"); err == nil {
		t.Fatal("RequireColumns missed a column")
	}
	if _, err := d.Table("other"); err == nil {
		t.Fatal("Table found a kind nobody annotated")
	}
	if len(d.Headings) != 2 || d.Headings[1] != (Heading{Line: 22, Level: 2, Text: "Limits"}) {
		t.Fatalf("headings: %+v", d.Headings)
	}
}

// TestParseRefuses: a typo must not make an example silently unchecked.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"annotation before prose", "<!-- check: x -->\nprose\n", "not followed"},
		{"annotation at the end", "text\n<!-- check: x -->\n", "not followed"},
		{"annotation before a blank line", "<!-- check: x -->\n\n```json\n{}\n```\n", "not followed"},
		{"two annotations", "<!-- check: x -->\n<!-- check: y -->\n```json\n{}\n```\n", "not followed"},
		{"no kind", "<!-- check: a=b -->\n```json\n{}\n```\n", "no kind"},
		{"bad argument", "<!-- check: x y -->\n```json\n{}\n```\n", "key=value"},
		{"unterminated quote", "<!-- check: x y=\"z -->\n```json\n{}\n```\n", "unterminated"},
		{"duplicate argument", "<!-- check: x y=1 y=2 -->\n```json\n{}\n```\n", "twice"},
		{"unclosed fence", "```json\n{}\n", "never closed"},
		{"table without delimiter", "| a |\n| b |\n", "delimiter"},
		{"ragged table", "| a | b |\n|---|---|\n| 1 |\n", "header has 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.md", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	dir := t.TempDir()
	other := "# Other\n\n## Error codes\n\n## Error codes\n"
	if err := os.WriteFile(filepath.Join(dir, "other.md"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "# Spec: `v1`\n\n## Offsets: code points and U+FFFC\n\n" +
		"See [offsets](#offsets-code-points-and-ufffc), [top](#spec-v1), [codes](other.md#error-codes),\n" +
		"[again](other.md#error-codes-1), [web](https://example.com/x#y), [file](other.md).\n" +
		"| a | b |\n|---|---|\n| [bad](#nowhere) | [gone](missing.md) |\n" +
		"```md\n[in a fence](#ignored)\n```\n" +
		"[wrong](other.md#error-codes-2)\n"
	path := filepath.Join(dir, "spec.md")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	d := Load(t, path)
	if len(d.Links) != 9 {
		t.Fatalf("links: %+v", d.Links)
	}
	var got []string
	for _, err := range d.CheckLinks() {
		got = append(got, err.Error())
	}
	want := []string{"#nowhere", "missing.md", "#error-codes-2"}
	if len(got) != len(want) {
		t.Fatalf("CheckLinks: %q", got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("error %d = %q, want one about %s", i, got[i], w)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Offsets: code points and U+FFFC":        "offsets-code-points-and-ufffc",
		"`replace_selection`":                    "replace_selection",
		"insert_before, insert_after":            "insert_before-insert_after",
		"Sanitizing: what the server normalizes": "sanitizing-what-the-server-normalizes",
		"Editing a document (§1)":                "editing-a-document-1",
		"Größe 大小":                               "größe-大小",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
