package e2e

import (
	"os"
	"path/filepath"
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
