package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// Restoring the first version from the versions panel of one tab brings
// the document back in that tab and, live, in another one.
func TestRestoreVersionLive(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Versions", [2]string{"p1", "Version one."})
	a := openDoc(t, d, doc)
	b := openDoc(t, d, doc)
	must(t, a, caretAtEnd("p1"), insertText(" Changed."))
	waitSynced(t, a)
	waitJS(t, b, `(document.querySelector('.ProseMirror [data-block-id="p1"]')||{}).textContent === 'Version one. Changed.'`)
	must(t, a, chromedp.Click(css(`#versions`)), chromedp.WaitVisible(css(`#versions-list button[data-restore="v1.r0"]`)))
	screenshot(t, a, "editor-versions")
	must(t, a, chromedp.Click(css(`#versions-list button[data-restore="v1.r0"]`)))
	want := fmt.Sprintf(`(document.querySelector('.ProseMirror [data-block-id="p1"]')||{}).textContent === %q && document.querySelector('#sync-status').dataset.syncState === 'saved'`, "Version one.")
	waitJS(t, a, want)
	waitJS(t, b, want)
	if got := d.draftText(doc)["p1"]; got != "Version one." {
		t.Fatalf("after the restore the server's draft holds %q", got)
	}
}
