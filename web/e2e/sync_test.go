package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// openDoc signs in (in a new tab) and opens document doc, waiting for its
// snapshot.
func openDoc(t testing.TB, d *daemon, doc string) context.Context {
	t.Helper()
	ctx := tab(t)
	signIn(t, ctx, d)
	must(t, ctx, chromedp.Navigate(d.url+"/d/"+doc), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	return ctx
}

// blockText is the text of block id as the tab shows it.
func blockText(t testing.TB, ctx context.Context, id string) string {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector('.ProseMirror [data-block-id=%q]') || {}).textContent || ''`, id)))
}

// saveBlock saves block id's text over the HTTP API, as another editor.
func (d *daemon) saveBlock(doc, id, text string) {
	d.t.Helper()
	var draft struct {
		Seq uint64 `json:"seq"`
	}
	d.api("GET", "/v1/docs/"+doc+"/draft", nil, &draft)
	d.api("POST", "/v1/docs/"+doc+"/draft", map[string]any{"baseSeq": draft.Seq, "changes": []map[string]any{
		{"op": "upsert", "block": map[string]any{"id": id, "type": "paragraph", "richText": []map[string]any{{"text": text}}}}}}, nil)
}

// Two tabs on one document, each typing in its own block, end with the
// same text, which is the server's.
func TestTwoTabsConverge(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Two tabs", [2]string{"a1", "First."}, [2]string{"b1", "Second."})
	a := openDoc(t, d, doc)
	b := openDoc(t, d, doc)
	var wg sync.WaitGroup
	for _, w := range []struct {
		ctx        context.Context
		block, txt string
	}{{a, "a1", " Alpha"}, {b, "b1", " Beta"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if err := chromedp.Do(w.ctx, caretAtEnd(w.block), insertText(fmt.Sprintf("%s%d", w.txt, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	wantA, wantB := "First. Alpha0 Alpha1 Alpha2 Alpha3 Alpha4", "Second. Beta0 Beta1 Beta2 Beta3 Beta4"
	for _, ctx := range []context.Context{a, b} {
		waitJS(t, ctx, fmt.Sprintf(`(() => { const q = (id) => (document.querySelector('.ProseMirror [data-block-id="'+id+'"]')||{}).textContent;
			return q('a1') === %q && q('b1') === %q && document.querySelector('#sync-status').dataset.syncState === 'saved'; })()`, wantA, wantB))
	}
	got := d.draftText(doc)
	if got["a1"] != wantA || got["b1"] != wantB {
		t.Fatalf("the server's draft holds %q, want a1 %q and b1 %q", got, wantA, wantB)
	}
}

// Sign-out forgets the token: the tab is back at sign-in and the list
// asks for it again.
func TestSignOutClearsToken(t *testing.T) {
	d := startDaemon(t)
	ctx := tab(t)
	signIn(t, ctx, d)
	must(t, ctx, chromedp.Click(css(`#sign-out`)), chromedp.WaitVisible(css(`#token`)))
	if tok := get(t, ctx, chromedp.Evaluate[string](`sessionStorage.getItem('folio.token') || ''`)); tok != "" {
		t.Fatalf("after sign-out sessionStorage still holds a token")
	}
	must(t, ctx, chromedp.Navigate(d.url+"/app"), chromedp.WaitVisible(css(`#token`)))
	if url := get(t, ctx, chromedp.Location()); !strings.Contains(url, "/signin") {
		t.Fatalf("/app after sign-out shows %s, want the sign-in page", url)
	}
}

// The daemon goes away while a person types: the typing stays on the page
// and reaches the server once the daemon is back on the same address.
func TestOfflineThenReconnect(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Offline", [2]string{"p1", "Before."})
	ctx := openDoc(t, d, doc)
	d.stop()
	must(t, ctx, chromedp.WaitVisible(css(`#sync-status:is([data-sync-state="offline"],[data-sync-state="reconnecting"])`)))
	must(t, ctx, caretAtEnd("p1"), insertText(" Typed offline."))
	screenshot(t, ctx, "editor-offline")
	d.restart()
	waitJS(t, ctx, `document.querySelector('#sync-status').dataset.syncState === 'saved'`)
	if got := d.draftText(doc)["p1"]; got != "Before. Typed offline." {
		t.Fatalf("after the reconnect the server holds %q", got)
	}
	if got := blockText(t, ctx, "p1"); got != "Before. Typed offline." {
		t.Fatalf("after the reconnect the page shows %q", got)
	}
}

// A change of another editor to the block being edited that overlaps this
// tab's change (both edit the end), arriving before this tab's change is
// sent, is shown in place with both versions; "Keep mine" saves this tab's
// version on top of the other.
func TestBlockConflictShownAndResolved(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Conflict", [2]string{"p1", "Original."}, [2]string{"p2", "Other."})
	ctx := openDoc(t, d, doc)
	must(t, ctx, eval(`window.folioEditor.sync.held = true`), caretAtEnd("p1"), insertText(" Mine."))
	d.saveBlock(doc, "p1", "Original!")
	must(t, ctx, chromedp.WaitVisible(css(`.conflict[data-conflict="p1"]`)))
	must(t, ctx, chromedp.WaitVisible(css(`#sync-status[data-sync-state="conflict"]`)))
	screenshot(t, ctx, "editor-conflict")
	card := get(t, ctx, chromedp.Text(css(`.conflict[data-conflict="p1"]`)))
	if !strings.Contains(card, "Original. Mine.") || !strings.Contains(card, "Original!") {
		t.Fatalf("the conflict card shows %q, want both versions", card)
	}
	must(t, ctx, eval(`window.folioEditor.sync.held = false`), chromedp.Click(css(`.conflict[data-conflict="p1"] button[data-choice="mine"]`)))
	waitSynced(t, ctx)
	if got := d.draftText(doc)["p1"]; got != "Original. Mine." {
		t.Fatalf("after Keep mine the server holds %q", got)
	}
	must(t, ctx, chromedp.WaitNotPresent(css(`.conflict`)))
}

// An IME composition is not disturbed by another editor's saves: a save to
// another block waits until the composition ends and then shows; one to the
// same block becomes a conflict after it, with the composed text intact.
func TestIMECompositionWithRemoteSaves(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("IME", [2]string{"p1", "中文"}, [2]string{"p2", "Other."})
	ctx := openDoc(t, d, doc)
	// Strict, as a client without merging: both insertions at the end of
	// p1 would merge otherwise, and this test is about the conflict
	// coming after the composition.
	must(t, ctx, eval(`window.folioEditor.sync.merge = false`))
	ime := func(text string) step {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.ImeSetComposition, input.ImeSetCompositionParams{Text: text, SelectionStart: int64(len([]rune(text))), SelectionEnd: int64(len([]rune(text)))})
			return err
		})
	}
	must(t, ctx, caretAtEnd("p1"), ime("n"), ime("ni"), ime("你"))
	d.saveBlock(doc, "p2", "Changed elsewhere.")
	d.saveBlock(doc, "p1", "中文 (theirs)")
	// The saves' events reach the page (its copy's seq moves) but the page
	// changes nothing while the composition goes on.
	waitJS(t, ctx, `window.folioEditor.sync.deferred.length >= 2`)
	if got := blockText(t, ctx, "p2"); got != "Other." {
		t.Fatalf("during the composition block p2 was re-rendered: %q", got)
	}
	must(t, ctx, ime("你好"), insertText("你好"))
	waitJS(t, ctx, `(document.querySelector('.ProseMirror [data-block-id="p2"]')||{}).textContent === 'Changed elsewhere.'`)
	must(t, ctx, chromedp.WaitVisible(css(`.conflict[data-conflict="p1"]`)))
	card := get(t, ctx, chromedp.Text(css(`.conflict[data-conflict="p1"]`)))
	if !strings.Contains(card, "中文你好") || !strings.Contains(card, "中文 (theirs)") {
		t.Fatalf("the conflict after the composition shows %q, want 中文你好 and the other version", card)
	}
}

// Two tabs type in the same paragraph from the same baseSeq, one at its
// start and one at its end: no conflict is shown, the server merges the
// second save, and both tabs and the draft hold both texts.
func TestTwoTabsSameParagraphMerge(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Same paragraph", [2]string{"p1", "Middle."})
	a := openDoc(t, d, doc)
	b := openDoc(t, d, doc)
	caretAtStart := caretAt(`.ProseMirror [data-block-id="p1"]`, false)
	// Both hold their saves until both have typed: the saves then carry
	// the same baseSeq.
	must(t, a, eval(`window.folioEditor.sync.held = true`), caretAtStart, insertText("Start: "))
	must(t, b, eval(`window.folioEditor.sync.held = true`), caretAtEnd("p1"), insertText(" The end."))
	must(t, a, eval(`(window.folioEditor.sync.held = false, window.folioEditor.sync.flush(), true)`))
	must(t, b, eval(`(window.folioEditor.sync.held = false, window.folioEditor.sync.flush(), true)`))
	want := "Start: Middle. The end."
	for _, ctx := range []context.Context{a, b} {
		waitJS(t, ctx, fmt.Sprintf(`(document.querySelector('.ProseMirror [data-block-id="p1"]')||{}).textContent === %q &&
			document.querySelector('#sync-status').dataset.syncState === 'saved' && !document.querySelector('.conflict')`, want))
	}
	screenshot(t, b, "editor-merged")
	if got := d.draftText(doc)["p1"]; got != want {
		t.Fatalf("the server's draft holds %q, want %q", got, want)
	}
}
