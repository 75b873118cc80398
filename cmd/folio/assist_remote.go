package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/server"
)

// The writing assistant through the daemon's API (docs/api.md, "Writing
// assistant"): each method is one request, and WaitRun and FollowRun read
// the run's event stream (Server-Sent Events), resuming with
// Last-Event-ID when the daemon ends a stream before the run is final.

func runPath(id string, rest ...string) string {
	p := "/v1/runs/" + url.PathEscape(id)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (r *remote) Assist(ctx context.Context, req assistant.AssistRequest) (assistant.Queued, error) {
	var q assistant.Queued
	err := r.do(ctx, http.MethodPost, docPath(req.Doc, "assist"), nil, server.AssistRequest{Scope: req.Scope,
		Instruction: req.Instruction, Persona: req.Persona, WritingPreset: req.WritingPreset, EditingPreset: req.EditingPreset,
		Session: req.Session, IdempotencyKey: req.IdempotencyKey}, &q)
	return q, err
}

func (r *remote) Run(ctx context.Context, id string) (assistant.Run, error) {
	var run assistant.Run
	err := r.do(ctx, http.MethodGet, runPath(id), nil, nil, &run)
	return run, err
}

// WaitRun follows the run's stream to its end, then reads the run.
func (r *remote) WaitRun(ctx context.Context, id string) (assistant.Run, error) {
	if err := r.FollowRun(ctx, id, 0, func(server.RunEventView) error { return nil }); err != nil {
		return assistant.Run{}, err
	}
	return r.Run(ctx, id)
}

func (r *remote) CancelRun(ctx context.Context, id string) (assistant.Run, error) {
	var run assistant.Run
	err := r.do(ctx, http.MethodPost, runPath(id, "cancel"), nil, nil, &run)
	return run, err
}

func (r *remote) RunEvents(ctx context.Context, id string, after uint64, limit int) (server.RunEventsPage, error) {
	q := url.Values{"after": {strconv.FormatUint(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var page server.RunEventsPage
	err := r.do(ctx, http.MethodGet, runPath(id, "events"), q, nil, &page)
	return page, err
}

// FollowRun reads GET /v1/runs/{id}/stream until the run's final event,
// reconnecting with Last-Event-ID when the daemon ends a stream first (its
// stream time limit, a restart).
func (r *remote) FollowRun(ctx context.Context, id string, after uint64, fn func(server.RunEventView) error) error {
	for attempt := 0; ; attempt++ {
		final, err := r.followOnce(ctx, id, &after, fn)
		if err != nil || final {
			return err
		}
		if attempt >= 1000 {
			return errs.E(errs.Unavailable, "the daemon at %s keeps ending the event stream of run %s early", r.base, id)
		}
		// The stream ended before the run's final event: ask where it
		// stands (a run that ended while no stream was open has its final
		// event after the cursor, and the next stream delivers it).
	}
}

// finalEvents are the run event types after which a run changes no more.
var finalEvents = map[string]bool{assistant.EventSucceeded: true, assistant.EventFailed: true, assistant.EventCancelled: true}

// followOnce reads one event stream; it reports whether the run's final
// event was passed.
func (r *remote) followOnce(ctx context.Context, id string, after *uint64, fn func(server.RunEventView) error) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+runPath(id, "stream"), nil)
	if err != nil {
		return false, usagef("bad request to %s: %v", r.base, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatUint(*after, 10))
	resp, err := r.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, errs.E(errs.Unavailable, "cannot reach the folio daemon at %s: %v (is `folio serve` running?)", r.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, r.remoteError(resp, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var data strings.Builder
	final := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() == 0 {
				continue
			}
			var ev server.RunEventView
			if err := json.Unmarshal([]byte(data.String()), &ev); err != nil {
				return false, fmt.Errorf("the daemon at %s sent a run event that does not parse: %v", r.base, err)
			}
			data.Reset()
			if err := fn(ev); err != nil {
				return false, err
			}
			*after = ev.Seq
			final = final || finalEvents[ev.Type]
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() != nil {
		return false, ctx.Err()
	}
	if final {
		return true, nil
	}
	// The stream ended without a final event: the run may have ended
	// before a cancel was confirmed, or the daemon cut the stream.
	run, err := r.Run(ctx, id)
	if err != nil {
		return false, err
	}
	if run.State.Terminal() {
		page, err := r.RunEvents(ctx, id, *after, 0)
		if err != nil {
			return false, err
		}
		if len(page.Events) == 0 {
			return true, nil
		}
	}
	return false, nil
}

func (r *remote) Sessions(ctx context.Context, doc string) ([]assistant.Session, error) {
	var ss []assistant.Session
	err := r.do(ctx, http.MethodGet, docPath(doc, "sessions"), nil, nil, &ss)
	return ss, err
}

func (r *remote) StartSession(ctx context.Context, doc, title string) (assistant.Session, error) {
	var ss assistant.Session
	err := r.do(ctx, http.MethodPost, docPath(doc, "sessions"), nil, server.SessionRequest{Title: title}, &ss)
	return ss, err
}

func (r *remote) SwitchSession(ctx context.Context, doc, id string) (assistant.Session, error) {
	var ss assistant.Session
	err := r.do(ctx, http.MethodPost, docPath(doc, "sessions", url.PathEscape(id), "switch"), nil, nil, &ss)
	return ss, err
}

func sessionPath(id string, rest ...string) string {
	p := "/v1/sessions/" + url.PathEscape(id)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (r *remote) Session(ctx context.Context, id string) (assistant.Session, error) {
	var ss assistant.Session
	err := r.do(ctx, http.MethodGet, sessionPath(id), nil, nil, &ss)
	return ss, err
}

func (r *remote) Messages(ctx context.Context, session string, after uint64, limit int) ([]assistant.MessagePreview, error) {
	q := url.Values{"after": {strconv.FormatUint(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var ms []assistant.MessagePreview
	err := r.do(ctx, http.MethodGet, sessionPath(session, "messages"), q, nil, &ms)
	return ms, err
}

func (r *remote) MessageSource(ctx context.Context, session string, seq uint64) (assistant.MessageSource, error) {
	var src assistant.MessageSource
	err := r.do(ctx, http.MethodGet, sessionPath(session, "messages", strconv.FormatUint(seq, 10)), nil, nil, &src)
	return src, err
}

func suggestionPath(id string, rest ...string) string {
	p := "/v1/suggestions/" + url.PathEscape(id)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (r *remote) Suggestions(ctx context.Context, doc string, status assistant.SuggestionStatus, limit int) ([]assistant.Suggestion, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", string(status))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var sgs []assistant.Suggestion
	err := r.do(ctx, http.MethodGet, docPath(doc, "suggestions"), q, nil, &sgs)
	if len(sgs) == 0 {
		sgs = nil
	}
	return sgs, err
}

func (r *remote) Suggestion(ctx context.Context, id string) (assistant.Suggestion, error) {
	var sg assistant.Suggestion
	err := r.do(ctx, http.MethodGet, suggestionPath(id), nil, nil, &sg)
	return sg, err
}

func (r *remote) Preview(ctx context.Context, id string) (assistant.Preview, error) {
	var pv assistant.Preview
	err := r.do(ctx, http.MethodGet, suggestionPath(id, "preview"), nil, nil, &pv)
	return pv, err
}

func (r *remote) Accept(ctx context.Context, id string, o assistant.AcceptOptions) (assistant.Accepted, error) {
	var acc assistant.Accepted
	err := r.do(ctx, http.MethodPost, suggestionPath(id, "accept"), nil, o, &acc)
	return acc, err
}

func (r *remote) Reject(ctx context.Context, id, reason string) (assistant.Suggestion, error) {
	var sg assistant.Suggestion
	err := r.do(ctx, http.MethodPost, suggestionPath(id, "reject"), nil, server.RejectRequest{Reason: reason}, &sg)
	return sg, err
}

func (r *remote) Presets(ctx context.Context, t assistant.PresetType, archived bool) ([]server.PresetView, error) {
	q := url.Values{}
	if t != "" {
		q.Set("type", string(t))
	}
	if archived {
		q.Set("archived", "true")
	}
	var ps []server.PresetView
	err := r.do(ctx, http.MethodGet, "/v1/presets", q, nil, &ps)
	if len(ps) == 0 {
		ps = nil
	}
	return ps, err
}

func presetPath(id string, rest ...string) string {
	p := "/v1/admin/presets/" + url.PathEscape(id)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (r *remote) PresetDetail(ctx context.Context, id string) (assistant.PresetDetail, error) {
	var d assistant.PresetDetail
	err := r.do(ctx, http.MethodGet, presetPath(id), nil, nil, &d)
	return d, err
}

func (r *remote) PresetVersion(ctx context.Context, id string, n int) (assistant.PresetVersion, error) {
	var v assistant.PresetVersion
	err := r.do(ctx, http.MethodGet, presetPath(id, "versions", strconv.Itoa(n)), nil, nil, &v)
	return v, err
}

func (r *remote) CreatePreset(ctx context.Context, in assistant.PresetInput) (assistant.Preset, error) {
	var p assistant.Preset
	err := r.do(ctx, http.MethodPost, "/v1/admin/presets", nil, in, &p)
	return p, err
}

func (r *remote) EditPreset(ctx context.Context, id string, in assistant.PresetInput) (assistant.Preset, error) {
	var p assistant.Preset
	err := r.do(ctx, http.MethodPost, presetPath(id, "versions"), nil, in, &p)
	return p, err
}

func (r *remote) CopyPreset(ctx context.Context, id, name string) (assistant.Preset, error) {
	var p assistant.Preset
	err := r.do(ctx, http.MethodPost, presetPath(id, "copy"), nil, server.CopyPresetRequest{Name: name}, &p)
	return p, err
}

func (r *remote) ReorderPresets(ctx context.Context, t assistant.PresetType, ids []string) ([]assistant.Preset, error) {
	var ps []assistant.Preset
	err := r.do(ctx, http.MethodPost, "/v1/admin/presets/order", nil, server.ReorderRequest{Type: t, IDs: ids}, &ps)
	return ps, err
}

func (r *remote) ArchivePreset(ctx context.Context, id string) (assistant.Preset, error) {
	var p assistant.Preset
	err := r.do(ctx, http.MethodPost, presetPath(id, "archive"), nil, nil, &p)
	return p, err
}

func (r *remote) RestorePreset(ctx context.Context, id string) (assistant.Preset, error) {
	var p assistant.Preset
	err := r.do(ctx, http.MethodPost, presetPath(id, "restore"), nil, nil, &p)
	return p, err
}

func (r *remote) Explain(ctx context.Context, doc, label string) (assistant.Explanation, error) {
	if label == "" {
		label = "head"
	}
	var e assistant.Explanation
	err := r.do(ctx, http.MethodGet, docPath(doc, "versions", url.PathEscape(label), "explain"), nil, nil, &e)
	return e, err
}
