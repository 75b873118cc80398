package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/urfave/cli/v2"
)

func init() {
	newRemoteBackend = func(c *cli.Context, base, token string) (backend, error) {
		return dialRemote(base, token)
	}
}

// remote talks to a daemon's HTTP API (docs/api.md). It implements backend
// (the history verbs) and authBackend (users and tokens) so that every verb
// prints exactly what it prints in direct mode.
type remote struct {
	base  string // scheme://host:port, no trailing slash
	token string
	hc    *http.Client
}

var (
	_ backend     = (*remote)(nil)
	_ authBackend = (*remote)(nil)
)

// dialRemote checks the URL and the token's presence; it does not connect.
func dialRemote(base, token string) (*remote, error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, exitf(exitUsage, "--server %q is not a daemon URL such as http://127.0.0.1:7420", base)
	}
	if token == "" {
		return nil, exitf(exitUsage, "--server needs a token: set --token or FOLIO_TOKEN (an admin creates one with `folio user add NAME`)")
	}
	return &remote{base: u.Scheme + "://" + u.Host + strings.TrimRight(u.Path, "/"), token: token,
		hc: &http.Client{Timeout: 5 * time.Minute}}, nil
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out. Error answers become the errors direct mode would return.
func (r *remote) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	u := r.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return exitf(exitUsage, "bad request to %s: %v", r.base, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return exitf(exitUnavailable, "cannot reach the folio daemon at %s: %v (is `folio serve` running?)", r.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return exitf(exitUnavailable, "read the answer of %s: %v", r.base, err)
	}
	if resp.StatusCode/100 != 2 {
		return r.remoteError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return exitf(exitError, "the daemon at %s answered %s %s with unexpected JSON: %v", r.base, method, path, err)
	}
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// invalidError is a remote "invalid" error: its message is what direct
// mode prints, and errors.Is(err, repo.ErrInvalid) holds.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return repo.ErrInvalid }

// remoteError rebuilds the error direct mode would have returned, so that
// userError prints the same line with the same exit code.
func (r *remote) remoteError(status int, data []byte) error {
	var eb server.ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
		return exitf(exitError, "the daemon at %s answered HTTP %d: %s", r.base, status, strings.TrimSpace(string(data)))
	}
	e := eb.Error
	if e.Kind != "" {
		return errs.Remote(e.Kind, e.Code, e.Message) // the same kind, code and message as in the daemon
	}
	switch e.Code {
	case server.CodeNotFound:
		switch e.What {
		case "document", "version", "block":
			return &repo.NotFoundError{What: e.What, Name: e.Name, Latest: e.Latest}
		}
		return exitf(exitNotFound, "%s", e.Message)
	case server.CodeConflict:
		if e.Doc != "" {
			return &repo.ConflictError{Doc: e.Doc, Reason: e.Reason, Seq: e.Seq, Blocks: e.Blocks}
		}
		return exitf(exitConflict, "%s", e.Message)
	case server.CodeInvalid:
		if len(e.Problems) > 0 {
			return &flowdoc.ValidationError{Problems: e.Problems}
		}
		return &invalidError{msg: e.Message}
	case server.CodeUnauthorized:
		return exitf(exitError, "the daemon at %s rejected the token (missing, unknown or revoked): check --token / FOLIO_TOKEN; an admin creates one with `folio token add USER`", r.base)
	case server.CodeForbidden:
		return exitf(exitError, "not allowed: %s", e.Message)
	case server.CodeTooLarge:
		return exitf(exitInvalid, "%s", e.Message)
	case server.CodeUnavailable:
		return exitf(exitUnavailable, "the daemon at %s is unavailable: %s", r.base, e.Message)
	case server.CodeStorageFailed, server.CodeStorageFull:
		return exitf(exitUnavailable, "the daemon at %s did not store this: %s", r.base, e.Message)
	}
	return exitf(exitError, "the daemon at %s failed: %s", r.base, e.Message)
}

func docPath(doc string, rest ...string) string {
	p := "/v1/docs/" + url.PathEscape(doc)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (r *remote) CreateDoc(ctx context.Context, p repo.CreateParams) (repo.VersionInfo, error) {
	req := server.CreateRequest{ID: p.ID, Owner: p.Owner, Attrs: p.Attrs, Body: flowdoc.CanonicalJSON(p.Body), Message: p.Message}
	var v repo.VersionInfo
	err := r.do(ctx, http.MethodPost, "/v1/docs", nil, req, &v)
	return v, err
}

func (r *remote) ListDocs(ctx context.Context) ([]repo.DocInfo, error) {
	var docs []repo.DocInfo
	err := r.do(ctx, http.MethodGet, "/v1/docs", nil, nil, &docs)
	if len(docs) == 0 {
		docs = nil
	}
	return docs, err
}

func (r *remote) Draft(ctx context.Context, doc string) (repo.Draft, error) {
	var d repo.Draft
	err := r.do(ctx, http.MethodGet, docPath(doc, "draft"), nil, nil, &d)
	return d, err
}

func (r *remote) SaveDraft(ctx context.Context, p repo.SaveParams) (repo.SaveResult, error) {
	req := server.SaveRequest{BaseSeq: p.BaseSeq, Changes: p.Changes, Attrs: p.Attrs, Seal: p.Seal, Message: p.Message, Session: p.Session}
	if p.Body != nil {
		req.Body = flowdoc.CanonicalJSON(*p.Body)
	}
	var res repo.SaveResult
	err := r.do(ctx, http.MethodPost, docPath(p.Doc, "draft"), nil, req, &res)
	return res, err
}

func (r *remote) Checkpoint(ctx context.Context, doc, reason, message string) (repo.VersionInfo, bool, error) {
	var res server.CheckpointResponse
	err := r.do(ctx, http.MethodPost, docPath(doc, "checkpoint"), nil, server.CheckpointRequest{Reason: reason, Message: message}, &res)
	return res.Version, res.Created, err
}

func (r *remote) Log(ctx context.Context, doc string, limit int) ([]repo.VersionInfo, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var vs []repo.VersionInfo
	err := r.do(ctx, http.MethodGet, docPath(doc, "log"), q, nil, &vs)
	return vs, err
}

func (r *remote) Show(ctx context.Context, doc, label string) (repo.Snapshot, error) {
	if label == "" {
		label = "head"
	}
	var res server.ShowResponse
	if err := r.do(ctx, http.MethodGet, docPath(doc, "versions", url.PathEscape(label)), nil, nil, &res); err != nil {
		return repo.Snapshot{}, err
	}
	body, err := flowdoc.Parse(res.Body)
	if err != nil {
		return repo.Snapshot{}, exitf(exitError, "the daemon at %s sent a body that does not parse: %v", r.base, err)
	}
	return repo.Snapshot{Info: res.Version, Body: body, Attrs: res.Attrs}, nil
}

func (r *remote) Diff(ctx context.Context, doc, a, b string) ([]flowdoc.BlockChange, error) {
	var res server.DiffResponse
	err := r.do(ctx, http.MethodGet, docPath(doc, "diff"), url.Values{"from": {a}, "to": {b}}, nil, &res)
	if len(res.Changes) == 0 {
		res.Changes = nil
	}
	return res.Changes, err
}

func (r *remote) Restore(ctx context.Context, doc, label, block string) (repo.VersionInfo, error) {
	var v repo.VersionInfo
	err := r.do(ctx, http.MethodPost, docPath(doc, "restore"), nil, server.RestoreRequest{Label: label, Block: block}, &v)
	return v, err
}

func (r *remote) History(ctx context.Context, doc, block string) ([]repo.BlockRevision, error) {
	var hs []repo.BlockRevision
	err := r.do(ctx, http.MethodGet, docPath(doc, "blocks", url.PathEscape(block), "history"), nil, nil, &hs)
	return hs, err
}

func (r *remote) Fsck(ctx context.Context) (repo.FsckReport, error) {
	var rep repo.FsckReport
	err := r.do(ctx, http.MethodGet, "/v1/fsck", nil, nil, &rep)
	return rep, err
}

func (r *remote) GC(ctx context.Context, o repo.GCOptions) (repo.GCReport, error) {
	var rep repo.GCReport
	req := server.GCRequest{PruneSeconds: int64(o.Prune / time.Second), DryRun: o.DryRun}
	if o.Prune < 0 {
		req.PruneSeconds = -1 // no reflog entry keeps anything
	}
	err := r.do(ctx, http.MethodPost, "/v1/admin/gc", nil, req, &rep)
	return rep, err
}

func (r *remote) AddUser(ctx context.Context, name string, admin bool) (issued, error) {
	var res server.IssuedResponse
	err := r.do(ctx, http.MethodPost, "/v1/users", nil, server.UserRequest{Name: name, Admin: admin}, &res)
	return issued{User: res.User, Role: res.Role, Secret: res.Token, Token: res.Info}, err
}

func (r *remote) ListUsers(ctx context.Context) ([]auth.User, error) {
	var us []auth.User
	err := r.do(ctx, http.MethodGet, "/v1/users", nil, nil, &us)
	return us, err
}

func (r *remote) ListTokens(ctx context.Context, user string) ([]auth.Token, error) {
	q := url.Values{}
	if user != "" {
		q.Set("user", user)
	}
	var ts []auth.Token
	err := r.do(ctx, http.MethodGet, "/v1/tokens", q, nil, &ts)
	return ts, err
}

func (r *remote) DeleteUser(ctx context.Context, name string) ([]auth.Token, error) {
	var res struct {
		Revoked []auth.Token `json:"revoked"`
	}
	err := r.do(ctx, http.MethodDelete, "/v1/users/"+url.PathEscape(name), nil, nil, &res)
	return res.Revoked, err
}

func (r *remote) AddToken(ctx context.Context, user, kind string) (issued, error) {
	var res server.IssuedResponse
	err := r.do(ctx, http.MethodPost, "/v1/tokens", nil, server.TokenRequest{User: user, Kind: kind}, &res)
	return issued{User: res.User, Role: res.Role, Secret: res.Token, Token: res.Info}, err
}

func (r *remote) RevokeToken(ctx context.Context, ref string) (auth.Token, error) {
	var t auth.Token
	err := r.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(ref), nil, nil, &t)
	return t, err
}

func (r *remote) Close() error {
	r.hc.CloseIdleConnections()
	return nil
}

// String names the daemon, for messages.
func (r *remote) String() string { return fmt.Sprintf("folio daemon at %s", r.base) }
