// Package mcp is Folio's Model Context Protocol server: the door through
// which outside models and agents (Claude Desktop, VS Code and Cursor
// agents, custom agents) read articles and propose changes. It is built
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk) and
// serves the same tools and resources over stdio (`folio mcp`) and the
// daemon's streamable-HTTP endpoint (/v1/mcp), from one definition
// (NewServer).
//
// Invariants:
//
//   - Every tool reads, or proposes: the tool set has no verb that
//     accepts, rejects, restores, publishes, unpublishes, deletes, saves
//     a draft, checkpoints, changes an owner or manages users. That is
//     not the only guard: the daemon refuses every other write of an
//     agent token (auth.KindAgent) on every transport, and a Backend has
//     no method that could make one.
//   - A proposal becomes an ordinary pending suggestion
//     (assistant.Service.Assist or Propose) whose source is the agent:
//     the client name and version of the MCP handshake and the token id.
//     Only the author accepts it.
//   - A Backend is bound to one caller: documents another user owns are
//     answered exactly like missing ones.
//   - Input is bounded before it is decoded (MaxMessage per JSON-RPC
//     message on both transports); tool arguments are checked against
//     their JSON schemas, unknown fields refused.
package mcp
