package server

import (
	"context"

	"github.com/foliodev/folio/internal/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPPath is the daemon's Model Context Protocol endpoint (streamable
// HTTP, bearer-token auth; docs/agents.md).
const MCPPath = "/v1/mcp"

// mcpRoutes mounts the MCP server: the same tools as `folio mcp`, each
// call answered for the request's principal (an agent token's reads what
// its user reads and proposes; the token is checked on every request).
// POST carries requests, GET a session's event stream, DELETE ends a
// session: none of them writes anything but proposals.
func (s *Server) mcpRoutes(mux *routeMux) {
	srv := mcp.NewServer(func(_ context.Context, extra *sdk.RequestExtra) (mcp.Backend, error) {
		p, err := mcp.PrincipalOf(extra)
		if err != nil {
			return nil, err
		}
		return &mcp.Local{Repo: s.content, Assistant: s.cfg.Assistant, People: s.cfg.Personas, Principal: p}, nil
	}, mcp.Options{Version: s.cfg.Version})
	h := mcp.Handler(srv, principal).ServeHTTP
	mux.HandleFunc("POST "+MCPPath, s.authed(proposes, h))
	mux.HandleFunc("GET "+MCPPath, s.authed(anyUser, h))
	mux.HandleFunc("DELETE "+MCPPath, s.authed(proposes, h))
}
