package main

import (
	"context"
	"os"
	"strings"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/mcp"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/persona"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "mcp",
		Usage:     "serve Folio's MCP tools to an agent over stdin and stdout (docs/agents.md)",
		ArgsUsage: " ",
		Description: "Speaks the Model Context Protocol on stdin/stdout for an agent (Claude Desktop, VS Code, …): tools that read\n" +
			"articles and propose suggestions, never anything else. With --server (or FOLIO_SERVER) every call goes to the\n" +
			"daemon's /v1/mcp with --token (an agent token: folio token add USER --kind agent). Without, it opens the data\n" +
			"directory directly and acts as the user FOLIO_USER names, with that user's reach, and runs assistant requests in\n" +
			"this process.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Usage: "data directory (default: the global --data, ./folio-data)"},
			&cli.StringFlag{Name: "config", Usage: "config file (TOML; default: the global --config)"},
		},
		Action: cmdMCP,
	})
}

func cmdMCP(c *cli.Context) error {
	ctx := c.Context
	if url := serverURL(c); url != "" {
		token := inherited(c, "token")
		if token == "" {
			return usagef("folio mcp --server needs a token (--token or FOLIO_TOKEN): an agent token, from `folio token add USER --kind agent`")
		}
		fw := &mcp.Forwarder{Endpoint: strings.TrimRight(url, "/") + server.MCPPath, Token: token, Version: version}
		defer fw.Close()
		s := mcp.NewServer(nil, mcp.Options{Version: version, Forward: fw})
		return mcp.ServeStdio(ctx, s, os.Stdin, os.Stdout)
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	l, ok := b.(*localBackend)
	if !ok {
		return errs.E(errs.Internal, "folio mcp: direct mode without a data directory")
	}
	u, err := auth.New(l.r.DB()).GetUser(ctx, l.actor)
	if err != nil {
		return errs.E(errs.Unauthenticated, "folio mcp acts as %q (FOLIO_USER, or the login name), and this store has no such user: set FOLIO_USER to a user's name, or add one with `folio user add %s`", l.actor, l.actor)
	}
	if err := l.startRunner(ctx); err != nil {
		return err
	}
	var people *persona.Service
	if l.da.personas != nil {
		people = l.da.personas.svc
	}
	p := auth.Principal{User: u.Name, UserID: u.ID, Admin: u.Admin(), TokenID: "direct", Kind: auth.KindAgent}
	local := &mcp.Local{Repo: l.r, Assistant: l.da.svc, People: people, Principal: p}
	s := mcp.NewServer(func(context.Context, *sdk.RequestExtra) (mcp.Backend, error) { return local, nil }, mcp.Options{Version: version})
	return mcp.ServeStdio(ctx, s, os.Stdin, os.Stdout)
}
