package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/foliodev/folio/internal/errs"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Forwarder serves the tools of a daemon: every tool call and resource
// read of a local session (`folio mcp --server`) is sent to the daemon's
// /v1/mcp with the token, over a session opened in the local client's
// name (so that the daemon records the real agent), and its answer
// returned as it came. The daemon decides everything.
type Forwarder struct {
	Endpoint string // the daemon's MCP endpoint URL
	Token    string
	Version  string

	mu       sync.Mutex // guards sessions
	sessions map[*sdk.ServerSession]*sdk.ClientSession
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// session returns the daemon session of local session ss.
func (f *Forwarder) session(ctx context.Context, ss *sdk.ServerSession) (*sdk.ClientSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cs := f.sessions[ss]; cs != nil {
		return cs, nil
	}
	impl := &sdk.Implementation{Name: "folio-mcp", Version: f.Version}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		impl = &sdk.Implementation{Name: p.ClientInfo.Name, Version: p.ClientInfo.Version}
	}
	cs, err := sdk.NewClient(impl, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: f.Endpoint,
		HTTPClient: &http.Client{Transport: bearer{f.Token}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, errs.E(errs.Unavailable, "reach the daemon's MCP endpoint %s: %v", f.Endpoint, err)
	}
	if f.sessions == nil {
		f.sessions = map[*sdk.ServerSession]*sdk.ClientSession{}
	}
	f.sessions[ss] = cs
	return cs, nil
}

// call forwards one tool call.
func (f *Forwarder) call(ctx context.Context, ss *sdk.ServerSession, name string, in any) (*sdk.CallToolResult, error) {
	cs, err := f.session(ctx, ss)
	if err != nil {
		return nil, err
	}
	args, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
}

// read forwards one resource read.
func (f *Forwarder) read(ctx context.Context, ss *sdk.ServerSession, uri string) (*sdk.ReadResourceResult, error) {
	cs, err := f.session(ctx, ss)
	if err != nil {
		return nil, err
	}
	return cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
}

// Close ends every daemon session.
func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cs := range f.sessions {
		cs.Close()
	}
	f.sessions = nil
}
