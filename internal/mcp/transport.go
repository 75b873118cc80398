package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves s on r and w (newline-delimited JSON-RPC, as
// `folio mcp` does on stdin and stdout) until the client goes away or ctx
// ends. A message over MaxMessage or nested deeper than MaxDepth is
// answered with a JSON-RPC error and dropped; the connection goes on.
func ServeStdio(ctx context.Context, s *sdk.Server, r io.ReadCloser, w io.WriteCloser) error {
	out := &lockedWriter{w: w}
	in := &guardedIO{src: bufio.NewReaderSize(r, 64<<10), out: out}
	return s.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out, MaxLineLength: MaxMessage + 1})
}

// principalInfo carries the caller of an HTTP request to the tools.
const principalInfo = "folio.principal"

// Handler serves s over streamable HTTP for callers that principal
// returns (the daemon's authenticated principal of the request; the
// daemon checks the token on every request before this handler runs). A
// session is bound to the token that opened it: another token's request
// on it is refused. Bodies over MaxMessage are refused 413.
func Handler(s *sdk.Server, principal func(r *http.Request) auth.Principal) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{})
	verify := func(_ context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		p := principal(r)
		if p.TokenID == "" {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: p.TokenID, Extra: map[string]any{principalInfo: p}}, nil
	}
	authed := sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Method == http.MethodPost {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessage))
			var mb *http.MaxBytesError
			switch {
			case errors.As(err, &mb):
				http.Error(w, fmt.Sprintf("message over %d bytes: send less (propose smaller changes)", MaxMessage), http.StatusRequestEntityTooLarge)
				return
			case err != nil:
				http.Error(w, "read the request: "+err.Error(), http.StatusBadRequest)
				return
			case depth(body) > MaxDepth:
				http.Error(w, fmt.Sprintf("message nested deeper than %d levels", MaxDepth), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		authed.ServeHTTP(w, r)
	})
}

// PrincipalOf returns the caller of a tool call served by Handler.
func PrincipalOf(extra *sdk.RequestExtra) (auth.Principal, error) {
	if extra == nil || extra.TokenInfo == nil {
		return auth.Principal{}, errs.E(errs.Unauthenticated, "no token on this MCP request")
	}
	p, ok := extra.TokenInfo.Extra[principalInfo].(auth.Principal)
	if !ok {
		return auth.Principal{}, errs.E(errs.Unauthenticated, "no token on this MCP request")
	}
	return p, nil
}
