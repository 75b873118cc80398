package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// publishDoc makes a document of paragraphs and publishes it with the
// visibility.
func (d *daemon) publishDoc(title, visibility string, paras ...[2]string) string {
	d.t.Helper()
	doc := d.newDoc(title, paras...)
	d.api("POST", "/v1/docs/"+doc+"/publish", map[string]any{"visibility": visibility}, nil)
	return doc
}

// press scrolls the element to the middle of the window (clear of the
// sticky top bar) and clicks it.
func press(sel string) step {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		for _, a := range []step{chromedp.WaitVisible(css(sel)),
			eval(fmt.Sprintf(`document.querySelector(%q).scrollIntoView({block: 'center'}), true`, sel)),
			chromedp.Click(css(sel))} {
			if _, err := a(ctx, tg); err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	}
}

// status is the HTTP status of a GET with token.
func (d *daemon) status(path, token string) int {
	d.t.Helper()
	req, _ := http.NewRequest("GET", d.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// The persona screens: create a persona from published articles (an
// unpublished one cannot be chosen; a private one is said to be left out
// of memory, naming the switch), generate a version with its job's state
// shown live, read the style profile and open a claim's evidence (the span
// marked in the source version), the learning rules and the memory (with
// a search), generate again and view the older version; keyboard and axe
// in both themes.
func TestPersonaScreens(t *testing.T) {
	d := startDaemon(t)
	pub := d.publishDoc("加入星火", "public", [2]string{"s1", "我在2019年加入了星火公司，负责搜索。我们每周都发布一次。"}, [2]string{"s2", "后来我在杭州住了五年，写了很多关于搜索的文章。"})
	priv := d.publishDoc("私下的笔记", "private", [2]string{"s1", "我在北京工作了三年。这段经历很重要。"})
	draft := d.newDoc("还没发布", [2]string{"p1", "草稿。"})
	ctx := tab(t)
	signIn(t, ctx, d)
	must(t, ctx, chromedp.Click(css(`#nav-personas`)), chromedp.WaitVisible(css(`#persona-create`)))
	if !get(t, ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.getElementById('src-%s').disabled && !document.getElementById('src-%s').disabled`, draft, pub))) {
		t.Fatal("an unpublished document can be chosen as a source, or a published one cannot")
	}
	screenshot(t, ctx, "personas-list")
	axeBoth(t, ctx, "persona list")
	must(t, ctx, chromedp.SendKeys(css(`#persona-name`), "博客"),
		chromedp.Click(css(`#src-`+pub)), chromedp.Click(css(`#src-`+priv)), chromedp.Click(css(`#create-persona`)),
		chromedp.WaitVisible(css(`#source-status li[data-doc="`+priv+`"]`)))
	if got := text(t, ctx, `#persona-title`); got != "博客" {
		t.Fatalf("the persona page is titled %q", got)
	}
	note := text(t, ctx, `#source-status li[data-doc="`+priv+`"]`)
	if !strings.Contains(note, "left out of memory") || !strings.Contains(note, "[privacy] private_memory") {
		t.Fatalf("the private source says %q, want it left out of memory with the switch", note)
	}
	if strings.Contains(text(t, ctx, `#source-status li[data-doc="`+pub+`"]`), "memory") {
		t.Fatal("the public source has a memory note")
	}

	// Generate: the job's state shows, then the new active version.
	must(t, ctx, chromedp.Click(css(`#generate`)),
		chromedp.WaitVisible(css(`#job-status[data-state="succeeded"]`)),
		chromedp.WaitVisible(css(`#persona-version-list li[data-seq="1"] [data-active]`)),
		chromedp.WaitVisible(css(`#style-rules li`)))
	if got := text(t, ctx, `#job-status`); !strings.Contains(got, "Version 1 generated") {
		t.Fatalf("job status %q", got)
	}
	if got := text(t, ctx, `#persona-active`); got != "active: version 1" {
		t.Fatalf("active %q", got)
	}
	// The pins: each source's label as the version pinned it.
	if got := text(t, ctx, `#source-status li[data-doc="`+pub+`"]`); !strings.Contains(got, "pinned v1.r0") || !strings.Contains(got, "fed memory") {
		t.Fatalf("the public source after generation: %q", got)
	}
	// A claim's evidence opens its span in the source version.
	must(t, ctx, chromedp.Click(css(`#style-rules .evidence-link`)), chromedp.WaitVisible(css(`#evidence-view .evidence-text mark`)))
	mark := text(t, ctx, `#evidence-view mark`)
	quote := text(t, ctx, `#evidence-view .evidence-text`)
	evDoc := get(t, ctx, chromedp.Evaluate[string](`document.querySelector('#evidence-view .evidence-text').dataset.doc`))
	srcText := d.draftText(evDoc)[get(t, ctx, chromedp.Evaluate[string](`document.querySelector('#evidence-view .evidence-text').dataset.block`))]
	if mark == "" || quote != srcText || !strings.Contains(srcText, mark) {
		t.Fatalf("evidence shows %q marked in %q; the source block of %s is %q", mark, quote, evDoc, srcText)
	}
	if id := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.id`)); id != "evidence-title" {
		t.Fatalf("opening evidence leaves the focus on %q", id)
	}
	// Learning: no accepted or rejected suggestions yet, said in words.
	if got := text(t, ctx, `#persona-learning`); !strings.Contains(got, "0 observations") {
		t.Fatalf("learning section %q", got)
	}
	// Memory: the items with sensitivity and status; a search narrows them.
	must(t, ctx, chromedp.WaitVisible(css(`#memory-items li[data-key]`)))
	if got := text(t, ctx, `#memory-items li[data-key]`); !strings.Contains(got, "sensitivity:") || !strings.Contains(got, "status:") {
		t.Fatalf("memory item %q", got)
	}
	if strings.Contains(text(t, ctx, `#memory-items`), "北京") {
		t.Fatal("memory holds an item of the private source")
	}
	screenshot(t, ctx, "persona-version")
	axeBoth(t, ctx, "persona version with evidence")
	must(t, ctx, chromedp.SetValue(css(`#memory-query`), "星火公司"), chromedp.Click(css(`#memory-search button`)),
		chromedp.WaitVisible(css(`#memory-count`)))
	waitJS(t, ctx, `/match/.test(document.getElementById('memory-count').textContent)`)
	if !strings.Contains(text(t, ctx, `#memory-items`), "星火") {
		t.Fatalf("the search for 星火公司 answers %q", text(t, ctx, `#memory-items`))
	}

	// A second generation, then the first version viewed again.
	must(t, ctx, chromedp.Click(css(`#generate`)),
		chromedp.WaitVisible(css(`#persona-version-list li[data-seq="2"] [data-active]`)))
	if n := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#persona-version-list [data-active]').length`)); n != 1 {
		t.Fatalf("%d versions marked active", n)
	}
	must(t, ctx, chromedp.Click(css(`[data-view="1"]`)), chromedp.WaitVisible(css(`#persona-version-list li.current[data-seq="1"]`)))
	waitJS(t, ctx, `document.getElementById('style-title').textContent.endsWith('v1')`)

	// Version 1 made active again: the mark moves, both versions stay.
	must(t, ctx, chromedp.Click(css(`[data-activate="1"]`)),
		chromedp.WaitVisible(css(`#persona-version-list li[data-seq="1"] [data-active]`)))
	if n := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#persona-version-list li').length`)); n != 2 {
		t.Fatalf("%d versions listed after activating version 1", n)
	}
	if get(t, ctx, chromedp.Evaluate[bool](`!!document.querySelector('[data-activate="2"]') && !document.querySelector('[data-activate="1"]')`)) != true {
		t.Fatal("the Activate buttons do not follow the active version")
	}
	screenshot(t, ctx, "persona-activated-v1")

	// Keyboard only: Tab to an evidence link, Enter; to the memory search.
	must(t, ctx, eval(`document.activeElement.blur(), true`))
	tabToMatch(t, ctx, `#style-rules .evidence-link`)
	must(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#evidence-view mark`)))
	tabToMatch(t, ctx, `#memory-query`)
	must(t, ctx, chromedp.KeyEvent("搜索"), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.getElementById('memory-count').textContent.includes('match') && document.activeElement.id === 'memory-query'`)
	screenshot(t, ctx, "persona-keyboard")
}

// The admin screens, on a daemon whose writing runs on an external
// provider set in the shared [ai] section: an author sees no admin link
// and the API refuses them; the admin makes a user (its token shown
// once, and it works), issues and revokes a token, creates a writing
// preset, and a run queued with it keeps version 1 when the admin saves
// version 2; copies, reorders, archives and restores presets; manages
// categories; reads the usage meters with each category's settings source
// and the advice to move off [ai]; rebuilds the memory index; and a
// private persona source is shown refused with the switch that would
// allow it.
func TestAdminScreens(t *testing.T) {
	d := &daemon{t: t, dir: t.TempDir(), env: []string{"FOLIO_AI_PROVIDER=openai", "FOLIO_AI_BASE_URL=http://127.0.0.1:9/v1", "FOLIO_AI_MODEL=unreachable-1"}}
	d.start("127.0.0.1:0")
	var author struct {
		Token string `json:"token"`
	}
	d.api("POST", "/v1/users", map[string]any{"name": "author-a"}, &author)
	if code := d.status("/v1/users", author.Token); code != http.StatusForbidden {
		t.Fatalf("an author's GET /v1/users: %d", code)
	}
	actx := tab(t)
	signIn(t, actx, &daemon{t: t, url: d.url, token: author.Token})
	must(t, actx, chromedp.WaitVisible(css(`#nav-personas`)))
	if get(t, actx, chromedp.Evaluate[bool](`!!document.getElementById('nav-admin')`)) {
		t.Fatal("an author sees the admin link")
	}
	must(t, actx, chromedp.Navigate(d.url+"/admin/users"), chromedp.WaitVisible(css(`#admin-refused`)))
	if get(t, actx, chromedp.Evaluate[bool](`!!document.getElementById('user-table')`)) {
		t.Fatal("an author sees the users table")
	}

	ctx := tab(t)
	signIn(t, ctx, d)
	must(t, ctx, chromedp.WaitVisible(css(`#nav-admin`)), press(`#nav-admin`), chromedp.WaitVisible(css(`#user-table`)))
	// A new user: the token is shown once and works.
	must(t, ctx, chromedp.SendKeys(css(`#new-user`), "ann"), press(`#user-create button[type=submit]`),
		chromedp.WaitVisible(css(`#shown-token`)), chromedp.WaitVisible(css(`#user-table tr[data-user="ann"]`)))
	annToken := text(t, ctx, `#shown-token`)
	if !strings.HasPrefix(annToken, "folio_") || d.status("/v1/whoami", annToken) != 200 {
		t.Fatalf("the shown token %q does not sign in", annToken)
	}
	screenshot(t, ctx, "admin-users-token")
	axeBoth(t, ctx, "admin users with a shown token")
	must(t, ctx, press(`#dismiss-token`))
	if get(t, ctx, chromedp.Evaluate[bool](`document.body.textContent.includes(`+fmt.Sprintf("%q", annToken)+`)`)) {
		t.Fatal("the token is still in the page after it was dismissed")
	}
	// A backup token for ann, revoked.
	must(t, ctx, chromedp.SetValue(css(`#token-user`), "ann"), chromedp.SetValue(css(`#token-kind`), "backup"),
		press(`#issue-token`), chromedp.WaitVisible(css(`#shown-token`)))
	backup := text(t, ctx, `#shown-token`)
	id := strings.Split(backup, "_")[1]
	must(t, ctx, press(`#dismiss-token`), press(`#token-table tr[data-token="`+id+`"] button`))
	waitJS(t, ctx, `!document.querySelector('#token-table tr[data-token="`+id+`"]')`)
	if code := d.status("/v1/whoami", backup); code != http.StatusUnauthorized {
		t.Fatalf("a revoked token answers %d", code)
	}

	// Presets: create a writing preset; a run queued with it pins v1.
	must(t, ctx, press(`#tab-presets`), chromedp.WaitVisible(css(`#presets-writing`)),
		press(`#presets-writing summary`),
		chromedp.SendKeys(css(`#new-writing-name`), "短句"), chromedp.SendKeys(css(`#new-writing-desc`), "short sentences"),
		chromedp.SendKeys(css(`#new-writing-prompt`), "Write in short sentences."),
		press(`#new-writing button[type=submit]`))
	waitJS(t, ctx, `[...document.querySelectorAll('#presets-writing [data-preset]')].some((li) => li.querySelector('strong').textContent === '短句')`)
	pid := get(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#presets-writing [data-preset]')].find((li) => li.querySelector('strong').textContent === '短句').dataset.preset`))
	doc := d.newDoc("Runs", [2]string{"p1", "A paragraph to rewrite."})
	var q struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	d.api("POST", "/v1/docs/"+doc+"/assist", map[string]any{"scope": map[string]any{"kind": "block", "block": "p1"}, "instruction": "Rewrite this.", "writingPreset": pid}, &q)
	must(t, ctx, press(`[data-edit="`+pid+`"]`), chromedp.WaitVisible(css(`#edit-`+pid+`-prompt`)),
		chromedp.SetValue(css(`#edit-`+pid+`-prompt`), "Write in very short sentences."), press(`#save-`+pid),
		chromedp.WaitVisible(css(`[data-preset="`+pid+`"] [data-version="2"]`)))
	type pin struct {
		State           string `json:"state"`
		Personalization struct {
			Preset struct {
				Number int `json:"number"`
			} `json:"preset"`
		} `json:"personalization"`
	}
	var run pin
	d.api("GET", "/v1/runs/"+q.Run.ID, nil, &run)
	if run.Personalization.Preset.Number != 1 {
		t.Fatalf("the run queued before the edit (%s) pins preset version %d, want 1", run.State, run.Personalization.Preset.Number)
	}
	d.api("POST", "/v1/docs/"+doc+"/assist", map[string]any{"scope": map[string]any{"kind": "block", "block": "p1"}, "instruction": "Rewrite this.", "writingPreset": pid}, &q)
	d.api("GET", "/v1/runs/"+q.Run.ID, nil, &run)
	if run.Personalization.Preset.Number != 2 {
		t.Fatalf("a run after the edit pins version %d, want 2", run.Personalization.Preset.Number)
	}
	// Copy, move up, archive, restore.
	must(t, ctx, press(`[data-preset="`+pid+`"] [data-edit] ~ button`))
	waitJS(t, ctx, `!!document.getElementById('admin-error').textContent || [...document.querySelectorAll('#presets-writing [data-preset]')].some((li) => li.querySelector('strong').textContent === '短句（副本）')`)
	if e := text(t, ctx, `#admin-error`); e != "" {
		t.Fatalf("copy: %s; presets: %s", e, text(t, ctx, `#presets-writing`))
	}
	first := func() string {
		return get(t, ctx, chromedp.Evaluate[string](`document.querySelector('#presets-writing [data-preset]').dataset.preset`))
	}
	before := first()
	second := get(t, ctx, chromedp.Evaluate[string](`document.querySelectorAll('#presets-writing [data-preset]')[1].dataset.preset`))
	must(t, ctx, press(`[data-preset="`+second+`"] [data-move="-1"]`))
	waitJS(t, ctx, `document.querySelector('#presets-writing [data-preset]').dataset.preset === '`+second+`'`)
	if before == second {
		t.Fatal("reorder test picked the same preset")
	}
	must(t, ctx, press(`[data-archive="`+pid+`"]`))
	waitJS(t, ctx, `!document.querySelector('[data-preset="`+pid+`"]')`)
	must(t, ctx, press(`#show-archived`), chromedp.WaitVisible(css(`[data-restore="`+pid+`"]`)))
	screenshot(t, ctx, "admin-presets")
	axeBoth(t, ctx, "admin presets")
	must(t, ctx, press(`[data-restore="`+pid+`"]`), chromedp.WaitVisible(css(`[data-archive="`+pid+`"]`)))

	// Categories.
	must(t, ctx, press(`#tab-categories`), chromedp.WaitVisible(css(`#cat-create`)),
		chromedp.SendKeys(css(`#new-cat-name`), "Databases"), chromedp.SendKeys(css(`#new-cat-desc`), "storage engines"),
		press(`#cat-create button`), chromedp.WaitVisible(css(`#cat-list li[data-category="Databases"]`)))
	var cats []struct {
		Name, Description string
	}
	d.api("GET", "/v1/categories", nil, &cats)
	if len(cats) != 1 || cats[0].Description != "storage engines" {
		t.Fatalf("categories %+v", cats)
	}
	screenshot(t, ctx, "admin-categories")
	axeBoth(t, ctx, "admin categories")
	must(t, ctx, press(`#cat-list li[data-category="Databases"] button.danger`))
	waitJS(t, ctx, `!document.querySelector('#cat-list li[data-category="Databases"]')`)

	// Usage: the settings source of each category and the advice.
	must(t, ctx, press(`#tab-usage`), chromedp.WaitVisible(css(`#usage-table`)))
	if got := text(t, ctx, `#usage-sources dd[data-cat="writing"]`); !strings.Contains(got, "legacy shared [ai]") || !strings.Contains(got, "[ai.writing]") {
		t.Fatalf("the writing category's source says %q", got)
	}
	if got := text(t, ctx, `#usage-health`); got != "Statistics complete" {
		t.Fatalf("usage health %q", got)
	}
	screenshot(t, ctx, "admin-usage")
	axeBoth(t, ctx, "admin usage")

	// The memory index: rebuilt on request.
	must(t, ctx, press(`#tab-index`), chromedp.WaitVisible(css(`#index-rebuild`)), press(`#index-rebuild`),
		chromedp.WaitVisible(css(`#index-reason`)))
	if got := text(t, ctx, `#index-reason`); got != "last rebuild: requested" {
		t.Fatalf("index after rebuild: %q", got)
	}
	screenshot(t, ctx, "admin-index")
	axeBoth(t, ctx, "admin index")

	// A private persona source with the external provider: refused, with
	// the switch.
	priv := d.publishDoc("Private notes", "private", [2]string{"s1", "I worked in Beijing for three years."})
	var p struct {
		ID string `json:"id"`
	}
	d.api("POST", "/v1/personas", map[string]any{"name": "Blog", "sources": []string{priv}}, &p)
	must(t, ctx, chromedp.Navigate(d.url+"/personas/"+p.ID), chromedp.WaitVisible(css(`.source-refused[data-code="private_source_blocked"]`)))
	if got := text(t, ctx, `#source-status li`); !strings.Contains(got, "[privacy] send_private_to_provider would allow it") {
		t.Fatalf("the refused source says %q", got)
	}
	must(t, ctx, press(`#generate`), chromedp.WaitVisible(css(`#job-status[data-code="private_source_blocked"]`)))
	screenshot(t, ctx, "persona-refused")
	axeBoth(t, ctx, "persona with a refused source")

	// Keyboard only: the tabs and the rebuild button.
	must(t, ctx, chromedp.Navigate(d.url+"/admin/users"), chromedp.WaitVisible(css(`#user-table`)))
	tabToMatch(t, ctx, `#tab-index`)
	must(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#index-rebuild`)))
	tabToMatch(t, ctx, `#index-rebuild`)
	must(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `!!document.getElementById('index-reason')`)
}
