package flowdoc

import (
	"bytes"
	"reflect"
	"testing"
)

func TestSanitizeRuns(t *testing.T) {
	tests := []struct {
		name string
		in   []Run
		want []Run
	}{
		{"merge equal marks", []Run{{Text: "a", Marks: []Mark{Bold}}, {Text: "b", Marks: []Mark{Bold}}}, []Run{{Text: "ab", Marks: []Mark{Bold}}}},
		{"merge after mark canonicalization", []Run{{Text: "a", Marks: []Mark{Italic, Bold}}, {Text: "b", Marks: []Mark{Bold, Italic, Bold}}},
			[]Run{{Text: "ab", Marks: []Mark{Bold, Italic}}}},
		{"merge across an empty run", []Run{{Text: "a"}, {Text: ""}, {Text: "b"}}, []Run{{Text: "ab"}}},
		{"merge after dropping unknown marks", []Run{{Text: "a", Marks: []Mark{"glow"}}, {Text: "b"}}, []Run{{Text: "ab"}}},
		{"different links stay apart", []Run{{Text: "a", Link: "https://a.example"}, {Text: "b", Link: "https://b.example"}},
			[]Run{{Text: "a", Link: "https://a.example"}, {Text: "b", Link: "https://b.example"}}},
		{"equal links merge", []Run{{Text: "a", Link: "https://a.example"}, {Text: "b", Link: "https://a.example"}}, []Run{{Text: "ab", Link: "https://a.example"}}},
		{"different marks stay apart", []Run{{Text: "a", Marks: []Mark{Bold}}, {Text: "b"}}, []Run{{Text: "a", Marks: []Mark{Bold}}, {Text: "b"}}},
		{"equations never merge", []Run{{Equation: "x"}, {Equation: "x"}, {Text: "a"}}, []Run{{Equation: "x"}, {Equation: "x"}, {Text: "a"}}},
		{"canonical mark order", []Run{{Text: "a", Marks: []Mark{CodeMark, Strike, Underline, Italic, Bold}}}, []Run{{Text: "a", Marks: Marks}}},
		{"empty marks become nil", []Run{{Text: "a", Marks: []Mark{}}}, []Run{{Text: "a"}}},
		{"all empty", []Run{{}, {Text: ""}}, nil},
		{"unsafe link kept for Validate", []Run{{Text: "a", Link: "javascript:x"}}, []Run{{Text: "a", Link: "javascript:x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sanitizeRuns(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestSanitizeBlocks(t *testing.T) {
	in := Document{Blocks: []Block{
		{ID: "p", Type: Paragraph, Attrs: &Attrs{}, RichText: []Run{}},
		{ID: "t", Type: Table, Rows: []TableRow{{Cells: [][]Run{{{Text: "a"}, {Text: "b"}}, {}}}}},
		{ID: "d", Type: Details, Children: []Block{{ID: "x", Type: Paragraph, RichText: []Run{{Text: "a"}, {Text: "b", Marks: []Mark{"nope"}}}}}},
		{ID: "l", Type: List, Items: []ListItem{{RichText: []Run{{Text: "1"}, {Text: "2"}}, Items: []ListItem{}}}},
	}}
	got := Sanitize(in)
	want := Document{SchemaVersion: 1, Blocks: []Block{
		{ID: "p", Type: Paragraph},
		{ID: "t", Type: Table, Rows: []TableRow{{Cells: [][]Run{{{Text: "ab"}}, nil}}}},
		{ID: "d", Type: Details, Children: []Block{{ID: "x", Type: Paragraph, RichText: []Run{{Text: "ab"}}}}},
		{ID: "l", Type: List, Items: []ListItem{{RichText: []Run{{Text: "12"}}}}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %s\nwant %s", CanonicalJSON(got), CanonicalJSON(want))
	}
	if in.Blocks[0].Attrs == nil || len(in.Blocks[2].Children[0].RichText) != 2 {
		t.Fatal("Sanitize modified its input")
	}
	again := Sanitize(got)
	if !bytes.Equal(CanonicalJSON(again), CanonicalJSON(got)) || !reflect.DeepEqual(again, got) {
		t.Fatal("Sanitize is not idempotent")
	}
}

func TestSanitizeDoesNotAlias(t *testing.T) {
	in := mkDoc(mkPara("p", Run{Text: "a", Marks: []Mark{Bold}}))
	out := Sanitize(in)
	out.Blocks[0].RichText[0].Marks[0] = Italic
	out.Blocks[0].RichText[0].Text = "changed"
	if in.Blocks[0].RichText[0].Marks[0] != Bold || in.Blocks[0].RichText[0].Text != "a" {
		t.Fatal("Sanitize result shares memory with its input")
	}
}
