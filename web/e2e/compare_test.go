package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A whole-document suggestion is shown side by side above the document:
// the current text left, the proposed right, one row per changed block
// with its struck and inserted words, nothing written into the editor and
// no inline word marks; Accept replaces the text in a second tab and the
// view goes away.
func TestAssistWholeDocumentSideBySide(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Whole", [2]string{"p1", fillerText}, [2]string{"p2", "This line is fine."}, [2]string{"p3", "We basically need to cut the filler."})
	a := openDoc(t, d, doc)
	b := openDoc(t, d, doc)
	openAssist(t, a)
	choose(t, a, "editing_preset", "six-rules")
	must(t, a, chromedp.WaitVisible(css(`#assist-scope[data-scope="document"]`)), chromedp.Click(css(`#assist-ask`)),
		chromedp.WaitVisible(css(`#sugg-compare[data-suggestion]`)), chromedp.WaitVisible(css(`#assist-suggestion[data-status="pending"]`)))
	sid := get(t, a, chromedp.Evaluate[string](`document.getElementById('sugg-compare').dataset.suggestion`))
	if card := get(t, a, chromedp.Evaluate[string](`document.getElementById('assist-suggestion').dataset.suggestionCard`)); card != sid {
		t.Fatalf("the side-by-side view shows %s, the card %s", sid, card)
	}
	rows := get(t, a, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#sugg-compare tbody tr')].map((r) => r.dataset.block)`))
	if strings.Join(rows, ",") != "p1,p3" {
		t.Fatalf("rows for blocks %v, want p1,p3 (p2 is unchanged)", rows)
	}
	left := text(t, a, `#sugg-compare tr[data-block="p1"] td:first-child`)
	right := text(t, a, `#sugg-compare tr[data-block="p1"] td:last-child`)
	del := get(t, a, chromedp.Evaluate[string](`[...document.querySelectorAll('#sugg-compare tr[data-block="p1"] td:first-child del')].map((e) => e.textContent).join('|')`))
	ins := get(t, a, chromedp.Evaluate[string](`[...document.querySelectorAll('#sugg-compare tr[data-block="p1"] td:last-child ins')].map((e) => e.textContent).join('|')`))
	if left != fillerText || right != "To win, the team decided." || !strings.Contains(del, "made a decision") || !strings.Contains(ins, "decided") {
		t.Fatalf("p1 side by side: %q (struck %q) | %q (inserted %q)", left, del, right, ins)
	}
	if got := get(t, a, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#sugg-compare th')].map((e) => e.textContent)`)); strings.Join(got, "|") != "Current|Proposed" {
		t.Fatalf("column headers %v", got)
	}
	if n := get(t, a, chromedp.Evaluate[int](`document.querySelectorAll('.ProseMirror ins, .ProseMirror del').length`)); n != 0 {
		t.Fatalf("a whole-document suggestion also marks %d words inline", n)
	}
	if got := editorBlocks(t, a); !strings.Contains(got, fillerText) {
		t.Fatalf("the suggestion was written into the editor: %s", got)
	}
	screenshot(t, a, "assist-whole-document")
	axeCheck(t, a, "whole-document side by side")
	must(t, a, chromedp.Click(css(`#assist-accept`)), chromedp.WaitVisible(css(`#assist-suggestion[data-status="accepted"]`)))
	waitJS(t, a, `!document.getElementById('sugg-compare')`)
	waitJS(t, b, `(document.querySelector('.ProseMirror [data-block-id="p3"]') || {}).textContent === 'We need to cut the filler.' && document.querySelector('.ProseMirror [data-block-id="p1"]').textContent === 'To win, the team decided.'`)
}
