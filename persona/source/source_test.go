package source

import (
	"reflect"
	"testing"

	"github.com/foliodev/folio/flowdoc"
)

func TestFromFlowKeepsTextBlocksListItemsAndCode(t *testing.T) {
	d := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "h", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 2}, RichText: []flowdoc.Run{{Text: "标题"}}},
		{ID: "p", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "一段"}, {Equation: "x"}, {Text: "文字。"}}},
		{ID: "l", Type: flowdoc.List, Items: []flowdoc.ListItem{{RichText: []flowdoc.Run{{Text: "甲"}}, Items: []flowdoc.ListItem{{RichText: []flowdoc.Run{{Text: "乙"}}}}}}},
		{ID: "c", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Text: "x := 1"}},
		{ID: "m", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Src: "a.png"}},
	}}
	got := FromFlow(Pin{Doc: "d"}, flowdoc.Attributes{Title: "t"}, d)
	want := []Block{
		{ID: "h", Type: flowdoc.Heading, Level: 2, Text: "标题"},
		{ID: "p", Type: flowdoc.Paragraph, Text: "一段\uFFFC文字。"},
		{ID: "l", Type: flowdoc.List, Item: 0, Text: "甲"},
		{ID: "l", Type: flowdoc.List, Item: 1, Text: "乙"},
		{ID: "c", Type: flowdoc.Code, Text: "x := 1"},
	}
	if !reflect.DeepEqual(got.Blocks, want) || got.Complex["media"] != 1 || got.TopLevel != 5 {
		t.Fatalf("got %+v", got)
	}
	if len(got.Prose()) != 4 {
		t.Fatalf("prose %+v", got.Prose())
	}
}

func TestSentencesAndEvidence(t *testing.T) {
	text := "我来了。“你呢？”他说。Version 3.5 is out. See example.com now!\n新的一行"
	var got []string
	for _, s := range Sentences(text) {
		got = append(got, Slice(text, s))
	}
	want := []string{"我来了。", "“你呢？”", "他说。", "Version 3.5 is out.", "See example.com now!", "新的一行"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sentences %q, want %q", got, want)
	}
	d := Document{Pin: Pin{Doc: "d", Version: VersionID{1}}, Blocks: []Block{{ID: "b", Text: text}}}
	e := NewEvidence(d.Pin, d.Blocks[0], Span{0, 4})
	if !e.Verify(d) {
		t.Fatal("fresh evidence does not verify")
	}
	d.Blocks[0].Text = "你来了。"
	if e.Verify(d) {
		t.Fatal("evidence verifies against changed text")
	}
	if v, err := ParseVersionID(e.Version.String()); err != nil || v != e.Version {
		t.Fatalf("version id round trip: %v %v", v, err)
	}
}
