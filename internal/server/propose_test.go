package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
)

// agentToken issues an agent token for user.
func (e *env) agentToken(user string) auth.Issued {
	e.t.Helper()
	it, err := e.auth.AddToken(context.Background(), user, auth.KindAgent)
	if err != nil {
		e.t.Fatal(err)
	}
	return it
}

// propose sends an agent proposal and returns the status and body.
func (e *env) propose(token, doc string, req ProposeRequest) (int, []byte) {
	e.t.Helper()
	body, _ := json.Marshal(req)
	hr, _ := http.NewRequest("POST", e.ts.URL+"/v1/docs/"+doc+"/suggestions", strings.NewReader(string(body)))
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set(AgentHeader, "test-agent/0.9")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var data json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&data)
	return resp.StatusCode, data
}

func TestAgentProposalOverHTTP(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	var v repo.VersionInfo
	ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: "Notes"},
		Body: doc(para("p1", "First line."), flowdoc.Block{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "x := 1"}},
			para("p2", "Second line."))}, &v)
	agent := ae.agentToken("author-a")
	block := ProposeRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: "p1"}, Base: "v1.r0",
		Ops:     json.RawMessage(`[{"op":"replace_block","blockId":"p1","block":{"id":"p1","type":"paragraph","richText":[{"text":"A better first line."}]}}]`),
		Summary: "sharper opening"}

	// Bad input first: nothing is stored by any of it.
	bad := []struct {
		name   string
		mod    func(*ProposeRequest)
		status int
		code   string
		says   string
	}{
		{"unknown field", func(r *ProposeRequest) {
			r.Ops = json.RawMessage(`[{"op":"replace_block","blockId":"p1","colour":"red","block":{"id":"p1","type":"paragraph"}}]`)
		}, 400, "invalid", `unknown field "colour"`},
		{"stale baseline", func(r *ProposeRequest) { r.Base = "v0.r9" }, 409, assistant.CodeStaleBaseline, "read the article again"},
		{"wrong fingerprint", func(r *ProposeRequest) { r.Fingerprint = strings.Repeat("ab", 32) }, 409, assistant.CodeStaleBaseline, "fingerprint"},
		{"complex block changed", func(r *ProposeRequest) {
			r.Scope = assistant.Scope{Kind: assistant.ScopeDocument}
			r.Ops = json.RawMessage(`[{"op":"replace_document","document":{"schemaVersion":1,"blocks":[
				{"id":"p1","type":"paragraph","richText":[{"text":"First line."}]},
				{"id":"c1","type":"code","attrs":{"language":"go","text":"os.RemoveAll(\"/\")"}},
				{"id":"p2","type":"paragraph","richText":[{"text":"Second line."}]}]}}]`)
		}, 400, "invalid", "complex blocks"},
		{"outside its scope", func(r *ProposeRequest) {
			r.Ops = json.RawMessage(`[{"op":"replace_block","blockId":"p2","block":{"id":"p2","type":"paragraph","richText":[{"text":"x"}]}}]`)
		}, 400, "invalid", `block "p1" only`},
		{"no operations", func(r *ProposeRequest) { r.Ops = json.RawMessage(`[]`) }, 400, "invalid", "empty"},
	}
	for _, c := range bad {
		req := block
		c.mod(&req)
		st, data := ae.propose(agent.Secret, v.Doc, req)
		er := errOf(t, data)
		if st != c.status || er.Code != c.code || !strings.Contains(er.Message, c.says) {
			t.Errorf("%s: %d %s, want %d %s saying %q", c.name, st, data, c.status, c.code, c.says)
		}
	}
	var none []assistant.Suggestion
	ae.ok("GET", "/v1/docs/"+v.Doc+"/suggestions", ae.a, nil, &none)
	if len(none) != 0 {
		t.Fatalf("refused proposals left suggestions: %+v", none)
	}

	st, data := ae.propose(agent.Secret, v.Doc, block)
	if st != http.StatusCreated {
		t.Fatalf("proposal: %d %s", st, data)
	}
	var sg assistant.Suggestion
	if err := json.Unmarshal(data, &sg); err != nil {
		t.Fatal(err)
	}
	if sg.Status != assistant.StatusPending || sg.Agent == nil || sg.Agent.Token != agent.ID || sg.Agent.Client != "test-agent" ||
		sg.Agent.ClientVersion != "0.9" || sg.Base.Label != "v1.r0" {
		t.Fatalf("stored suggestion: %+v (agent %+v)", sg, sg.Agent)
	}
	// The editor's API shows where it came from.
	var listed []assistant.Suggestion
	ae.ok("GET", "/v1/docs/"+v.Doc+"/suggestions", ae.a, nil, &listed)
	if len(listed) != 1 || listed[0].Agent == nil || listed[0].Agent.Client != "test-agent" {
		t.Fatalf("listed: %+v", listed)
	}
	// The agent cannot accept its own suggestion; the author can.
	ae.wantErr("POST", "/v1/suggestions/"+sg.ID+"/accept", agent.Secret, map[string]any{}, 403, "forbidden")
	var acc assistant.Accepted
	ae.ok("POST", "/v1/suggestions/"+sg.ID+"/accept", ae.a, map[string]any{}, &acc)
	var e assistant.Explanation
	ae.ok("GET", "/v1/docs/"+v.Doc+"/versions/"+acc.Version.Label+"/explain", agent.Secret, nil, &e)
	if e.Suggestion == nil || e.Suggestion.Agent == nil || !strings.Contains(e.Note, "agent test-agent 0.9 (token "+agent.ID+" of author-a)") {
		t.Fatalf("explain of %s: %q %+v", acc.Version.Label, e.Note, e.Suggestion)
	}
	var shown ShowResponse
	ae.ok("GET", "/v1/docs/"+v.Doc+"/versions/"+acc.Version.Label, ae.a, nil, &shown)
	if !strings.Contains(string(shown.Body), "A better first line.") {
		t.Fatalf("accepted body: %s", shown.Body)
	}

	// The per-token rate: a burst of proposals is cut off, the author's
	// own token is not.
	block.Base = acc.Version.Label
	limited := false
	for i := 0; i < assistant.AgentBurst+1; i++ {
		st, data := ae.propose(agent.Secret, v.Doc, block)
		if st == http.StatusTooManyRequests {
			if er := errOf(t, data); er.Code != assistant.CodeAgentRateLimited || er.RetryAfterMs <= 0 {
				t.Fatalf("rate limited: %s", data)
			}
			limited = true
			break
		}
		if st != http.StatusCreated && st != http.StatusBadRequest { // the same change again changes nothing
			t.Fatalf("proposal %d: %d %s", i, st, data)
		}
	}
	if !limited {
		t.Fatalf("%d proposals in a row were not limited", assistant.AgentBurst+1)
	}
	if st, data := ae.propose(ae.a, v.Doc, ProposeRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: "p2"}, Base: acc.Version.Label,
		Ops: json.RawMessage(`[{"op":"replace_block","blockId":"p2","block":{"id":"p2","type":"paragraph","richText":[{"text":"Mine."}]}}]`)}); st != http.StatusCreated {
		t.Fatalf("the author's own proposal after the agent's burst: %d %s", st, data)
	}
}
