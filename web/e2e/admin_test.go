package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
)

// presetRules is what GET /v1/admin/presets/P (or …/versions/N) says of a
// version's rules and sources.
type presetRules struct {
	Rules []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Instruction string `json:"instruction"`
	} `json:"rules"`
	Sources []struct {
		Title  string `json:"title"`
		Author string `json:"author"`
		Year   string `json:"year"`
		Note   string `json:"note"`
	} `json:"sources"`
	Number int `json:"number"`
}

// An admin edits an editing preset's rules and sources in the browser
// (change one rule, remove one, add one, add a source) and saves them as
// a new version; the older version keeps its rules.
func TestAdminPresetRulesAsNewVersion(t *testing.T) {
	d := startDaemon(t)
	var p struct {
		ID string `json:"id"`
	}
	d.api("POST", "/v1/admin/presets", map[string]any{"type": "editing", "name": "House style", "description": "our rules",
		"prompt":  "Edit by the house rules.",
		"rules":   []map[string]string{{"name": "No filler", "instruction": "Cut filler words."}, {"name": "Short", "instruction": "Keep sentences short."}},
		"sources": []map[string]string{{"title": "The house guide", "year": "2020"}}}, &p)
	ctx := tab(t)
	signIn(t, ctx, d)
	rules, sources := "#edit-"+p.ID+"-rules", "#edit-"+p.ID+"-sources"
	must(t, ctx, chromedp.Navigate(d.url+"/admin/presets"), chromedp.WaitVisible(css(`[data-edit="`+p.ID+`"]`)),
		press(`[data-edit="`+p.ID+`"]`), chromedp.WaitVisible(css(rules+` li[data-row]`)))
	if got := get(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+rules+` [data-col="name"]')].map((i) => i.value)`)); strings.Join(got, "|") != "No filler|Short" {
		t.Fatalf("the rules shown for editing: %v", got)
	}
	screenshot(t, ctx, "admin-preset-rules")
	axeBoth(t, ctx, "admin preset rules and sources")
	must(t, ctx,
		chromedp.SetValue(css(rules+` li:nth-child(1) [data-col="instruction"]`), "Cut every filler word."),
		press(rules+` li:nth-child(2) [data-remove]`),
		press(rules+`-add`), chromedp.WaitVisible(css(rules+` li:nth-child(2) [data-col="name"]`)),
		chromedp.SendKeys(css(rules+` li:nth-child(2) [data-col="name"]`), "Active voice"),
		chromedp.SendKeys(css(rules+` li:nth-child(2) [data-col="instruction"]`), "Prefer the active voice."),
		press(sources+`-add`), chromedp.WaitVisible(css(sources+` li:nth-child(2) [data-col="title"]`)),
		chromedp.SendKeys(css(sources+` li:nth-child(2) [data-col="title"]`), "Plain words"),
		chromedp.SendKeys(css(sources+` li:nth-child(2) [data-col="author"]`), "Gowers"),
		press(`#save-`+p.ID), chromedp.WaitVisible(css(`[data-preset="`+p.ID+`"] [data-version="2"]`)))
	if e := text(t, ctx, `#admin-error`); e != "" {
		t.Fatalf("saving the rules: %s", e)
	}
	var full struct {
		Current  presetRules `json:"current"`
		Versions []struct {
			Number int `json:"number"`
		} `json:"versions"`
	}
	d.api("GET", "/v1/admin/presets/"+p.ID, nil, &full)
	cur := full.Current
	if len(full.Versions) != 2 || len(cur.Rules) != 2 || cur.Rules[0].Name != "No filler" || cur.Rules[0].Instruction != "Cut every filler word." ||
		cur.Rules[1].Name != "Active voice" || cur.Rules[1].Instruction != "Prefer the active voice." {
		t.Fatalf("after the edit: %d versions, rules %+v", len(full.Versions), cur.Rules)
	}
	if len(cur.Sources) != 2 || cur.Sources[0].Title != "The house guide" || cur.Sources[0].Year != "2020" || cur.Sources[1].Title != "Plain words" || cur.Sources[1].Author != "Gowers" {
		t.Fatalf("sources after the edit: %+v", cur.Sources)
	}
	var v1 presetRules
	d.api("GET", "/v1/admin/presets/"+p.ID+"/versions/1", nil, &v1)
	if len(v1.Rules) != 2 || v1.Rules[1].Name != "Short" || v1.Rules[0].Instruction != "Cut filler words." || len(v1.Sources) != 1 {
		t.Fatalf("version 1 changed: %+v", v1)
	}
	if got := text(t, ctx, `#preset-note`); !strings.Contains(got, "version 2") {
		t.Fatalf("the note after saving says %q", got)
	}
}

// The usage meters say "statistics may undercount" when a booking
// failed. The failure is made the way the daemon would meet it: a
// BookSafe the ledger refuses, whose gap the ledger keeps in the store
// across restarts; the restarted daemon reports the day incomplete.
func TestAdminUsageUndercountBanner(t *testing.T) {
	d := startDaemon(t)
	ctx := tab(t)
	signIn(t, ctx, d)
	must(t, ctx, chromedp.Navigate(d.url+"/admin/usage"), chromedp.WaitVisible(css(`#usage-health`)))
	if get(t, ctx, chromedp.Evaluate[bool](`!!document.getElementById('usage-undercount')`)) {
		t.Fatal("the banner shows before any booking failed")
	}
	d.stop()
	r, err := repo.Open(d.dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if quota.NewLedger(r.DB(), quota.LedgerOptions{}).BookSafe(quota.Event{Category: quota.Writing}) {
		t.Fatal("the ledger booked an event without an id")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	d.restart()
	signIn(t, ctx, d)
	must(t, ctx, chromedp.Navigate(d.url+"/admin/usage"), chromedp.WaitVisible(css(`#usage-undercount`)))
	if got := text(t, ctx, `#usage-undercount`); !strings.Contains(got, "Statistics may undercount") || !strings.Contains(got, "1 usage bookings failed") {
		t.Fatalf("the banner says %q", got)
	}
	if n := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#usage-table tr.incomplete').length`)); n != 1 {
		t.Fatalf("%d days marked incomplete, want today's", n)
	}
	screenshot(t, ctx, "admin-usage-undercount")
	axeBoth(t, ctx, fmt.Sprintf("admin usage, %s", "undercount"))
}

// The tags screen lists every tag with the published articles using it
// (linking to its public page), saves a description, adds a tag and
// deletes an unused one; a used one cannot be deleted, and the screen
// says that tags are neither renamed nor merged.
func TestAdminTags(t *testing.T) {
	d := startDaemon(t)
	for i, tags := range [][]string{{"pebble", "storage"}, {"storage"}} {
		var v struct {
			Doc string `json:"doc"`
		}
		d.api("POST", "/v1/docs", map[string]any{"attrs": map[string]any{"title": fmt.Sprintf("Article %d", i), "tags": tags},
			"body": map[string]any{"schemaVersion": 1, "blocks": []map[string]any{{"id": "p1", "type": "paragraph", "richText": []map[string]any{{"text": "Text."}}}}}}, &v)
		d.api("POST", "/v1/docs/"+v.Doc+"/publish", map[string]any{"visibility": "public"}, nil)
	}
	ctx := tab(t)
	signIn(t, ctx, d)
	must(t, ctx, chromedp.Navigate(d.url+"/admin/users"), chromedp.WaitVisible(css(`#tab-tags`)), press(`#tab-tags`),
		chromedp.WaitVisible(css(`#tag-list li[data-tag="storage"]`)))
	counts := get(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#tag-list li[data-tag]')].map((li) => li.dataset.tag + '=' + li.dataset.articles).join(',')`))
	if counts != "pebble=1,storage=2" {
		t.Fatalf("tags and counts: %s", counts)
	}
	if got := text(t, ctx, `#tag-list li[data-tag="storage"] .muted`); !strings.Contains(got, "2 articles") {
		t.Fatalf("the storage tag says %q", got)
	}
	if href := get(t, ctx, chromedp.Evaluate[string](`document.querySelector('#tag-list li[data-tag="storage"] a').getAttribute('href')`)); href != "/t/storage" {
		t.Fatalf("the tag links to %q", href)
	}
	if !strings.Contains(text(t, ctx, `#tags-no-rename`), "cannot be renamed or merged") {
		t.Fatal("the screen does not say that tags are not renamed or merged")
	}
	if !get(t, ctx, chromedp.Evaluate[bool](`document.querySelector('#tag-list li[data-tag="storage"] button.danger').disabled`)) {
		t.Fatal("a used tag's delete button is enabled")
	}
	// A description, saved.
	must(t, ctx, chromedp.SetValue(css(`#tag-list li[data-tag="pebble"] input`), "The storage engine"),
		press(`#tag-list li[data-tag="pebble"] button:not(.danger)`))
	waitJS(t, ctx, `document.getElementById('tag-note').textContent.includes('pebble')`)
	var list []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	d.api("GET", "/v1/tags", nil, &list)
	if len(list) != 2 || list[0].Name != "pebble" || list[0].Description != "The storage engine" {
		t.Fatalf("tags after saving a description: %+v", list)
	}
	// A new tag, then deleted (it is unused).
	must(t, ctx, chromedp.SendKeys(css(`#new-tag-name`), "drafts"), press(`#tag-create button[type=submit]`),
		chromedp.WaitVisible(css(`#tag-list li[data-tag="drafts"]`)))
	screenshot(t, ctx, "admin-tags")
	axeBoth(t, ctx, "admin tags")
	must(t, ctx, press(`#tag-list li[data-tag="drafts"] button.danger`))
	waitJS(t, ctx, `!document.querySelector('#tag-list li[data-tag="drafts"]')`)
	d.api("GET", "/v1/tags", nil, &list)
	if len(list) != 2 {
		t.Fatalf("after deleting the new tag the API lists %+v", list)
	}
}
