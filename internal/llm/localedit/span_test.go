package localedit

import (
	"errors"
	"strings"
	"testing"
)

// Kept spans are never touched: an edit that would change one is refused
// and reported as protected; edits elsewhere go on.
func TestKeepSpans(t *testing.T) {
	in := "In order to win, the team made a decision."
	res, err := Edit(Request{Segments: []string{in}, Keep: [][]Span{{{From: 26, To: 41}}}}) // "made a decision"
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Edited || res.Segments[0] != "To win, the team made a decision." || len(res.Edits) != 1 {
		t.Fatalf("%+v", res)
	}
	res, err = Edit(Request{Segments: []string{in}, Keep: [][]Span{{{From: 0, To: 11}, {From: 31, To: 33}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != NoChange || res.Code != CodeProtected || res.Segments[0] != in {
		t.Fatalf("every candidate kept: %+v", res)
	}
	// A kept span in a later pass (after an edit before it moved the
	// text) is still kept where it now is.
	zh := "我们需要进行一个全面的优化，其实这个方案很简单。"
	res, err = Edit(Request{Segments: []string{zh}, Keep: [][]Span{{{From: 14, To: 16}}}}) // 其实
	if err != nil {
		t.Fatal(err)
	}
	if res.Segments[0] != "我们需要全面优化，其实这个方案很简单。" {
		t.Fatalf("%+v", res)
	}
}

// Within a window only the window changes, but the sentence around it is
// read: a selection inside a first-person fact stays protected, and
// candidates outside the window are neither applied nor reported.
func TestWithinWindow(t *testing.T) {
	fact := "我们在2020年基本上进行了讨论。"
	alone, err := Edit(Request{Segments: []string{"基本上进行了讨论。"}})
	if err != nil || alone.Segments[0] != "讨论了。" {
		t.Fatalf("the fragment alone loses its hedge: %+v %v", alone, err)
	}
	// Read in its sentence, the selection is part of a first-person fact:
	// the hedge is part of the claim and stays, the wording is edited.
	res, err := Edit(Request{Segments: []string{fact}, Within: []*Span{{From: 8, To: 16}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Edited || res.Segments[0] != "我们在2020年基本上讨论了。" {
		t.Fatalf("a selection inside a first-person fact: %+v", res)
	}

	two := "其实方案A很好。其实方案B也很好。"
	res, err = Edit(Request{Segments: []string{two}, Within: []*Span{{From: 8, To: 17}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Segments[0] != "其实方案A很好。方案B也很好。" || len(res.Edits) != 1 || res.Edits[0].From != 8 {
		t.Fatalf("%+v", res)
	}
	res, err = Edit(Request{Segments: []string{"Basically, it works. The sky is blue."}, Within: []*Span{{From: 21, To: 37}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != NoChange || res.Code != CodeNothingFound {
		t.Fatalf("a candidate outside the window is not reported: %+v", res)
	}

	// A removal takes a space inside the window, never one outside it,
	// and never leaves two spaces.
	en := "We basically ship it."
	res, err = Edit(Request{Segments: []string{en}, Within: []*Span{{From: 3, To: 13}}})
	if err != nil || res.Segments[0] != "We ship it." {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Edit(Request{Segments: []string{en}, Within: []*Span{{From: 3, To: 12}}})
	if err != nil || res.Outcome != NoChange {
		t.Fatalf("the word alone, between two spaces outside the window: %+v %v", res, err)
	}
	// Nor can the capital be handed to a word outside the window.
	res, err = Edit(Request{Segments: []string{"Basically, it works."}, Within: []*Span{{From: 0, To: 11}}})
	if err != nil || res.Outcome != NoChange {
		t.Fatalf("%+v %v", res, err)
	}
	// Editing the result again proposes nothing.
	res, err = Edit(Request{Segments: []string{"其实方案A很好。方案B也很好。"}, Within: []*Span{{From: 8, To: 15}}})
	if err != nil || res.Outcome != NoChange {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestSpansAreChecked(t *testing.T) {
	for name, req := range map[string]Request{
		"keep past the end":  {Segments: []string{"abc"}, Keep: [][]Span{{{From: 1, To: 4}}}},
		"negative":           {Segments: []string{"abc"}, Within: []*Span{{From: -1, To: 2}}},
		"reversed":           {Segments: []string{"abc"}, Within: []*Span{{From: 2, To: 1}}},
		"keep per segment":   {Segments: []string{"a", "b"}, Keep: [][]Span{nil}},
		"within per segment": {Segments: []string{"a", "b"}, Within: []*Span{nil}},
		"code points":        {Segments: []string{"世界"}, Keep: [][]Span{{{From: 0, To: 3}}}},
	} {
		if _, err := Edit(req); !errors.Is(err, ErrBadSpan) {
			t.Errorf("%s: %v, want ErrBadSpan", name, err)
		}
	}
}

// An edit's changed text never spans a formatting break: "very **unique**"
// loses "very " (the changed text ends at the break), but a restructuring
// that would mix emphasised and plain words is refused as protected.
func TestBreaks(t *testing.T) {
	tests := []struct {
		in     string
		breaks []int
		out    string
		code   string
	}{
		{"It is very unique.", []int{11, 17}, "It is unique.", ""},
		{"The report was written by the team.", []int{26, 34}, "The report was written by the team.", CodeProtected},
		{"The report was written by the team.", nil, "The team wrote the report.", ""},
		{"The team made a decision.", []int{16}, "The team made a decision.", CodeProtected},
		{"The team made a decision.", []int{9, 24}, "The team decided.", ""},
		// The filler cut stays inside 进行一个; the strong verb that would
		// then join 进行 with the next run is refused.
		{"我们需要进行一个全面的优化。", []int{4, 8}, "我们需要进行全面的优化。", ""},
		{"我们需要进行一个全面的优化。", []int{2}, "我们需要全面优化。", ""},
	}
	for _, tt := range tests {
		var breaks [][]int
		if tt.breaks != nil {
			breaks = [][]int{tt.breaks}
		}
		res, err := Edit(Request{Segments: []string{tt.in}, Breaks: breaks})
		if err != nil {
			t.Fatal(err)
		}
		if res.Segments[0] != tt.out || res.Code != tt.code {
			t.Errorf("%q with breaks %v: %q (%s), want %q (%s)", tt.in, tt.breaks, res.Segments[0], res.Code, tt.out, tt.code)
		}
		if tt.code == CodeProtected && !strings.Contains(res.Reason, "would join differently formatted text") {
			t.Errorf("%q with breaks %v: the reason does not say formatting stopped it: %q", tt.in, tt.breaks, res.Reason)
		}
	}
	for _, b := range []int{0, 5, -1} {
		if _, err := Edit(Request{Segments: []string{"abcde"}, Breaks: [][]int{{b}}}); !errors.Is(err, ErrBadSpan) {
			t.Errorf("break %d: %v", b, err)
		}
	}
}
