package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the SDK's own client to the daemon's /v1/mcp.
func (e *env) mcpSession(t testing.TB, token, client string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: client, Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.ts.URL + MCPPath,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its structured result as JSON, failing
// the test on a tool error unless wantCode names the error's code.
func call(t testing.TB, cs *sdk.ClientSession, name string, args any, wantCode string) (map[string]json.RawMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if wantCode == "schema" {
			return nil, err.Error()
		}
		t.Fatalf("%s: %v", name, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	data, _ := json.Marshal(res.StructuredContent)
	var out map[string]json.RawMessage
	_ = json.Unmarshal(data, &out)
	if res.IsError {
		var te mcp.ToolError
		_ = json.Unmarshal(data, &te)
		if wantCode == "" || (te.Error.Code != wantCode && wantCode != "schema") {
			t.Fatalf("%s: error %s (%s), want %q", name, te.Error.Code, text, wantCode)
		}
		return out, text
	}
	if wantCode != "" {
		t.Fatalf("%s: succeeded (%s), want error %s", name, text, wantCode)
	}
	return out, text
}

func TestMCPOverHTTP(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	other := ae.article(ae.b)
	agent := ae.agentToken("author-a")
	cs := ae.mcpSession(t, agent.Secret, "test-agent")
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s has no description or schema", tl.Name)
		}
		for _, verb := range []string{"accept", "reject", "restore", "publish", "delete", "save", "checkpoint", "owner", "user", "token"} {
			if strings.Contains(tl.Name, verb) {
				t.Errorf("tool %s can %s", tl.Name, verb)
			}
		}
	}
	if want := slices.Clone(mcp.ToolNames); !slices.Equal(sorted(names), sorted(want)) {
		t.Fatalf("tools %v, want exactly %v", names, want)
	}

	// Every read tool answers, for the token's user only.
	out, _ := call(t, cs, "list_documents", map[string]any{}, "")
	if !strings.Contains(string(out["documents"]), doc) || strings.Contains(string(out["documents"]), other) {
		t.Fatalf("list_documents: %s", out["documents"])
	}
	out, text := call(t, cs, "read_document", map[string]any{"doc": doc}, "")
	if !strings.Contains(text, "<!-- block p1 (paragraph) -->") || string(out["version"]) != `"v1.r0"` {
		t.Fatalf("read_document: %s %s", text, out["version"])
	}
	var fp string
	_ = json.Unmarshal(out["fingerprint"], &fp)
	if out, _ = call(t, cs, "read_document", map[string]any{"doc": doc, "version": "v1.r0", "format": "flowdoc"}, ""); !strings.Contains(string(out["body"]), `"schemaVersion":1`) {
		t.Fatalf("read_document flowdoc: %s", out["body"])
	}
	call(t, cs, "read_document", map[string]any{"doc": other}, "not_found")
	call(t, cs, "get_log", map[string]any{"doc": doc}, "")
	call(t, cs, "diff_versions", map[string]any{"doc": doc, "from": "v1.r0", "to": "v1.r0"}, "")
	call(t, cs, "block_history", map[string]any{"doc": doc, "block": "p1"}, "")
	if out, _ = call(t, cs, "list_presets", map[string]any{}, ""); !strings.Contains(string(out["presets"]), "six-rules") {
		t.Fatalf("list_presets: %s", out["presets"])
	}
	call(t, cs, "list_personas", map[string]any{}, "")
	call(t, cs, "explain_version", map[string]any{"doc": doc, "version": "v1.r0"}, "")

	// Bad input: unknown fields and wrong types are refused by the schema.
	call(t, cs, "read_document", map[string]any{"doc": doc, "colour": "red"}, "schema")
	call(t, cs, "get_log", map[string]any{"doc": doc, "limit": "many"}, "schema")

	// Propose through the assistant (local provider, an editing preset).
	out, text = call(t, cs, "propose_with_assistant", map[string]any{"doc": doc,
		"scope": map[string]any{"kind": "block", "block": "p1"}, "editingPreset": "six-rules"}, "")
	var viaAssist string
	_ = json.Unmarshal(out["suggestion"], &viaAssist)
	if viaAssist == "" || string(out["status"]) != `"pending"` {
		t.Fatalf("propose_with_assistant: %s", text)
	}
	// Propose operations the agent wrote.
	ops := []map[string]any{{"op": "replace_block", "blockId": "p2",
		"block": map[string]any{"id": "p2", "type": "paragraph", "richText": []map[string]any{{"text": "We cut the filler."}}}}}
	call(t, cs, "propose_operations", map[string]any{"doc": doc, "scope": map[string]any{"kind": "block", "block": "p2"},
		"base": "v0.r1", "ops": ops}, assistant.CodeStaleBaseline)
	out, text = call(t, cs, "propose_operations", map[string]any{"doc": doc, "scope": map[string]any{"kind": "block", "block": "p2"},
		"base": "v1.r0", "fingerprint": fp, "ops": ops, "summary": "shorter"}, "")
	var own string
	_ = json.Unmarshal(out["suggestion"], &own)
	if own == "" || !strings.Contains(text, "modified p2") {
		t.Fatalf("propose_operations: %s", text)
	}
	out, _ = call(t, cs, "list_suggestions", map[string]any{"doc": doc, "status": "pending"}, "")
	if !strings.Contains(string(out["suggestions"]), own) || !strings.Contains(string(out["suggestions"]), `"client":"test-agent"`) {
		t.Fatalf("list_suggestions: %s", out["suggestions"])
	}
	call(t, cs, "show_suggestion", map[string]any{"id": own}, "")

	// The author accepts; explain (a tool too) names the agent.
	var acc assistant.Accepted
	ae.ok("POST", "/v1/suggestions/"+own+"/accept", ae.a, map[string]any{}, &acc)
	_, text = call(t, cs, "explain_version", map[string]any{"doc": doc, "version": acc.Version.Label}, "")
	if !strings.Contains(text, "proposed by agent test-agent 1.0 (token "+agent.ID+" of author-a)") {
		t.Fatalf("explain_version: %s", text)
	}
	// Resources.
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.ResourcePrefix + doc + "@v1.r0"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "block p2") {
		t.Fatalf("resource: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.ResourcePrefix + other}); err == nil {
		t.Fatal("another user's document read as a resource")
	}

	// A 10 MB argument is refused before it is decoded; the session and
	// the daemon keep serving.
	big := strings.Repeat("x", 10<<20)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	_, err = cs.CallTool(cctx, &sdk.CallToolParams{Name: "read_document", Arguments: map[string]any{"doc": big}})
	cancel()
	if err == nil {
		t.Fatal("a 10 MB argument was accepted")
	}
	deep := strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000)
	if st, data := ae.call("POST", MCPPath, agent.Secret, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_log","arguments":`+deep+`}}`); st != http.StatusBadRequest || !strings.Contains(string(data), "nested deeper") {
		t.Fatalf("deep JSON over HTTP: %d %s", st, data)
	}
	cs2 := ae.mcpSession(t, agent.Secret, "test-agent")
	call(t, cs2, "get_log", map[string]any{"doc": doc}, "")

	// A backup token cannot open a session; a revoked agent token's
	// session stops answering.
	st, _ := ae.call("POST", MCPPath, ae.backup, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if st != http.StatusForbidden {
		t.Fatalf("backup token on /v1/mcp: %d", st)
	}
	if _, err := ae.auth.RevokeToken(ctx, agent.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cs2.CallTool(ctx, &sdk.CallToolParams{Name: "get_log", Arguments: map[string]any{"doc": doc}}); err == nil {
		t.Fatal("a revoked token's session still answers")
	}
}

// TestMCPInProcess runs the same server over the SDK's in-memory
// transport on a Local backend, as `folio mcp` does on a data directory.
func TestMCPInProcess(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	u, err := ae.auth.GetUser(context.Background(), "author-a")
	if err != nil {
		t.Fatal(err)
	}
	p := auth.Principal{User: u.Name, UserID: u.ID, TokenID: "direct", Kind: auth.KindAgent}
	srv := mcp.NewServer(func(context.Context, *sdk.RequestExtra) (mcp.Backend, error) {
		return &mcp.Local{Repo: ae.repo, Assistant: ae.svc, Principal: p}, nil
	}, mcp.Options{Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "inproc", Version: "2"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out, _ := call(t, cs, "propose_operations", map[string]any{"doc": doc, "scope": map[string]any{"kind": "document"}, "base": "v1.r0",
		"ops": []map[string]any{{"op": "replace_document", "document": map[string]any{"schemaVersion": 1, "blocks": []map[string]any{
			{"id": "p1", "type": "paragraph", "richText": []map[string]any{{"text": "All new."}}}}}}}}, "")
	var id string
	_ = json.Unmarshal(out["suggestion"], &id)
	sg, err := ae.svc.Suggestion(ctx, assistant.Actor{UserID: u.ID, User: u.Name}, id)
	if err != nil || sg.Agent == nil || sg.Agent.Client != "inproc" || sg.Agent.Token != "direct" {
		t.Fatalf("stored: %v %+v", err, sg.Agent)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
