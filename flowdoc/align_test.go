package flowdoc

import (
	"strings"
	"testing"
)

func TestAlign(t *testing.T) {
	cur := Document{Blocks: []Block{
		para("a", "alpha beta gamma delta epsilon"),
		para("b", "one two three four five six"),
		{ID: "h", Type: Heading, Attrs: &Attrs{Level: 2}, RichText: []Run{{Text: "Title words here"}}},
		para("c", "same"),
		para("d", "same"),
		{ID: "x", Type: Details, RichText: []Run{{Text: "More"}}, Children: []Block{para("x1", "inner text one"), para("x2", "inner text two")}},
	}}
	tests := []struct {
		name string
		next []Block
		want []string // ids; "*" a fresh one
	}{
		{"unchanged", []Block{para("", "alpha beta gamma delta epsilon"), para("", "one two three four five six")}, []string{"a", "b"}},
		{"edited", []Block{para("", "alpha beta gamma delta zeta"), para("", "one two three four five six")}, []string{"a", "b"}},
		{"moved", []Block{para("", "one two three four five six"), para("", "alpha beta gamma delta epsilon")}, []string{"b", "a"}},
		{"moved and edited", []Block{para("", "one two three four five six"), para("", "new"), para("", "alpha beta gamma delta epsilon omega")}, []string{"b", "*", "a"}},
		{"split", []Block{para("", "one two"), para("", "three four five six")}, []string{"*", "b"}},
		{"heading to paragraph", []Block{para("", "Title words here")}, []string{"h"}},
		{"duplicates in order", []Block{para("", "same"), para("", "same"), para("", "same")}, []string{"c", "d", "*"}},
		{"new", []Block{para("", "nothing like it")}, []string{"*"}},
		{"rewritten in place", []Block{para("", "alpha beta gamma delta epsilon"), para("", "entirely other words"), {Type: Heading, Attrs: &Attrs{Level: 2}, RichText: []Run{{Text: "Title words here"}}}}, []string{"a", "b", "h"}},
		{"explicit id kept", []Block{para("b", "alpha beta gamma delta epsilon"), para("", "one two three four five six")}, []string{"b", "*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Align(cur, Document{SchemaVersion: 1, Blocks: tc.next})
			seen := map[string]bool{}
			for i, b := range got.Blocks {
				want := tc.want[i]
				if want == "*" {
					if collectIDs(cur.Blocks, nil)[b.ID] || b.ID == "" {
						t.Errorf("block %d: id %q, want a fresh one", i, b.ID)
					}
				} else if b.ID != want {
					t.Errorf("block %d: id %q, want %q", i, b.ID, want)
				}
				if seen[b.ID] {
					t.Errorf("id %q twice", b.ID)
				}
				seen[b.ID] = true
			}
			if ps := Validate(got, DefaultLimits); len(ps) > 0 {
				t.Errorf("aligned document is invalid: %v", ps)
			}
		})
	}
	// Children of a paired details block align with its children; the
	// input is left alone.
	next := Document{Blocks: []Block{{Type: Details, RichText: []Run{{Text: "More"}}, Children: []Block{para("", "inner text two"), para("", "brand new")}}}}
	got := Align(cur, next)
	if got.Blocks[0].ID != "x" || got.Blocks[0].Children[0].ID != "x2" || strings.HasPrefix(got.Blocks[0].Children[1].ID, "x") {
		t.Errorf("nested: %+v", got.Blocks[0])
	}
	if next.Blocks[0].ID != "" || next.Blocks[0].Children[0].ID != "" {
		t.Error("Align modified its input")
	}
	// Every block of a new document gets a fresh, distinct id, the same
	// for the same input.
	fresh := Align(Document{}, Document{Blocks: []Block{para("", "a"), para("", "a")}})
	again := Align(Document{}, Document{Blocks: []Block{para("", "a"), para("", "a")}})
	if fresh.Blocks[0].ID == fresh.Blocks[1].ID || fresh.Blocks[0].ID != again.Blocks[0].ID {
		t.Errorf("fresh ids %q %q, again %q", fresh.Blocks[0].ID, fresh.Blocks[1].ID, again.Blocks[0].ID)
	}
}
