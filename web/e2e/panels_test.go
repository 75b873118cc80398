package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The versions and publish panels: compare, block restore, explain and
// the published mark; publishing with the attributes assistant; the
// document list's markers; all of it keyboard-only and checked by axe.

// axeBoth runs axe-core in the light and the dark theme.
func axeBoth(t testing.TB, ctx context.Context, state string) {
	t.Helper()
	src := axeSource(t)
	for _, th := range []string{"light", "dark"} {
		must(t, ctx, theme(th))
		checkAxe(t, ctx, src, state+" ("+th+")")
	}
	must(t, ctx, theme("light"))
}

// text is the text content of the first element matching sel ("" when none).
func text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, sel)))
}

// checkpoint seals the draft over the API and returns the label.
func (d *daemon) checkpoint(doc, message string) string {
	d.t.Helper()
	var v struct {
		Version struct {
			Label string `json:"label"`
		} `json:"version"`
	}
	d.api("POST", "/v1/docs/"+doc+"/checkpoint", map[string]any{"message": message}, &v)
	return v.Version.Label
}

// acceptSix asks the editing preset six-rules on block over the API,
// waits for the run to end (its event stream closes then) and accepts the
// suggestion: a version of kind accept_suggestion.
func (d *daemon) acceptSix(doc, block string) string {
	d.t.Helper()
	var q struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	d.api("POST", "/v1/docs/"+doc+"/assist", map[string]any{"scope": map[string]any{"kind": "block", "block": block}, "editingPreset": "six-rules"}, &q)
	req, _ := http.NewRequest("GET", d.url+"/v1/runs/"+q.Run.ID+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body) // the stream ends with the run's final event
	res.Body.Close()
	var run struct {
		State      string `json:"state"`
		Suggestion string `json:"suggestion"`
	}
	d.api("GET", "/v1/runs/"+q.Run.ID, nil, &run)
	if run.Suggestion == "" {
		d.t.Fatalf("six-rules proposed nothing on %s (run %s %s)", block, q.Run.ID, run.State)
	}
	var acc struct {
		Version struct {
			Label string `json:"label"`
		} `json:"version"`
	}
	d.api("POST", "/v1/suggestions/"+run.Suggestion+"/accept", map[string]any{}, &acc)
	return acc.Version.Label
}

// Compare a version with the draft (block and word diff), restore one
// block from it (live in a second tab), see the published mark move, and
// explain a version made by hand and one the assistant made.
func TestVersionsCompareRestoreBlockExplain(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Versions", [2]string{"p1", "The quick brown fox."}, [2]string{"p2", "Second block stays."},
		[2]string{"p3", "Third will go."}, [2]string{"p5", fillerText})
	// v1.r1: p1 changed, p3 removed, p4 added (CJK).
	var draft struct {
		Seq uint64 `json:"seq"`
	}
	d.api("GET", "/v1/docs/"+doc+"/draft", nil, &draft)
	d.api("POST", "/v1/docs/"+doc+"/draft", map[string]any{"baseSeq": draft.Seq, "changes": []map[string]any{
		{"op": "upsert", "block": map[string]any{"id": "p1", "type": "paragraph", "richText": []map[string]any{{"text": "The quick red fox jumps."}}}},
		{"op": "delete", "blockId": "p3"},
		{"op": "upsert", "after": "p2", "block": map[string]any{"id": "p4", "type": "paragraph", "richText": []map[string]any{{"text": "新的中文段落。"}}}},
	}}, nil)
	if l := d.checkpoint(doc, "second take"); l != "v1.r1" {
		t.Fatalf("checkpoint made %s", l)
	}
	aiLabel := d.acceptSix(doc, "p5") // v1.r2, by the assistant
	a := openDoc(t, d, doc)
	b := openDoc(t, d, doc)
	// Unsealed typing in p2: the draft differs from every version.
	typeInBlock(t, a, "p2", " Typed.")
	waitSynced(t, a)
	waitJS(t, b, `(document.querySelector('.ProseMirror [data-block-id="p2"]')||{}).textContent === 'Second block stays. Typed.'`)

	must(t, a, chromedp.Click(css(`#versions`)), chromedp.WaitVisible(css(`#versions-panel[data-loaded="true"] li[data-label="v1.r0"]`)))
	if m := text(t, a, `#versions-list li[data-label="`+aiLabel+`"] [data-mark="assistant"]`); m == "" {
		t.Fatalf("the version %s the assistant made carries no mark", aiLabel)
	}
	axeBoth(t, a, "versions panel")
	// Compare v1.r0 with the current draft.
	must(t, a, chromedp.SetValue(css(`#compare-from`), "v1.r0"), chromedp.SetValue(css(`#compare-to`), "draft"),
		chromedp.Click(css(`#compare-run`)), chromedp.WaitVisible(css(`#versions-diff:not([hidden]) #diff-blocks li`)))
	kinds := get(t, a, chromedp.Evaluate[string](`[...document.querySelectorAll('#diff-blocks li')].map((li) => li.dataset.block + ':' + li.dataset.kind).sort().join(' ')`))
	if kinds != "p1:modified p2:modified p3:deleted p4:added p5:modified" {
		t.Fatalf("v1.r0 → draft shows %q", kinds)
	}
	del := text(t, a, `#diff-blocks li[data-block="p1"] del`)
	ins := get(t, a, chromedp.Evaluate[string](`[...document.querySelectorAll('#diff-blocks li[data-block="p1"] ins')].map((e) => e.textContent).join('|')`))
	if !strings.Contains(del, "brown") || !strings.Contains(ins, "red") || !strings.Contains(ins, "jumps") {
		t.Fatalf("p1's word diff: struck %q, inserted %q", del, ins)
	}
	if got := text(t, a, `#diff-blocks li[data-block="p4"] ins`); got != "新的中文段落。" {
		t.Fatalf("the added CJK block shows %q", got)
	}
	if got := text(t, a, `#diff-blocks li[data-block="p3"] del`); got != "Third will go." {
		t.Fatalf("the removed block shows %q", got)
	}
	if got := text(t, a, `#diff-blocks li[data-block="p2"] ins`); !strings.Contains(got, "Typed.") {
		t.Fatalf("the unsealed typing is not in the comparison: %q", got)
	}
	screenshot(t, a, "versions-compare")
	axeBoth(t, a, "versions comparison")

	// Two versions of the log: v1.r0 → v1.r1 has no p2 change.
	must(t, a, chromedp.SetValue(css(`#compare-to`), "v1.r1"), chromedp.Click(css(`#compare-run`)))
	waitJS(t, a, `document.getElementById('versions-diff').dataset.to === 'v1.r1' && !document.querySelector('#diff-blocks li[data-block="p2"]') && !!document.querySelector('#diff-blocks li[data-block="p3"]')`)

	// Restore p1 alone from v1.r0: both tabs show it, p2 keeps the typing.
	must(t, a, chromedp.Click(css(`#diff-blocks li[data-block="p1"] button[data-from="v1.r0"]`)))
	want := `(document.querySelector('.ProseMirror [data-block-id="p1"]')||{}).textContent === 'The quick brown fox.'`
	waitJS(t, a, want)
	waitJS(t, b, want)
	if got := blockText(t, b, "p2"); got != "Second block stays. Typed." {
		t.Fatalf("a block restore changed another block: p2 is %q", got)
	}
	if got := d.draftText(doc); got["p1"] != "The quick brown fox." || got["p4"] != "新的中文段落。" {
		t.Fatalf("after the block restore the server's draft holds %v", got)
	}
	waitJS(t, a, `/^Restored the block from v1\.r0 as v/.test(document.getElementById('versions-status').textContent)`)

	// The published mark follows a publish made elsewhere (the API), live.
	d.api("POST", "/v1/docs/"+doc+"/publish", map[string]any{}, nil)
	waitJS(t, a, `document.querySelectorAll('#versions-list li[data-published="true"]').length === 1`)
	var log []struct {
		Label     string `json:"label"`
		Published bool   `json:"published"`
	}
	d.api("GET", "/v1/docs/"+doc+"/log", nil, &log)
	if got := get(t, a, chromedp.Evaluate[string](`document.querySelector('#versions-list li[data-published="true"]').dataset.label`)); !log[0].Published || got != log[0].Label {
		t.Fatalf("the panel marks %s published; the log says %+v", got, log[0])
	}

	// Explain: by hand, and by the assistant (what its run used).
	must(t, a, chromedp.Click(css(`button[data-explain="v1.r1"]`)), chromedp.WaitVisible(css(`#explain-v1\.r1[data-loaded="true"]`)))
	if got := text(t, a, `#explain-v1\.r1`); !strings.Contains(got, "made by hand") {
		t.Fatalf("explain of a checkpoint: %q", got)
	}
	sel := `#explain-` + strings.ReplaceAll(aiLabel, ".", `\.`)
	must(t, a, chromedp.Click(css(`button[data-explain="`+aiLabel+`"]`)), chromedp.WaitVisible(css(sel+`[data-loaded="true"]`)))
	got := text(t, a, sel)
	for _, w := range []string{"accepted suggestion", "editing preset", "v1", "local", "block p5", "tokens"} {
		if !strings.Contains(got, w) {
			t.Fatalf("explain of %s lacks %q: %q", aiLabel, w, got)
		}
	}
	screenshot(t, a, "versions-explain")
	axeBoth(t, a, "versions explain")
}

// The publish panel: the attributes assistant's proposals taken one by
// one, refusals in words (slug taken, password too short), publish with
// the public URL, republish, visibility, unpublish; the document list's
// updated time and published marker, newest first.
func TestPublishPanel(t *testing.T) {
	d := startDaemon(t)
	d.api("POST", "/v1/categories", map[string]any{"name": "Databases"}, nil)
	d.api("POST", "/v1/tags", map[string]any{"name": "pebble"}, nil)
	var other struct {
		Doc string `json:"doc"`
	}
	d.api("POST", "/v1/docs", map[string]any{"attrs": map[string]any{"title": "Other", "slug": "taken"},
		"body": map[string]any{"schemaVersion": 1, "blocks": []map[string]any{{"id": "o1", "type": "paragraph", "richText": []map[string]any{{"text": "Other."}}}}}}, &other)
	d.api("POST", "/v1/docs/"+other.Doc+"/publish", map[string]any{}, nil)
	doc := d.newDoc("Storage engines", [2]string{"p1", "Pebble is an LSM storage engine for databases. Writes land in a log first."},
		[2]string{"p2", "Databases built on pebble compact their files in the background."})
	a := openDoc(t, d, doc)
	must(t, a, chromedp.Click(css(`#publish-open`)), chromedp.WaitVisible(css(`#publish-panel[data-loaded="true"]`)))
	if got := text(t, a, `#publish-state`); !strings.Contains(got, "not published") {
		t.Fatalf("publish state %q", got)
	}
	screenshot(t, a, "publish-panel")
	axeBoth(t, a, "publish panel")

	// The attributes assistant, offline: what it proposes and its limits.
	must(t, a, chromedp.Click(css(`#attrs-suggest`)), chromedp.WaitVisible(css(`#attrs-suggestion[data-provider="local"] [data-accept="summary"]`)))
	if note := text(t, a, `#attrs-provider`); !strings.Contains(note, "offline engine") || !strings.Contains(note, "never invents") || !strings.Contains(note, "only for an untitled article") {
		t.Fatalf("the offline limits are not said: %q", note)
	}
	if dis := get(t, a, chromedp.Evaluate[bool](`document.querySelector('[data-accept="title"]').disabled`)); !dis {
		t.Fatal("a title is offered for an article that has one")
	}
	if got := text(t, a, `#attrs-suggestion li[data-field="category"] .sugg-value`); got != "Databases" {
		t.Fatalf("suggested category %q", got)
	}
	if got := text(t, a, `#attrs-suggestion li[data-field="tags"] .sugg-value`); got != "pebble" {
		t.Fatalf("suggested tags %q", got)
	}
	summary := text(t, a, `#attrs-suggestion li[data-field="summary"] .sugg-value`)
	if !strings.Contains(summary, "Pebble") {
		t.Fatalf("suggested summary %q", summary)
	}
	screenshot(t, a, "publish-suggestion")
	axeBoth(t, a, "attributes suggestion")
	// Nothing is saved until a value is used; then it is, one by one.
	var dr struct {
		Attrs map[string]any `json:"attrs"`
	}
	d.api("GET", "/v1/docs/"+doc+"/draft", nil, &dr)
	if dr.Attrs["summary"] != nil || dr.Attrs["category"] != nil {
		t.Fatalf("a suggestion was saved before it was used: %v", dr.Attrs)
	}
	must(t, a, chromedp.Click(css(`[data-accept="summary"]`)), chromedp.Click(css(`[data-accept="category"]`)), chromedp.Click(css(`[data-accept="tags"]`)))
	waitJS(t, a, `document.querySelectorAll('[data-accept][data-used="true"]').length === 3`)
	waitSynced(t, a)
	d.api("GET", "/v1/docs/"+doc+"/draft", nil, &dr)
	if dr.Attrs["summary"] != summary || dr.Attrs["category"] != "Databases" || fmt.Sprint(dr.Attrs["tags"]) != "[pebble]" || dr.Attrs["slug"] != nil {
		t.Fatalf("after using summary, category and tags the draft's attributes are %v", dr.Attrs)
	}

	// Refusals in words.
	must(t, a, chromedp.SendKeys(css(`#pub-slug`), "taken"), chromedp.Click(css(`#publish-run`)))
	waitJS(t, a, `/slug “taken” is taken/.test(document.getElementById('publish-error').textContent)`)
	screenshot(t, a, "publish-error")
	axeBoth(t, a, "publish error")
	must(t, a, chromedp.Click(css(`#pub-vis-password`)), chromedp.WaitVisible(css(`#pub-password`)),
		clear(`#pub-slug`), chromedp.SendKeys(css(`#pub-slug`), "storage-engines"),
		chromedp.SendKeys(css(`#pub-password`), "short"), chromedp.Click(css(`#publish-run`)))
	waitJS(t, a, `/at least 8 characters/.test(document.getElementById('publish-error').textContent)`)
	if n := len(d.logKinds(doc)); n != 1 {
		t.Fatalf("refused publishes made versions: %v", d.logKinds(doc))
	}

	// Publish, public: the result names the URL, which opens the site's page.
	must(t, a, chromedp.Click(css(`#pub-vis-public`)), chromedp.Click(css(`#publish-run`)),
		chromedp.WaitVisible(css(`#publish-result[data-outcome="published"] #publish-link`)))
	href := get(t, a, chromedp.Evaluate[string](`document.querySelector('#publish-result #publish-link').href`))
	if href != d.url+"/a/storage-engines" || text(t, a, `#publish-error`) != "" {
		t.Fatalf("published link %q, error %q", href, text(t, a, `#publish-error`))
	}
	if got := text(t, a, `#publish-result`); !strings.Contains(got, "sealed as v1.r1") {
		t.Fatalf("the result does not say the draft (with its new attributes) was sealed: %q", got)
	}
	if got := text(t, a, `#publish-state`); !strings.Contains(got, "published") || !strings.Contains(got, "public") {
		t.Fatalf("state after publish %q", got)
	}
	screenshot(t, a, "publish-done")
	axeBoth(t, a, "published")
	site := tab(t)
	must(t, site, chromedp.Navigate(href), chromedp.WaitVisible(css(`h1`)))
	if got := get(t, site, chromedp.Evaluate[int](`document.querySelectorAll('h1').length`)); got != 1 || !strings.Contains(get(t, site, chromedp.Text(css(`h1`))), "Storage engines") {
		t.Fatalf("the public page shows %d h1: %q", got, get(t, site, chromedp.Text(css(`body`))))
	}

	// Republish after an edit: a new version moves forward.
	typeInBlock(t, a, "p2", " More.")
	waitSynced(t, a)
	if b := text(t, a, `#publish-run`); b != "Republish" {
		t.Fatalf("the publish button of a published article says %q", b)
	}
	must(t, a, chromedp.Click(css(`#publish-run`)))
	waitJS(t, a, `/before: v1\.r1/.test(document.getElementById('publish-result').textContent) && /sealed as v1\.r2/.test(document.getElementById('publish-result').textContent)`)

	// Visibility only: a short password is refused, a good one applies.
	must(t, a, chromedp.Click(css(`#pub-vis-password`)), clear(`#pub-password`), chromedp.SendKeys(css(`#pub-password`), "short"), chromedp.Click(css(`#visibility-run`)))
	waitJS(t, a, `/at least 8 characters/.test(document.getElementById('publish-error').textContent)`)
	must(t, a, clear(`#pub-password`), chromedp.SendKeys(css(`#pub-password`), "long enough pw"), chromedp.Click(css(`#visibility-run`)))
	waitJS(t, a, `document.getElementById('publish-result').dataset.outcome === 'visibility' && document.getElementById('publish-panel').dataset.visibility === 'password'`)
	if v := get(t, a, chromedp.Value(css(`#pub-password`))); v != "" {
		t.Fatalf("the password stays in the page: %q", v)
	}

	// The document list: updated time, published marker, newest first.
	must(t, a, chromedp.Navigate(d.url+"/app"), chromedp.WaitVisible(css(`.doc-link`)))
	first := text(t, a, `#doc-list li:first-child .doc-title`)
	mark := get(t, a, chromedp.Evaluate[string](`[...document.querySelectorAll('#doc-list .badge.published')].map((b) => b.closest('a').querySelector('.doc-title').textContent + '=' + b.textContent).sort().join(',')`))
	if first != "Storage engines" || mark != "Other=published,Storage engines=published · password" {
		t.Fatalf("document list: first %q, published marks %q", first, mark)
	}
	if got := text(t, a, `#doc-list li:first-child time`); !strings.HasPrefix(got, "updated ") {
		t.Fatalf("the list's time says %q", got)
	}
	screenshot(t, a, "list-published")
	axeBoth(t, a, "document list with markers")

	// Unpublish: the page answers not found.
	must(t, a, chromedp.Navigate(d.url+"/d/"+doc), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)),
		chromedp.Click(css(`#publish-open`)), chromedp.WaitVisible(css(`#publish-panel[data-published="true"] #unpublish-run`)),
		chromedp.Click(css(`#unpublish-run`)), chromedp.WaitVisible(css(`#publish-result[data-outcome="unpublished"]`)))
	res, err := http.Get(d.url + "/a/storage-engines")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Fatalf("after unpublish /a/storage-engines answers %d", res.StatusCode)
	}

	// An untitled article: the assistant proposes a title, taken with Use.
	untitled := d.newDoc("Untitled", [2]string{"u1", "Compaction keeps reads fast. It merges sorted tables."})
	must(t, a, chromedp.Navigate(d.url+"/d/"+untitled), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)),
		chromedp.Click(css(`#publish-open`)), chromedp.WaitVisible(css(`#publish-panel[data-loaded="true"]`)),
		chromedp.Click(css(`#attrs-suggest`)), chromedp.WaitVisible(css(`#attrs-suggestion [data-accept="title"]:not([disabled])`)))
	if got := text(t, a, `#attrs-suggestion li[data-field="title"] .sugg-value`); got != "Compaction keeps reads fast" {
		t.Fatalf("proposed title %q", got)
	}
	must(t, a, chromedp.Click(css(`[data-accept="title"]`)))
	waitJS(t, a, `document.getElementById('doc-title').value === 'Compaction keeps reads fast'`)
	waitSynced(t, a)
	d.api("GET", "/v1/docs/"+untitled+"/draft", nil, &dr)
	if dr.Attrs["title"] != "Compaction keeps reads fast" {
		t.Fatalf("after using the title the draft's attributes are %v", dr.Attrs)
	}
}

// clear empties a form field (the next SendKeys types into it).
func clear(sel string) step {
	return eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = ''; return true; })()`, sel))
}

// tabToMatch presses Tab until the focused element matches sel.
func tabToMatch(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	for i := 0; i < 80; i++ {
		if get(t, ctx, chromedp.Evaluate[bool](fmt.Sprintf(`!!(document.activeElement && document.activeElement.matches(%q))`, sel))) {
			return
		}
		must(t, ctx, chromedp.KeyEvent(kb.Tab))
	}
	t.Fatalf("Tab never reached %s", sel)
}

// The versions and publish panels with the keyboard alone.
func TestPanelsKeyboardOnly(t *testing.T) {
	d := startDaemon(t)
	d.api("POST", "/v1/categories", map[string]any{"name": "Databases"}, nil)
	doc := d.newDoc("Keyboard panels", [2]string{"p1", "Databases keep their data in files."}, [2]string{"p2", "Second."})
	a := openDoc(t, d, doc)
	typeInBlock(t, a, "p1", " Edited.")
	waitSynced(t, a)
	must(t, a, eval(`document.activeElement.blur(), true`))

	// Versions: open, compare v1.r0 with the draft, restore p1 from it.
	tabToMatch(t, a, `#versions`)
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `document.activeElement.id === 'versions-title' && document.getElementById('versions-panel').dataset.loaded === 'true'`)
	tabToMatch(t, a, `#compare-run`)
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `document.activeElement.id === 'diff-title' && !!document.querySelector('#diff-blocks li[data-block="p1"]')`)
	tabToMatch(t, a, `button[data-restore-block="p1"]`)
	screenshot(t, a, "versions-keyboard")
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `(document.querySelector('.ProseMirror [data-block-id="p1"]')||{}).textContent === 'Databases keep their data in files.'`)
	tabToMatch(t, a, `button[data-explain="v1.r0"]`)
	must(t, a, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#explain-v1\.r0[data-loaded="true"]`)))
	must(t, a, chromedp.KeyEvent(kb.Escape))
	waitJS(t, a, `document.getElementById('versions-panel').hidden && document.activeElement.id === 'versions'`)

	// Publish: open, take the suggested category, publish.
	tabToMatch(t, a, `#publish-open`)
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `document.activeElement.id === 'publish-title' && document.getElementById('publish-panel').dataset.loaded === 'true'`)
	tabToMatch(t, a, `#attrs-suggest`)
	must(t, a, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`[data-accept="category"]`)))
	tabToMatch(t, a, `[data-accept="category"]`)
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `document.getElementById('pub-category').value === 'Databases'`)
	// The visibility radios move with the arrow keys.
	tabToMatch(t, a, `#pub-vis-public`)
	must(t, a, chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	waitJS(t, a, `document.getElementById('pub-vis-private').checked`)
	tabToMatch(t, a, `#publish-run`)
	must(t, a, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#publish-result[data-outcome="published"]`)))
	screenshot(t, a, "publish-keyboard")
	var st struct {
		Visibility struct {
			Visibility string `json:"visibility"`
		} `json:"visibility"`
		Publication *struct {
			Category string `json:"category"`
		} `json:"publication"`
	}
	d.api("GET", "/v1/docs/"+doc+"/publication", nil, &st)
	if st.Publication == nil || st.Publication.Category != "Databases" || st.Visibility.Visibility != "private" {
		t.Fatalf("published by keyboard: %+v", st)
	}
	must(t, a, chromedp.KeyEvent(kb.Escape))
	waitJS(t, a, `document.getElementById('publish-panel').hidden && document.activeElement.id === 'publish-open'`)
}

// A block's history from the block menu (keyboard: Alt+/, arrows,
// Enter): every revision with its text, one restored, live in a second
// tab.
func TestBlockHistoryFromMenu(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("History", [2]string{"p1", "One."}, [2]string{"p2", "Other block."})
	d.saveBlock(doc, "p1", "Two.")
	d.checkpoint(doc, "")
	a := openDoc(t, d, doc)
	b := openDoc(t, d, doc)
	typeInBlock(t, a, "p1", " Three.")
	waitSynced(t, a)
	alt := chromedp.KeyModifiers(chromedp.ModifierAlt)
	must(t, a, caretAtEnd("p1"), chromedp.KeyEvent("/", alt))
	waitJS(t, a, `document.activeElement && document.activeElement.id === 'ask-block'`)
	for i := 0; i < 5 && get(t, a, chromedp.Evaluate[string](`document.activeElement.id`)) != "block-history-open"; i++ {
		must(t, a, chromedp.KeyEvent(kb.ArrowDown))
	}
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `document.querySelectorAll('#history-list > li').length === 2`)
	if id := get(t, a, chromedp.Evaluate[string](`document.activeElement.id`)); id != "history-title" {
		t.Fatalf("the history opens with the focus on %q", id)
	}
	if got := get(t, a, chromedp.Evaluate[string](`[...document.querySelectorAll('#history-list details')].map((d) => d.dataset.label).join(',')`)); got != "v1.r1,v1.r0" {
		t.Fatalf("history of p1: %s", got)
	}
	// Open v1.r0 with the keyboard and restore it.
	tabToMatch(t, a, `#history-list details[data-label="v1.r0"] summary`)
	must(t, a, chromedp.KeyEvent(kb.Enter))
	waitJS(t, a, `document.querySelector('#history-list details[data-label="v1.r0"]').dataset.loaded === 'true'`)
	if got := text(t, a, `#history-list details[data-label="v1.r0"] .diff-text`); got != "One." {
		t.Fatalf("v1.r0's p1 shows %q", got)
	}
	screenshot(t, a, "block-history")
	axeBoth(t, a, "block history")
	tabToMatch(t, a, `button[data-restore-revision="v1.r0"]`)
	must(t, a, chromedp.KeyEvent(kb.Enter))
	want := `(document.querySelector('.ProseMirror [data-block-id="p1"]')||{}).textContent === 'One.'`
	waitJS(t, a, want)
	waitJS(t, b, want)
	if got := d.draftText(doc); got["p1"] != "One." || got["p2"] != "Other block." {
		t.Fatalf("after restoring p1 from v1.r0 the draft holds %v", got)
	}
	// The history now has the restore on top.
	waitJS(t, a, `document.querySelectorAll('#history-list > li').length >= 3`)
}
