package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// agentPropose proposes ops on doc as an outside agent would over HTTP:
// an agent token, the client named in X-Folio-Agent. It returns the
// suggestion's id.
func (d *daemon) agentPropose(token, client, doc string, body map[string]any) string {
	d.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", d.url+"/v1/docs/"+doc+"/suggestions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Folio-Agent", client)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	var sg struct {
		ID    string `json:"id"`
		Agent *struct {
			Client string `json:"client"`
		} `json:"agent"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(out, &sg) != nil || sg.Agent == nil {
		d.t.Fatalf("agent proposal: %d %s", res.StatusCode, out)
	}
	return sg.ID
}

// An outside agent proposes a change through the HTTP API with an agent
// token while the author has the document open: the card in the editor
// names the agent (in English, and in Chinese for a Chinese browser, also
// after a reload), the change is previewed in the text, and the author
// accepts it.
func TestAgentSuggestionCard(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Agent", [2]string{"p1", fillerText}, [2]string{"p2", "Second."})
	a := openDoc(t, d, doc)

	var who struct {
		User string `json:"user"`
	}
	d.api("GET", "/v1/whoami", nil, &who)
	var issued struct {
		Token string `json:"token"`
	}
	d.api("POST", "/v1/tokens", map[string]any{"user": who.User, "kind": "agent"}, &issued)
	var head struct {
		Head string `json:"head"`
	}
	d.api("GET", "/v1/docs/"+doc, nil, &head)
	const proposed = "To win, the team decided."
	sid := d.agentPropose(issued.Token, "claude-desktop/1.2", doc, map[string]any{
		"scope": map[string]any{"kind": "block", "block": "p1"}, "base": head.Head, "summary": "shorter",
		"ops": []any{map[string]any{"op": "replace_block", "blockId": "p1",
			"block": map[string]any{"id": "p1", "type": "paragraph", "richText": []any{map[string]any{"text": proposed}}}}}})

	// The open editor shows it as it arrives, naming the agent.
	if got := waitPreview(t, a); got != sid {
		t.Fatalf("the preview is of suggestion %q, want the agent's %q", got, sid)
	}
	if got := get(t, a, chromedp.Text(css(`#assist-suggestion[data-suggestion-card="`+sid+`"] #assist-agent`))); got != "Proposed by agent claude-desktop 1.2" {
		t.Fatalf("the card says %q", got)
	}
	axeCheck(t, a, "agent-suggestion")
	screenshot(t, a, "assist-agent-suggestion")

	// A reload (the suggestion belongs to no session of the author's)
	// shows it again; a Chinese browser names the agent in Chinese.
	must(t, a, chromedp.Reload(), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	waitPreview(t, a)
	zh := tab(t)
	must(t, zh, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome", AcceptLanguage: "zh-CN,zh"})
		return err
	}))
	signIn(t, zh, d)
	must(t, zh, chromedp.Navigate(d.url+"/d/"+doc), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	waitPreview(t, zh)
	if got := get(t, zh, chromedp.Text(css(`#assist-agent`))); got != "由智能体 claude-desktop 1.2 提出" {
		t.Fatalf("the card in Chinese says %q", got)
	}
	screenshot(t, zh, "assist-agent-suggestion-zh")

	// The author accepts it: a new version, the text in the draft and in
	// the other tab.
	before := d.logKinds(doc)
	must(t, a, chromedp.Click(css(`#assist-accept`)), chromedp.WaitVisible(css(`#assist-suggestion[data-status="accepted"]`)))
	if after := d.logKinds(doc); len(after) != len(before)+1 || after[0] != "accept_suggestion" {
		t.Fatalf("log after accept %v (before %v)", after, before)
	}
	if got := d.draftText(doc)["p1"]; got != proposed {
		t.Fatalf("draft after accept: %q", got)
	}
	waitJS(t, zh, `(document.querySelector('.ProseMirror [data-block-id="p1"]') || {}).textContent === 'To win, the team decided.'`)
}
