package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// startDaemonWith runs folio serve with a configuration file of toml.
func startDaemonWith(t testing.TB, toml string) *daemon {
	t.Helper()
	d := &daemon{t: t, dir: t.TempDir()}
	conf := filepath.Join(t.TempDir(), "folio.toml")
	if err := os.WriteFile(conf, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	d.env = []string{"FOLIO_CONFIG=" + conf}
	d.start("127.0.0.1:0")
	return d
}

// selectPassage selects the characters [from, to) of the first text of
// the element sel, as a reader dragging over them would.
func selectPassage(sel string, from, to int) step {
	return eval(fmt.Sprintf(`(() => {
		const n = document.querySelector(%q).firstChild;
		const r = document.createRange();
		r.setStart(n, %d); r.setEnd(n, %d);
		const s = document.getSelection(); s.removeAllRanges(); s.addRange(r);
		return s.toString(); })()`, sel, from, to))
}

// The reading assistant on the public page of an article, by keyboard:
// select a passage, Tab to "Explain" (it follows the selected block),
// Enter; the answer streams into a
// popover labelled extractive (the local engine answered), which Escape
// closes. The visitor's per-minute limit is answered in words, not as a
// failure; axe in both themes over the open popover.
func TestReadingPopover(t *testing.T) {
	d := startDaemonWith(t, "[reading]\nvisitor_per_minute = 2\n")
	d.publishDoc("Storage engines", "public",
		[2]string{"p1", "An LSM tree buffers writes in memory and flushes them as sorted runs. Compaction merges the runs in the background."},
		[2]string{"p2", "Reads consult the memtable first, then each level from newest to oldest."})
	var slug string
	var pubs struct {
		Articles []struct {
			Slug string `json:"slug"`
		} `json:"articles"`
	}
	d.api("GET", "/v1/public/articles", nil, &pubs)
	if len(pubs.Articles) != 1 {
		t.Fatalf("public articles: %+v", pubs)
	}
	slug = pubs.Articles[0].Slug
	ctx := tab(t)
	must(t, ctx, chromedp.Navigate(d.url+"/a/"+slug), chromedp.WaitVisible(css(`.post [data-block="p1"]`)))
	if !get(t, ctx, chromedp.Evaluate[bool](`document.getElementById('explain-button').hidden`)) {
		t.Fatal("the Explain button shows before anything is selected")
	}
	passage := get(t, ctx, chromedp.Evaluate[string](`document.querySelector('.post [data-block="p1"]').textContent.slice(0, 70)`))
	must(t, ctx, selectPassage(`.post [data-block="p1"]`, 0, len(passage)), chromedp.WaitVisible(css(`#explain-button`)))
	// Keyboard: the Explain button is in the tab order right after the
	// selected block, before the links of the footer.
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatal("10 tabs did not reach the Explain button")
		}
		must(t, ctx, chromedp.KeyEvent(kb.Tab))
		id := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.closest('footer') ? 'footer' : document.activeElement.id`))
		if id == "footer" {
			t.Fatal("Tab reached the footer before the Explain button")
		}
		if id == "explain-button" {
			break
		}
	}
	must(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#explain-popover`)),
		chromedp.WaitVisible(css(`#explain-popover[data-state="done"]`)))
	if id := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.id`)); id != "explain-title" {
		t.Fatalf("the open popover leaves the focus on %q", id)
	}
	if got := text(t, ctx, `#explain-passage`); got != strings.TrimSpace(passage) {
		t.Fatalf("the popover quotes %q, want the selection %q", got, passage)
	}
	if got := text(t, ctx, `#explain-label`); !strings.Contains(got, "Extractive") || !strings.Contains(got, "no model") {
		t.Fatalf("the local engine's answer is labelled %q", got)
	}
	answer := text(t, ctx, `#explain-answer`)
	if !strings.Contains(answer, "Compaction merges the runs") && !strings.Contains(answer, "sorted runs") {
		t.Fatalf("the answer does not draw on the article: %q", answer)
	}
	screenshot(t, ctx, "reading-popover")
	axeBoth(t, ctx, "reading popover")
	// Escape closes it and gives the focus back to the button.
	must(t, ctx, chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(css(`#explain-popover`)))
	if id := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.id`)); id != "explain-button" {
		t.Fatalf("Escape leaves the focus on %q", id)
	}

	// The limit is two a minute: the second answers, the third is turned
	// away politely with the time to wait.
	must(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#explain-popover[data-state="done"]`)),
		chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(css(`#explain-popover`)),
		selectPassage(`.post [data-block="p2"]`, 0, 20))
	// The page moves the button after the newly selected block when the
	// selection changes (a moved node is a new one to the DevTools
	// protocol): click it once it is there.
	waitJS(t, ctx, `(() => { const b = document.getElementById('explain-button'), p = document.querySelector('.post [data-block="p2"]'); return !b.hidden && !!p && b.previousElementSibling === p.closest('[data-explain] > *'); })()`)
	must(t, ctx, chromedp.Click(css(`#explain-button`)), chromedp.WaitVisible(css(`#explain-popover[data-state="limited"]`)))
	if got, want := text(t, ctx, `#explain-passage`), "Reads consult the me"; got != want {
		t.Fatalf("the popover quotes %q, want the new selection %q", got, want)
	}
	msg := text(t, ctx, `#explain-status`)
	if !strings.Contains(msg, "Please try again in") || !strings.Contains(msg, "seconds") || strings.Contains(msg, "429") {
		t.Fatalf("the visitor limit reads %q", msg)
	}
	if got := text(t, ctx, `#explain-answer`); got != "" {
		t.Fatalf("a refused request shows an answer: %q", got)
	}
	screenshot(t, ctx, "reading-popover-limited")
	axeBoth(t, ctx, "reading popover, visitor limited")
}
