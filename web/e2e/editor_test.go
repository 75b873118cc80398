package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// A person signs in, makes a document, types, sees "Saved", reloads and
// finds the text.
func TestSignInCreateTypeReload(t *testing.T) {
	d := startDaemon(t)
	ctx := tab(t)
	signIn(t, ctx, d)
	screenshot(t, ctx, "list-empty")
	must(t, ctx,
		chromedp.Click(css(`#new-doc`)),
		chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)),
	)
	url := get(t, ctx, chromedp.Location())
	if !strings.Contains(url, "/d/") {
		t.Fatalf("after New document the page is %s, want /d/<id>", url)
	}
	must(t, ctx, chromedp.Click(css(`.ProseMirror`)), insertText("Hello, 世界"))
	waitSynced(t, ctx)
	screenshot(t, ctx, "editor")
	must(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	text := get(t, ctx, chromedp.Text(css(`.ProseMirror`)))
	if !strings.Contains(text, "Hello, 世界") {
		t.Fatalf("after reload the editor holds %q", text)
	}
}

// A Markdown file chosen with "Import…" becomes a document; what had no
// block is shown as notes.
func TestImportMarkdownFile(t *testing.T) {
	d := startDaemon(t)
	ctx := tab(t)
	signIn(t, ctx, d)
	md := filepath.Join(t.TempDir(), "trip.md")
	if err := os.WriteFile(md, []byte("# Trip notes\n\nWe walked <span>far</span>.\n\n- one\n- two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, ctx, chromedp.SetUploadFiles(css(`#import-file`), []string{md}), chromedp.WaitVisible(css(`#import-notes .note`)))
	screenshot(t, ctx, "list-import-notes")
	notes := get(t, ctx, chromedp.Text(css(`#import-notes`)))
	if !strings.Contains(notes, "Imported trip.md") || !strings.Contains(notes, "inline-html") {
		t.Fatalf("the import shows %q", notes)
	}
	must(t, ctx, chromedp.WaitVisible(css(`.doc-link`)))
	if title := get(t, ctx, chromedp.Text(css(`.doc-title`))); title != "Trip notes" {
		t.Fatalf("the imported document is listed as %q", title)
	}
}

// Enter in the middle of a paragraph splits it: the first half keeps the
// block's id, the second gets a new one, and both reach the server.
func TestSplitKeepsFirstHalfID(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Split", [2]string{"p1", "FirstSecond"})
	ctx := openDoc(t, d, doc)
	must(t, ctx, eval(`(() => {
		const el = document.querySelector('.ProseMirror [data-block-id="p1"]');
		el.closest('.ProseMirror').focus();
		const r = document.createRange(); r.setStart(el.firstChild, 'First'.length); r.collapse(true);
		const s = getSelection(); s.removeAllRanges(); s.addRange(r);
		return true; })()`), pressEnter())
	waitJS(t, ctx, `document.querySelectorAll('.ProseMirror > p').length === 2 && document.querySelector('#sync-status').dataset.syncState === 'saved'`)
	got := d.draftText(doc)
	if got["p1"] != "First" || len(got) != 2 {
		t.Fatalf("after the split the server holds %q, want p1 = First and one more block", got)
	}
	for id, text := range got {
		if id != "p1" && text != "Second" {
			t.Fatalf("the second half is %s = %q, want Second", id, text)
		}
	}
}

// pressEnter is one Enter key press as a keyboard sends it: a key down the
// editor handles (it splits the block) and a key up, without the separate
// character event chromedp.KeyEvent adds, which the page would read as a
// second Enter.
func pressEnter() step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13}); err != nil {
				return err
			}
		}
		return nil
	})
}
