package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/urfave/cli/v2"
)

func init() {
	newRemoteBackend = func(c *cli.Context, base, token string) (backend, error) {
		return dialRemote(base, token)
	}
}

// remote talks to a daemon's HTTP API (docs/api.md). It implements backend
// (the history verbs) and authBackend (users and tokens) so that every verb
// prints exactly what it prints in direct mode: the daemon's errors come
// back with the kind, code and message they had there (errs.Remote).
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
		return nil, usagef("--server %q is not a daemon URL such as http://127.0.0.1:7420", base)
	}
	if p := strings.TrimRight(u.Path, "/"); p == "/v1" || strings.HasSuffix(p, "/v1") {
		return nil, usagef("--server / FOLIO_SERVER %q ends in /v1: give the daemon's base URL, e.g. %s://%s%s (the CLI adds /v1 itself)",
			base, u.Scheme, u.Host, strings.TrimSuffix(p, "/v1"))
	}
	if token == "" {
		return nil, usagef("--server needs a token: set --token or FOLIO_TOKEN (an admin creates one with `folio user add NAME`)")
	}
	// Answers may stream for long (packs, git exports); only the wait for
	// the answer's start is bounded.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 5 * time.Minute
	return &remote{base: u.Scheme + "://" + u.Host + strings.TrimRight(u.Path, "/"), token: token,
		hc: &http.Client{Transport: tr}}, nil
}

// request sends a request with an optional body and returns the answer
// when it is a success; an error answer becomes the daemon's error.
func (r *remote) request(ctx context.Context, method, path string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	u := r.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, usagef("bad request to %s: %v", r.base, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errs.E(errs.Unavailable, "cannot reach the folio daemon at %s: %v (is `folio serve` running?)", r.base, unwrapURLError(err))
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, r.remoteError(resp, data)
	}
	return resp, nil
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out.
func (r *remote) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	resp, err := r.request(ctx, method, path, q, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return errs.E(errs.Unavailable, "read the answer of %s: %v", r.base, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the daemon at %s answered %s %s with unexpected JSON: %v", r.base, method, path, err)
	}
	return nil
}

// stream sends a request and copies a streamed answer to w; it returns
// the answer's trailers, which the daemon sends only when the stream
// ended well.
func (r *remote) stream(ctx context.Context, method, path string, q url.Values, body io.Reader, w io.Writer) (http.Header, error) {
	resp, err := r.request(ctx, method, path, q, body, "text/plain")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errs.E(errs.Unavailable, "the daemon at %s broke off %s %s: %v; its log says why", r.base, method, path, err)
	}
	if resp.Trailer.Get(server.TrailerComplete) != "1" {
		return nil, errs.E(errs.Unavailable, "the daemon at %s did not finish %s %s; its log says why", r.base, method, path)
	}
	return resp.Trailer, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// remoteError rebuilds the daemon's error from its answer: the same kind,
// code and message it had there. An answer that is not a folio error
// (a proxy, another server) says what it was, never its raw body.
func (r *remote) remoteError(resp *http.Response, data []byte) error {
	var eb server.ErrorBody
	if err := json.Unmarshal(data, &eb); err == nil && eb.Error.Code != "" {
		return eb.Error.Err()
	}
	k := errs.Internal
	if resp.StatusCode >= 500 {
		k = errs.Unavailable
	}
	return errs.E(k, "%s answered %s with %s, not a folio error: is --server / FOLIO_SERVER the folio daemon's base URL?",
		r.base, resp.Request.URL.Path, resp.Status)
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

func (r *remote) Chown(ctx context.Context, doc, user string) (server.ChownResponse, error) {
	var res server.ChownResponse
	err := r.do(ctx, http.MethodPut, docPath(doc, "owner"), nil, server.ChownRequest{User: user}, &res)
	return res, err
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
	req := server.SaveRequest{BaseSeq: p.BaseSeq, Align: p.Align, Changes: p.Changes, Attrs: p.Attrs, Seal: p.Seal, Message: p.Message, Session: p.Session}
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
		return repo.Snapshot{}, fmt.Errorf("the daemon at %s sent a body that does not parse: %w", r.base, err)
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
	slices.Reverse(hs) // the API answers newest first; the backend's contract is oldest first
	return hs, err
}

// Fsck runs in the daemon, which reports no progress.
func (r *remote) Fsck(ctx context.Context, _ repo.Progress) (repo.FsckReport, error) {
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

func (r *remote) ExportPack(ctx context.Context, docs []string, haves []objstore.ID, w io.Writer) (server.ExportStats, error) {
	var have bytes.Buffer
	for _, h := range haves {
		fmt.Fprintln(&have, h)
	}
	tr, err := r.stream(ctx, http.MethodPost, server.ExportPackPath, url.Values{"doc": docs}, &have, w)
	if err != nil {
		return server.ExportStats{}, err
	}
	return server.ExportStatsOf(tr), nil
}

func (r *remote) Heads(ctx context.Context) ([]pack.Ref, error) {
	var refs []pack.Ref
	err := r.do(ctx, http.MethodGet, server.ExportHeadsPath, nil, nil, &refs)
	return refs, err
}

func (r *remote) ExportGit(ctx context.Context, o pack.GitOptions, w io.Writer) (pack.GitStats, error) {
	q := url.Values{"doc": o.Docs}
	if o.Branch != "" {
		q.Set("branch", o.Branch)
	}
	tr, err := r.stream(ctx, http.MethodGet, server.ExportGitPath, q, nil, w)
	if err != nil {
		return pack.GitStats{}, err
	}
	return server.GitStatsOf(tr), nil
}

func (r *remote) Usage(ctx context.Context, days int) (*quota.Report, error) {
	var rep quota.Report
	err := r.do(ctx, http.MethodGet, server.UsagePath, url.Values{"days": {strconv.Itoa(days)}}, nil, &rep)
	return &rep, err
}

// AICheck runs the check in the daemon: the answer is one JSON object
// per line, the text as it arrives and then the report.
func (r *remote) AICheck(ctx context.Context, cat quota.Category, prompt string, onText func(string)) (*assistant.CheckReport, error) {
	b, err := json.Marshal(server.AICheckRequest{Category: string(cat), Prompt: prompt})
	if err != nil {
		return nil, err
	}
	resp, err := r.request(ctx, http.MethodPost, server.AICheckPath, nil, bytes.NewReader(b), "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var line server.AICheckLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("the daemon at %s answered ai check with unexpected JSON: %v", r.base, err)
		}
		if line.Report == nil {
			if onText != nil {
				onText(line.Text)
			}
			continue
		}
		rep := line.Report
		if e := rep.Error; e != nil {
			return rep, errs.Remote(e.Kind, e.Code, e.Message)
		}
		return rep, nil
	}
	if err := sc.Err(); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errs.E(errs.Unavailable, "the daemon at %s broke off the ai check; its log says why", r.base)
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
