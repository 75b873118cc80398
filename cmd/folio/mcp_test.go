package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpChild starts `folio mcp` (this test binary acting as folio) with the
// SDK's own client over its stdin and stdout.
func mcpChild(t *testing.T, client string, env []string, args ...string) *sdk.ClientSession {
	t.Helper()
	return mcpChildTB(t, client, env, args...)
}

// mcpChildTB is mcpChild for tests and benchmarks.
func mcpChildTB(t testing.TB, client string, env []string, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"mcp"}, args...)...)
	cmd.Env = append(append(os.Environ(), "FOLIO_TEST_MAIN=1", "FOLIO_CONFIG="), env...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: client, Version: "3.1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// mcpCall calls a tool and returns its structured content and text.
func mcpCall(t *testing.T, cs *sdk.ClientSession, name string, args any) (map[string]json.RawMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		t.Fatalf("%s: %s", name, text)
	}
	data, _ := json.Marshal(res.StructuredContent)
	var out map[string]json.RawMessage
	_ = json.Unmarshal(data, &out)
	return out, text
}

func idOf(t *testing.T, out map[string]json.RawMessage, key string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(out[key], &s); err != nil || s == "" {
		t.Fatalf("no %s in %v", key, out)
	}
	return s
}

// exerciseMCP lists the tools (the exact set), calls every read tool,
// proposes through the assistant and with its own operations, and
// returns the id of the latter suggestion.
func exerciseMCP(t *testing.T, cs *sdk.ClientSession, doc string) string {
	t.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	want := slices.Clone(mcp.ToolNames)
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	out, _ := mcpCall(t, cs, "list_documents", map[string]any{})
	if !strings.Contains(string(out["documents"]), doc) {
		t.Fatalf("list_documents: %s", out["documents"])
	}
	_, text := mcpCall(t, cs, "read_document", map[string]any{"doc": doc})
	if !strings.Contains(text, "<!-- block p3 (paragraph) -->") {
		t.Fatalf("read_document: %s", text)
	}
	mcpCall(t, cs, "get_log", map[string]any{"doc": doc})
	mcpCall(t, cs, "diff_versions", map[string]any{"doc": doc, "from": "v1.r0", "to": "v1.r0"})
	mcpCall(t, cs, "block_history", map[string]any{"doc": doc, "block": "p1"})
	mcpCall(t, cs, "list_presets", map[string]any{"type": "editing"})
	mcpCall(t, cs, "list_personas", map[string]any{})
	mcpCall(t, cs, "explain_version", map[string]any{"doc": doc})
	out, text = mcpCall(t, cs, "propose_with_assistant", map[string]any{"doc": doc,
		"scope": map[string]any{"kind": "block", "block": "p1"}, "editingPreset": "six-rules"})
	if !strings.Contains(text, "for the author to accept or reject") {
		t.Fatalf("propose_with_assistant: %s", text)
	}
	assisted := idOf(t, out, "suggestion")
	mcpCall(t, cs, "show_suggestion", map[string]any{"id": assisted})
	out, text = mcpCall(t, cs, "propose_operations", map[string]any{"doc": doc, "scope": map[string]any{"kind": "block", "block": "p3"},
		"base": "v1.r0", "summary": "names the table",
		"ops": []map[string]any{{"op": "replace_block", "blockId": "p3",
			"block": map[string]any{"id": "p3", "type": "paragraph", "richText": []map[string]any{{"text": "Table 1 has the results."}}}}}})
	if !strings.Contains(text, "modified p3") {
		t.Fatalf("propose_operations: %s", text)
	}
	own := idOf(t, out, "suggestion")
	out, _ = mcpCall(t, cs, "list_suggestions", map[string]any{"doc": doc, "status": "pending"})
	if !strings.Contains(string(out["suggestions"]), own) || !strings.Contains(string(out["suggestions"]), assisted) {
		t.Fatalf("list_suggestions: %s", out["suggestions"])
	}
	return own
}

// TestMCPStdioDirect drives `folio mcp` on a data directory over stdio
// with the SDK's client, then accepts as the author through the CLI: the
// new revision's explain names the agent.
func TestMCPStdioDirect(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "data")
	body := writeFile(t, tmp, "body.json", assistBody)
	for _, args := range [][]string{{"init"}, {"user", "add", "admin", "--admin"}, {"doc", "new", "--id", "d1", "--title", "Notes", "--from", body}} {
		if r := runCLI(append([]string{"--data", dir}, args...)...); r.code != 0 {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	cs := mcpChild(t, "stdio-agent", []string{"FOLIO_USER=admin"}, "--data", dir)
	own := exerciseMCP(t, cs, "d1")
	if err := cs.Close(); err != nil { // the child exits and lets go of the store
		t.Logf("close: %v", err)
	}
	if r := runCLI("--data", dir, "suggestion", "show", own); r.code != 0 || !strings.Contains(r.stdout, "written by agent stdio-agent 3.1 (token direct of admin)") {
		t.Fatalf("suggestion show: %+v", r)
	}
	if r := runCLI("--data", dir, "suggestion", "accept", own); r.code != 0 {
		t.Fatalf("accept: %+v", r)
	}
	r := runCLI("--data", dir, "explain", "d1")
	if r.code != 0 || !strings.Contains(r.stdout, "proposed by agent stdio-agent 3.1") || !strings.Contains(r.stdout, "v1.r1") {
		t.Fatalf("explain: %+v", r)
	}
}

// TestMCPStdioServer drives `folio mcp --server` with an agent token: the
// daemon does the work, records the real client, and refuses the agent
// token's other writes.
func TestMCPStdioServer(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	body := writeFile(t, tmp, "body.json", assistBody)
	d := startDaemon(t, filepath.Join(tmp, "data"), "")
	remote := []string{"--server", d.url, "--token", d.token}
	if r := runCLI(append(remote, "doc", "new", "--id", "d1", "--title", "Notes", "--from", body)...); r.code != 0 {
		t.Fatalf("doc new: %+v", r)
	}
	r := runCLI(append(remote, "token", "add", "admin", "--kind", "agent", "--format", "json")...)
	var it struct {
		Token, TokenID, Kind string
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &it) != nil || it.Kind != "agent" {
		t.Fatalf("token add --kind agent: %+v", r)
	}
	cs := mcpChild(t, "remote-agent", nil, "--server", d.url, "--token", it.Token)
	defer cs.Close()
	own := exerciseMCP(t, cs, "d1")
	// The agent token itself cannot accept, restore or save.
	for _, args := range [][]string{{"suggestion", "accept", own}, {"restore", "d1", "v1.r0"}, {"publish", "d1"}} {
		if r := runCLI(append([]string{"--server", d.url, "--token", it.Token}, args...)...); r.code != exitDenied || !strings.Contains(r.stderr, "agent token") {
			t.Fatalf("%v with the agent token: %+v", args, r)
		}
	}
	if r := runCLI(append(remote, "suggestion", "accept", own)...); r.code != 0 {
		t.Fatalf("accept: %+v", r)
	}
	if r := runCLI(append(remote, "explain", "d1")...); r.code != 0 || !strings.Contains(r.stdout, "proposed by agent remote-agent 3.1 (token "+it.TokenID+" of admin)") {
		t.Fatalf("explain: %+v", r)
	}
}

// TestMCPInterop drives `folio mcp` with the reference TypeScript SDK's
// client (mcp/interop, pinned in its package-lock.json): an
// implementation we did not write lists and calls the tools. It needs
// node and `npm ci` in mcp/interop; under CI=true their absence fails.
func TestMCPInterop(t *testing.T) {
	isolateEnv(t)
	dir, err := filepath.Abs("../../mcp/interop")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the interop test needs node and `npm ci --prefix mcp/interop` (node: %v, modules: %v)", err, serr)
		}
		t.Skip("needs node and `npm ci --prefix mcp/interop`")
	}
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	body := writeFile(t, tmp, "body.json", assistBody)
	for _, args := range [][]string{{"init"}, {"user", "add", "admin", "--admin"}, {"doc", "new", "--id", "d1", "--title", "Notes", "--from", body}} {
		if r := runCLI(append([]string{"--data", data}, args...)...); r.code != 0 {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), "d1", os.Args[0], "mcp", "--data", data)
	cmd.Env = append(os.Environ(), "FOLIO_TEST_MAIN=1", "FOLIO_CONFIG=", "FOLIO_USER=admin")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got struct {
		Server       struct{ Name string }
		Tools        []string
		Version      string
		ReadText     string
		Suggestion   *string
		ProposeError *string
		Refused      string
		Resource     string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := slices.Clone(mcp.ToolNames)
	slices.Sort(want)
	if got.Server.Name != "folio" || !slices.Equal(got.Tools, want) || got.Version != "v1.r0" || !strings.Contains(got.ReadText, "block p1") {
		t.Fatalf("TypeScript client saw %s", out)
	}
	if got.Suggestion == nil || got.ProposeError != nil {
		t.Fatalf("propose from TypeScript: %s", out)
	}
	if got.Refused == "accepted" || !strings.Contains(got.Resource, "block p2") {
		t.Fatalf("TypeScript client: unknown field %q, resource %q", got.Refused, got.Resource)
	}
	if r := runCLI("--data", data, "suggestion", "show", *got.Suggestion); r.code != 0 || !strings.Contains(r.stdout, "agent ts-interop 1.32.2") {
		t.Fatalf("suggestion show: %+v", r)
	}
}
