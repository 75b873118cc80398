package e2e

import (
	"context"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// shiftTab is Shift+Tab as a keyboard sends it: focus moves back, out of
// the editor (which does not take Tab outside lists) to the insert bar.
func shiftTab() step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Tab", Code: "Tab", WindowsVirtualKeyCode: 9, Modifiers: 8 /* Shift */}); err != nil {
				return err
			}
		}
		return nil
	})
}

// focusByShiftTab presses Shift+Tab until the element sel has the focus.
func focusByShiftTab(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	for i := 0; i < 6; i++ {
		must(t, ctx, shiftTab())
		if get(t, ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, sel))) {
			return
		}
	}
	t.Fatalf("Shift+Tab from the editor never reached %s", sel)
}

// Every block the insert bar makes takes the text typed right after it:
// details in their summary, columns in their first column; an image or a
// file, which hold no text at the caret, stay whole and the text goes in a
// paragraph after them. Each insert is made after a paragraph followed by
// an existing details, where the text used to land (its summary). Nothing
// else in the draft changes, after the save is acknowledged and after a
// reload.
func TestInsertBarTypeAtOnce(t *testing.T) {
	type where int
	const (
		inSummary where = iota
		inFirstColumn
		afterIt
	)
	cases := []struct {
		name     string
		button   string // the insert bar's button; "" for the file picker
		keyboard bool   // the button reached and pressed by keys; after the picker, the text typed key by key
		typ      string // the new block's FlowDocument type
		lands    where
	}{
		{"details by click", "#insert-details", false, "details", inSummary},
		{"details by keyboard", "#insert-details", true, "details", inSummary},
		{"columns by click", "#insert-columns", false, "columns", inFirstColumn},
		{"columns by keyboard", "#insert-columns", true, "columns", inFirstColumn},
		{"image from the picker", "", false, "media", afterIt},
		{"image from the picker, then keys", "", true, "media", afterIt},
	}
	d := startDaemon(t)
	var blocks []map[string]any
	for i := range cases {
		blocks = append(blocks, jsonBlocks(t, fmt.Sprintf(`[{"id":"p%d","type":"paragraph","richText":[{"text":"Before %d."}]},
		 {"id":"d%d","type":"details","richText":[{"text":"Existing %d"}],"children":[{"id":"d%dp","type":"paragraph","richText":[{"text":"Inside %d."}]}]}]`, i, i, i, i, i, i))...)
	}
	doc := d.newDocBlocks("Inserts", blocks)
	ctx := openDoc(t, d, doc)
	red := writePNG(t, t.TempDir(), "red.png", 40, 30, color.RGBA{200, 30, 30, 255})

	// check finds each case's text where it belongs and nowhere else, and
	// every block the document started with unchanged.
	check := func(got []map[string]any, upTo int) {
		t.Helper()
		var rest []map[string]any
		for i, c := range cases[:upTo] {
			text := fmt.Sprintf("Typed %d", i)
			at := -1
			for k, b := range got {
				if b["id"] == fmt.Sprintf("p%d", i) {
					at = k
				}
			}
			if at < 0 || at+1 >= len(got) {
				t.Fatalf("%s: p%d or the block after it is missing from %s", c.name, i, canonJSON(got))
			}
			nb := got[at+1]
			if nb["type"] != c.typ {
				t.Fatalf("%s: the block after p%d is %s, want a new %s", c.name, i, canonJSON(nb), c.typ)
			}
			var holds any
			switch c.lands {
			case inSummary:
				holds = nb["richText"]
			case inFirstColumn:
				cols, _ := nb["columns"].([]any)
				if len(cols) != 2 {
					t.Fatalf("%s: the new columns are %s", c.name, canonJSON(nb))
				}
				first, _ := cols[0].(map[string]any)["blocks"].([]any)
				if len(first) != 1 {
					t.Fatalf("%s: the first column is %s", c.name, canonJSON(cols[0]))
				}
				holds = first[0].(map[string]any)["richText"]
			case afterIt:
				if at+2 >= len(got) || got[at+2]["type"] != "paragraph" {
					t.Fatalf("%s: no paragraph after the new block in %s", c.name, canonJSON(got))
				}
				holds = got[at+2]["richText"]
				rest = append(rest, got[at+2])
			}
			if want := fmt.Sprintf(`[{"text":%q}]`, text); canonJSON(holds) != want {
				t.Fatalf("%s: the new %s holds %s, want %s; the draft is %s", c.name, c.typ, canonJSON(holds), want, canonJSON(got))
			}
			rest = append(rest, nb)
		}
		// Everything else is what the document started with.
		var old []map[string]any
		for _, b := range got {
			keep := true
			for _, r := range rest {
				if b["id"] == r["id"] {
					keep = false
				}
			}
			if keep {
				old = append(old, b)
			}
		}
		if canonJSON(old) != canonJSON(blocks) {
			t.Fatalf("the blocks the document started with changed:\n%s\nwant\n%s", canonJSON(old), canonJSON(blocks))
		}
	}

	for i, c := range cases {
		text := fmt.Sprintf("Typed %d", i)
		must(t, ctx, caretAtEnd(fmt.Sprintf("p%d", i)))
		switch {
		case c.button == "":
			// The picker's upload takes a moment; the text is typed as soon
			// as the image is in the document.
			must(t, ctx, chromedp.SetUploadFiles(css(`#insert-file`), []string{red}))
			waitJS(t, ctx, fmt.Sprintf(`(() => { const n = document.querySelector('.ProseMirror [data-block-id="p%d"]').nextElementSibling; return !!n && n.matches('[data-atom=media]'); })()`, i))
		case c.keyboard:
			focusByShiftTab(t, ctx, c.button)
			must(t, ctx, chromedp.KeyEvent("\r"))
		default:
			must(t, ctx, chromedp.Click(css(c.button)))
		}
		if c.button == "" && c.keyboard {
			must(t, ctx, chromedp.KeyEvent(text)) // key by key: key down, character, key up
		} else {
			must(t, ctx, insertText(text))
		}
		waitJS(t, ctx, fmt.Sprintf(`document.querySelector('#sync-status').dataset.syncState === 'saved' && JSON.stringify(window.folioEditor.sync.copy.order.map((id) => window.folioEditor.sync.copy.blocks.get(id).b)).includes(%q)`, text))
		check(d.draftBlocks(doc), i+1)
	}
	screenshot(t, ctx, "editor-inserts")
	// What the window shows (a full-page capture paints no block that
	// content-visibility skips outside the window).
	must(t, ctx, eval(`(window.scrollTo(0, 0), true)`))
	if err := os.WriteFile(filepath.Join(shotDir, "editor-inserts-window.png"), get(t, ctx, chromedp.CaptureScreenshot()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := d.draftBlocks(doc)

	must(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	shown := jsonBlocks(t, get(t, ctx, chromedp.Evaluate[string](`JSON.stringify(window.folioEditor.view.read())`)))
	if canonJSON(shown) != canonJSON(got) {
		t.Fatalf("after the reload the editor reads\n%s\nthe server holds\n%s", canonJSON(shown), canonJSON(got))
	}
	check(shown, len(cases))
}
