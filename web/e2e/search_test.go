package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The document list's search box finds documents by the words of their
// body, Chinese included, shows the text around the match with the words
// marked, and is used with the keyboard alone: type, Enter, arrow down
// to a result, Enter opens it; Escape brings the list back.
func TestDocumentSearch(t *testing.T) {
	d := startDaemon(t)
	garden := d.newDoc("Garden notes", [2]string{"p1", "Tomatoes ripen in August, before the first frost."})
	d.newDoc("北京的秋天", [2]string{"p1", "故宫的红墙和银杏叶。"})
	d.newDoc("Sourdough", [2]string{"p1", "Feed the starter twice a day."})
	ctx := tab(t)
	signIn(t, ctx, d)

	must(t, ctx, chromedp.Focus(css(`#doc-search`)), chromedp.KeyEvent("ripen"), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.getElementById('search-results').dataset.query === 'ripen' && !document.getElementById('search-results').hidden`)
	if got := text(t, ctx, `#search-results`); !strings.Contains(got, "Garden notes") || strings.Contains(got, "Sourdough") {
		t.Fatalf("results for ripen: %q", got)
	}
	if got := get(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#search-results mark')].map((m) => m.textContent).join(',')`)); got != "ripen" {
		t.Fatalf("marked words: %q, want ripen", got)
	}
	if !get(t, ctx, chromedp.Evaluate[bool](`document.getElementById('doc-list').hidden`)) {
		t.Fatal("the document list is still shown under the results")
	}
	if got := text(t, ctx, `#search-status`); got != "1 document contains “ripen”." {
		t.Fatalf("status: %q", got)
	}
	screenshot(t, ctx, "search-results")
	axeBoth(t, ctx, "search results")

	// Chinese, typed as one input (as an input method commits it).
	must(t, ctx, chromedp.Focus(css(`#doc-search`)), eval(`(() => { const s = document.getElementById('doc-search'); s.select(); return true; })()`), insertText("银杏"))
	waitJS(t, ctx, `document.getElementById('search-results').dataset.query === '银杏'`)
	if got := get(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#search-results .doc-title')].map((m) => m.textContent).join(',') + '|' + [...document.querySelectorAll('#search-results mark')].map((m) => m.textContent).join(',')`)); got != "北京的秋天|银杏" {
		t.Fatalf("results for 银杏: %q", got)
	}

	// Nothing found says so; Escape clears the box and shows the list.
	must(t, ctx, eval(`(() => { document.getElementById('doc-search').select(); return true; })()`), chromedp.KeyEvent("frostbite"), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.getElementById('search-results').dataset.query === 'frostbite'`)
	if got := text(t, ctx, `#search-status`); got != "No document contains “frostbite”." {
		t.Fatalf("status: %q", got)
	}
	must(t, ctx, chromedp.KeyEvent(kb.Escape))
	waitJS(t, ctx, `!document.getElementById('doc-list').hidden && document.getElementById('search-results').hidden && document.getElementById('doc-search').value === '' && document.activeElement.id === 'doc-search'`)

	// Keyboard alone: arrow down to the result, Enter opens it.
	must(t, ctx, chromedp.KeyEvent("frost"), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.getElementById('search-results').dataset.query === 'frost'`)
	must(t, ctx, chromedp.KeyEvent(kb.ArrowDown))
	waitJS(t, ctx, `document.activeElement.classList.contains('search-hit')`)
	must(t, ctx, chromedp.KeyEvent(kb.ArrowUp))
	waitJS(t, ctx, `document.activeElement.id === 'doc-search'`)
	must(t, ctx, chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	if url := get(t, ctx, chromedp.Evaluate[string](`location.pathname`)); url != "/d/"+garden {
		t.Fatalf("Enter on the result opened %s, want /d/%s", url, garden)
	}
}
