package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// newDocBlocks creates a document with the given blocks.
func (d *daemon) newDocBlocks(title string, blocks []map[string]any) string {
	d.t.Helper()
	var v struct {
		Doc string `json:"doc"`
	}
	d.api("POST", "/v1/docs", map[string]any{"attrs": map[string]any{"title": title}, "body": map[string]any{"schemaVersion": 1, "blocks": blocks}}, &v)
	return v.Doc
}

func jsonBlocks(t testing.TB, s string) []map[string]any {
	t.Helper()
	var v []map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func canonJSON(v any) string {
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// caretAtEndOf places the caret at the end of the element sel inside the
// editor, and has the editor read it at once (as it does on a click)
// rather than on the next selectionchange, so that a button pressed next
// acts there.
func caretAtEndOf(sel string) step {
	return eval(fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		el.closest('.ProseMirror').focus();
		const r = document.createRange(); r.selectNodeContents(el); r.collapse(false);
		const s = getSelection(); s.removeAllRanges(); s.addRange(r);
		window.folioEditor.view.editor.view.domObserver.flush();
		return true; })()`, sel))
}

// Details and columns are edited in place: the summary, a child of the
// details, a block in a column; the draft changes exactly there, the
// nested ids stay, and a new details and new columns made from the insert
// bar (by mouse and by keyboard) take the text typed right after them and
// are saved with fresh ids for their blocks.
func TestDetailsAndColumnsEditing(t *testing.T) {
	d := startDaemon(t)
	blocks := jsonBlocks(t, `[
	 {"id":"intro","type":"paragraph","richText":[{"text":"Intro."}]},
	 {"id":"d1","type":"details","richText":[{"text":"Method"}],"children":[
	  {"id":"d1p","type":"paragraph","richText":[{"text":"We asked readers."}]},
	  {"id":"d1q","type":"quote","richText":[{"text":"A quote."}]}]},
	 {"id":"k1","type":"columns","columns":[
	  {"blocks":[{"id":"k1a","type":"paragraph","richText":[{"text":"Left"}]}]},
	  {"blocks":[{"id":"k1b","type":"paragraph","richText":[{"text":"Right"}]},{"id":"k1m","type":"equation","attrs":{"latex":"x^2"}}]}]},
	 {"id":"end","type":"paragraph","richText":[{"text":"The end."}]}]`)
	doc := d.newDocBlocks("Nested", blocks)
	ctx := openDoc(t, d, doc)
	// Shown as editable nodes, not cards.
	if n := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.ProseMirror [data-atom]').length`)); n != 1 {
		t.Fatalf("%d cards in the editor, want 1 (the equation in a column)", n)
	}
	screenshot(t, ctx, "editor-details-columns")

	must(t, ctx, caretAtEndOf(`.ProseMirror [data-block-id="d1"] .details-summary`), insertText(" and sample"))
	must(t, ctx, caretAtEndOf(`.ProseMirror [data-block-id="d1p"]`), insertText(" 120 of them."))
	must(t, ctx, caretAtEndOf(`.ProseMirror [data-block-id="k1b"]`), insertText(" side"))
	waitJS(t, ctx, `document.querySelector('[data-block-id="k1b"]').textContent === 'Right side' && document.querySelector('#sync-status').dataset.syncState === 'saved'`)
	waitSynced(t, ctx)
	got := d.draftBlocks(doc)
	want := jsonBlocks(t, `[
	 {"id":"intro","type":"paragraph","richText":[{"text":"Intro."}]},
	 {"id":"d1","type":"details","richText":[{"text":"Method and sample"}],"children":[
	  {"id":"d1p","type":"paragraph","richText":[{"text":"We asked readers. 120 of them."}]},
	  {"id":"d1q","type":"quote","richText":[{"text":"A quote."}]}]},
	 {"id":"k1","type":"columns","columns":[
	  {"blocks":[{"id":"k1a","type":"paragraph","richText":[{"text":"Left"}]}]},
	  {"blocks":[{"id":"k1b","type":"paragraph","richText":[{"text":"Right side"}]},{"id":"k1m","type":"equation","attrs":{"latex":"x^2"}}]}]},
	 {"id":"end","type":"paragraph","richText":[{"text":"The end."}]}]`)
	if canonJSON(got) != canonJSON(want) {
		t.Fatalf("the draft is\n%s\nwant\n%s", canonJSON(got), canonJSON(want))
	}

	// Enter at the end of a summary goes into the body; Enter in the
	// body makes a second child with a fresh id.
	must(t, ctx, caretAtEndOf(`.ProseMirror [data-block-id="d1"] .details-summary`), pressEnter(), insertText("First: "))
	waitJS(t, ctx, `document.querySelector('[data-block-id="d1p"]').textContent === 'First: We asked readers. 120 of them.'`)

	// A new details and new columns from the insert bar (the columns by
	// keyboard: Shift+Tab from the text to the bar, Enter), typed into at
	// once: the text is in the new blocks and nowhere else.
	must(t, ctx, caretAtEndOf(`[data-block-id="end"]`), chromedp.Click(css(`#insert-details`)), insertText("Notes"), pressEnter(), insertText("Hidden text"))
	must(t, ctx, caretAtEndOf(`[data-block-id="end"]`))
	focusByShiftTab(t, ctx, `#insert-columns`)
	must(t, ctx, chromedp.KeyEvent("\r"), insertText("One"))
	waitJS(t, ctx, `(() => { const s = window.folioEditor.sync; const saved = JSON.stringify(s.copy.order.map((id) => s.copy.blocks.get(id).b));
		return document.querySelector('#sync-status').dataset.syncState === 'saved' && saved.includes('"One"') && saved.includes('"Hidden text"'); })()`)
	screenshot(t, ctx, "editor-details-columns-new")
	got = d.draftBlocks(doc)
	if len(got) != 6 || got[4]["type"] != "columns" || got[5]["type"] != "details" {
		t.Fatalf("after inserting, the draft's blocks are %s", canonJSON(got))
	}
	want[1]["children"].([]any)[0].(map[string]any)["richText"] = []any{map[string]any{"text": "First: We asked readers. 120 of them."}}
	if canonJSON(got[:4]) != canonJSON(want) {
		t.Fatalf("inserting changed the blocks before:\n%s\nwant\n%s", canonJSON(got[:4]), canonJSON(want))
	}
	nd := got[5]
	ch, _ := nd["children"].([]any)
	if canonJSON(nd["richText"]) != `[{"text":"Notes"}]` || len(ch) != 1 || canonJSON(ch[0].(map[string]any)["richText"]) != `[{"text":"Hidden text"}]` {
		t.Fatalf("the new details block is %s, want the summary Notes and one paragraph Hidden text", canonJSON(nd))
	}
	cols, _ := got[4]["columns"].([]any)
	if len(cols) != 2 {
		t.Fatalf("the new columns block is %s", canonJSON(got[4]))
	}
	first, _ := cols[0].(map[string]any)["blocks"].([]any)
	second, _ := cols[1].(map[string]any)["blocks"].([]any)
	if len(first) != 1 || canonJSON(first[0].(map[string]any)["richText"]) != `[{"text":"One"}]` || len(second) != 1 || second[0].(map[string]any)["richText"] != nil {
		t.Fatalf("the new columns block is %s, want One in the first column and an empty paragraph in the second", canonJSON(got[4]))
	}
	ids := map[string]bool{}
	var walk func(bs []any)
	walk = func(bs []any) {
		for _, x := range bs {
			b := x.(map[string]any)
			id, _ := b["id"].(string)
			if id == "" || ids[id] {
				t.Fatalf("block id %q is empty or used twice in %s", id, canonJSON(got))
			}
			ids[id] = true
			if c, ok := b["children"].([]any); ok {
				walk(c)
			}
			if cs, ok := b["columns"].([]any); ok {
				for _, c := range cs {
					if bl, ok := c.(map[string]any)["blocks"].([]any); ok {
						walk(bl)
					}
				}
			}
		}
	}
	all := make([]any, len(got))
	for i := range got {
		all[i] = got[i]
	}
	walk(all)

	// A reload shows exactly the saved draft, and saves nothing.
	must(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	waitJS(t, ctx, `document.querySelectorAll('.ProseMirror .columns').length === 2`)
	shown := get(t, ctx, chromedp.Evaluate[string](`JSON.stringify(window.folioEditor.view.read())`))
	if canonJSON(jsonBlocks(t, shown)) != canonJSON(got) {
		t.Fatalf("after the reload the editor reads\n%s\nthe server holds\n%s", canonJSON(jsonBlocks(t, shown)), canonJSON(got))
	}
	if again := d.draftBlocks(doc); canonJSON(again) != canonJSON(got) {
		t.Fatalf("opening the document changed it:\n%s\nwas\n%s", canonJSON(again), canonJSON(got))
	}
}
