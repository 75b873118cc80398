package e2e

import (
	"strings"
	"testing"

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
