package assistant

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
)

func repairBase() flowdoc.Document {
	return flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "h1", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1}, RichText: []flowdoc.Run{{Text: "Title"}}},
		para("p1", "First paragraph."),
		{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "x := 1"}},
		para("p2", "Second paragraph."),
		{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: "https://example.com/a.png"}},
	}}
}

func resolvedFor(t *testing.T, base flowdoc.Document, s Scope) resolved {
	t.Helper()
	r, err := resolveScope(base, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Domain repair (DESIGN.md §6) makes the answers models commonly give
// valid where the fix is certain, and refuses what stays invalid.
func TestDomainRepair(t *testing.T) {
	base := repairBase()
	doc := Scope{Kind: ScopeDocument}
	tests := []struct {
		name   string
		scope  Scope
		answer string
		// check inspects the result; err, when set, is a substring of the refusal.
		check func(t *testing.T, c candidate)
		err   string
	}{
		{name: "heading level above 4 becomes 4", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"replace_block","blockId":"p1","block":{"type":"heading","attrs":{"level":6},"richText":[{"text":"T"}]}}]}`,
			check: func(t *testing.T, c candidate) {
				if b := c.result.Blocks[1]; b.Type != flowdoc.Heading || b.Attrs.Level != 4 {
					t.Fatalf("block %+v", b)
				}
			}},
		{name: "heading level below 1 becomes 1", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"replace_block","blockId":"p1","block":{"type":"heading","level":-2,"richText":[{"text":"T"}]}}]}`,
			check: func(t *testing.T, c candidate) {
				if b := c.result.Blocks[1]; b.Attrs.Level != 1 {
					t.Fatalf("level %d", b.Attrs.Level)
				}
			}},
		{name: "unknown heading-like type becomes a heading with its level", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"replace_block","blockId":"p1","block":{"type":"h3","text":"Sub"}}]}`,
			check: func(t *testing.T, c candidate) {
				if b := c.result.Blocks[1]; b.Type != flowdoc.Heading || b.Attrs.Level != 3 || flowdoc.PlainText(b.RichText) != "Sub" {
					t.Fatalf("block %+v", b)
				}
			}},
		{name: "title becomes a level 1 heading", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"insert_after","blockId":"p1","blocks":[{"type":"Title","richText":["New"]}]}]}`,
			check: func(t *testing.T, c candidate) {
				if b := c.result.Blocks[2]; b.Type != flowdoc.Heading || b.Attrs.Level != 1 || b.ID == "" {
					t.Fatalf("block %+v", b)
				}
			}},
		{name: "other unknown text becomes a paragraph", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"insert_before","blockId":"p1","blocks":[{"type":"text","text":"Lead-in."},{"text":"No type."}]}]}`,
			check: func(t *testing.T, c candidate) {
				if c.result.Blocks[1].Type != flowdoc.Paragraph || c.result.Blocks[2].Type != flowdoc.Paragraph || len(c.repairs) < 2 {
					t.Fatalf("blocks %+v repairs %v", c.result.Blocks[1:3], c.repairs)
				}
			}},
		{name: "new blocks cannot be complex", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"insert_after","blockId":"p1","blocks":[{"type":"code","attrs":{"text":"rm -rf"}}]}]}`,
			err:    "new blocks are paragraphs, headings or quotes"},
		{name: "a block request touches its block only", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"replace_block","blockId":"p2","block":{"type":"paragraph","text":"x"}}]}`,
			err:    `names block "p2"`},
		{name: "the selection is the request's", scope: Scope{Kind: ScopeSelection, Block: "p1", Start: 0, End: 5},
			answer: `{"ops":[{"op":"replace_selection","blockId":"p1","start":2,"end":40,"text":"Opening"}]}`,
			check: func(t *testing.T, c candidate) {
				if got := flowdoc.PlainText(c.result.Blocks[1].RichText); got != "Opening paragraph." {
					t.Fatalf("text %q", got)
				}
			}},
		{name: "section keeps ids, types and complex blocks", scope: Scope{Kind: ScopeSection, From: "p1", To: "p2"},
			answer: `{"ops":[{"op":"replace_section","blocks":[{"id":"p1","type":"heading","text":"One."},{"type":"code","attrs":{"text":"changed"}},{"id":"p2","richText":[{"text":"Two."}]}]}]}`,
			check: func(t *testing.T, c candidate) {
				if c.result.Blocks[1].Type != flowdoc.Paragraph || flowdoc.PlainText(c.result.Blocks[1].RichText) != "One." ||
					c.result.Blocks[2].Attrs.Text != "x := 1" || flowdoc.PlainText(c.result.Blocks[3].RichText) != "Two." {
					t.Fatalf("result %+v", c.result.Blocks[1:4])
				}
				if !strings.Contains(strings.Join(c.repairs, ";"), "restored unchanged") {
					t.Fatalf("repairs %v", c.repairs)
				}
			}},
		{name: "section keeps its count", scope: Scope{Kind: ScopeSection, From: "p1", To: "p2"},
			answer: `{"ops":[{"op":"replace_section","blocks":[{"id":"p1","text":"One."}]}]}`,
			err:    "a section keeps its count"},
		{name: "document: complex blocks are put back, new text gets ids", scope: doc,
			answer: `{"ops":[{"op":"replace_document","document":{"blocks":[{"id":"h1","type":"title","text":"New title"},{"type":"paragraph","text":"Merged paragraphs."},{"id":"c1","type":"code","attrs":{"language":"go","text":"x := 2"}},{"id":"m1","type":"media","attrs":{"kind":"image","src":"https://example.com/a.png"}},{"id":"p1","type":"quote","text":"A quote."}]}}]}`,
			check: func(t *testing.T, c candidate) {
				bs := c.result.Blocks
				if len(bs) != 5 || bs[0].Type != flowdoc.Heading || bs[0].Attrs.Level != 1 || bs[1].ID == "" ||
					bs[2].Attrs.Text != "x := 1" || bs[4].Type != flowdoc.Quote || bs[4].ID != "p1" {
					t.Fatalf("result %s", flowdoc.CanonicalJSON(c.result))
				}
			}},
		{name: "document: a dropped complex block fails", scope: doc,
			answer: `{"ops":[{"op":"replace_document","document":{"blocks":[{"type":"paragraph","text":"All new."}]}}]}`,
			err:    `complex block "c1"`},
		{name: "document: an added complex block fails", scope: doc,
			answer: `{"ops":[{"op":"replace_document","document":{"blocks":[{"id":"c1","type":"code","attrs":{"text":"x := 1","language":"go"}},{"id":"m1","type":"media","attrs":{"kind":"image","src":"https://example.com/a.png"}},{"type":"table","rows":[{"cells":[[{"text":"a"}]]}]}]}}]}`,
			err:    "cannot add a table block"},
		{name: "document: never empty", scope: doc,
			answer: `{"ops":[{"op":"replace_document","document":{"blocks":[]}}]}`,
			err:    "never empty"},
		{name: "the wrong op for the scope", scope: doc,
			answer: `{"ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","text":"x"}}]}`,
			err:    "exactly one replace_document"},
		{name: "an unsafe link stays invalid", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","richText":[{"text":"x","link":"javascript:alert(1)"}]}}]}`,
			err:    "link"},
		{name: "a selection in a code block is refused upstream; ops on a complex block keep its type", scope: Scope{Kind: ScopeBlock, Block: "c1"},
			answer: `{"ops":[{"op":"replace_block","blockId":"c1","block":{"type":"paragraph","text":"prose"}}]}`,
			err:    "must stay a code"},
		{name: "an answer without ops is not an answer", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"outcome":"edited","segments":["x"]}`,
			err:    `no "ops"`},
		{name: "no ops is no change", scope: Scope{Kind: ScopeBlock, Block: "p1"},
			answer: `{"summary":"fine as it is","ops":[]}`,
			check: func(t *testing.T, c candidate) {
				if !c.noChange || c.summary != "fine as it is" {
					t.Fatalf("%+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseAnswer(json.RawMessage(tt.answer), base, resolvedFor(t, base, tt.scope), flowdoc.DefaultLimits, "run-1")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.result.Blocks) == 0 {
				t.Fatal("empty result")
			}
			tt.check(t, c)
		})
	}
}
