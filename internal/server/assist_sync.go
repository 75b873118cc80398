package server

import (
	"context"
	"strings"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/syncproto"
)

// syncAssist adapts the writing assistant to the sync server
// (syncproto.Assistant): the same service calls, and the same rule of who
// reaches what, as the HTTP endpoints (assist.go), so that a run,
// suggestion or session the caller may not reach is answered exactly like
// a missing one on both transports.
type syncAssist struct{ s *Server }

var _ syncproto.Assistant = syncAssist{}

// service returns the assistant, or the error every assistant endpoint of
// a daemon without one answers.
func (a syncAssist) service() (*assistant.Service, error) {
	if a.s.cfg.Assistant == nil {
		return nil, errNoAssistant
	}
	return a.s.cfg.Assistant, nil
}

func (a syncAssist) Assist(ctx context.Context, p syncproto.Principal, req *syncproto.AssistRequest) (syncproto.AssistQueued, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.AssistQueued{}, err
	}
	q, err := svc.Assist(ctx, actorOf(authPrincipal(p)), assistant.AssistRequest{Doc: req.Doc, Session: req.Session,
		Scope: scopeOf(req.Scope), Instruction: req.Instruction, Persona: req.Persona, WritingPreset: req.WritingPreset,
		EditingPreset: req.EditingPreset, IdempotencyKey: req.IdempotencyKey})
	if err != nil {
		return syncproto.AssistQueued{}, err
	}
	out := syncproto.AssistQueued{Doc: req.Doc, Run: runInfo(q.Run), Created: q.Created, Session: q.Session.ID,
		Message: q.Message.Seq, Stream: syncproto.RunStream(q.Run.ID)}
	if q.Checkpoint != nil {
		out.Checkpoint = q.Checkpoint.Label
	}
	return out, nil
}

// run loads run id for p: p's own (or any, for an admin) on a document p
// still reaches.
func (a syncAssist) run(ctx context.Context, svc *assistant.Service, p syncproto.Principal, id string) (assistant.Run, error) {
	ap := authPrincipal(p)
	run, err := svc.Run(ctx, actorOf(ap), id)
	if err == nil && !a.s.reaches(ap, run.Doc) {
		err = missing("run", id)
	}
	return run, hidden(err, "run", id)
}

// suggestion checks that p reaches suggestion id's document.
func (a syncAssist) suggestion(ctx context.Context, svc *assistant.Service, p syncproto.Principal, id string) error {
	_, err := a.suggestionOf(ctx, svc, p, id)
	return err
}

// suggestionOf is suggestion that also returns the suggestion read.
func (a syncAssist) suggestionOf(ctx context.Context, svc *assistant.Service, p syncproto.Principal, id string) (assistant.Suggestion, error) {
	ap := authPrincipal(p)
	sg, err := svc.Suggestion(ctx, actorOf(ap), id)
	if err == nil && !a.s.reaches(ap, sg.Doc) {
		err = missing("suggestion", id)
	}
	return sg, hidden(err, "suggestion", id)
}

func (a syncAssist) CancelRun(ctx context.Context, p syncproto.Principal, id string) (syncproto.RunInfo, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.RunInfo{}, err
	}
	if _, err := a.run(ctx, svc, p, id); err != nil {
		return syncproto.RunInfo{}, err
	}
	run, err := svc.CancelRun(ctx, actorOf(authPrincipal(p)), id)
	if err != nil {
		return syncproto.RunInfo{}, err
	}
	return runInfo(run), nil
}

func (a syncAssist) PreviewSuggestion(ctx context.Context, p syncproto.Principal, id string) (syncproto.SuggestionPreviewDone, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.SuggestionPreviewDone{}, err
	}
	if err := a.suggestion(ctx, svc, p, id); err != nil {
		return syncproto.SuggestionPreviewDone{}, err
	}
	pv, err := svc.Preview(ctx, actorOf(authPrincipal(p)), id)
	if err != nil {
		return syncproto.SuggestionPreviewDone{}, err
	}
	return syncproto.SuggestionPreviewDone{Suggestion: suggestionInfo(pv.Suggestion), Candidate: pv.Candidate,
		Changes: pv.Changes, Current: pv.Current, CarriedOver: pv.CarriedOver, Against: pv.Against}, nil
}

func (a syncAssist) AcceptSuggestion(ctx context.Context, p syncproto.Principal, id string, confirmDelete bool) (syncproto.SuggestionAcceptDone, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.SuggestionAcceptDone{}, err
	}
	sg, err := a.suggestionOf(ctx, svc, p, id)
	if err != nil {
		return syncproto.SuggestionAcceptDone{}, err
	}
	acc, err := svc.AcceptLoaded(ctx, actorOf(authPrincipal(p)), sg, assistant.AcceptOptions{ConfirmDelete: confirmDelete})
	if err != nil {
		return syncproto.SuggestionAcceptDone{}, err
	}
	if !acc.Repeat { // a new version
		a.s.m.checkpoints.WithLabelValues("accept_suggestion").Inc()
	}
	return syncproto.SuggestionAcceptDone{Suggestion: suggestionInfo(acc.Suggestion), Version: acc.Version.Label,
		Fingerprint: acc.Version.Fingerprint}, nil
}

func (a syncAssist) RejectSuggestion(ctx context.Context, p syncproto.Principal, id, reason string) (syncproto.SuggestionInfo, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.SuggestionInfo{}, err
	}
	if err := a.suggestion(ctx, svc, p, id); err != nil {
		return syncproto.SuggestionInfo{}, err
	}
	sg, err := svc.Reject(ctx, actorOf(authPrincipal(p)), id, reason)
	if err != nil {
		return syncproto.SuggestionInfo{}, err
	}
	return suggestionInfo(sg), nil
}

func (a syncAssist) Sessions(ctx context.Context, p syncproto.Principal, doc string) ([]syncproto.SessionInfo, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	ss, err := svc.Sessions(ctx, actorOf(authPrincipal(p)), doc)
	if err != nil {
		return nil, err
	}
	out := make([]syncproto.SessionInfo, len(ss))
	for i, s := range ss {
		out[i] = sessionInfo(s)
	}
	return out, nil
}

func (a syncAssist) StartSession(ctx context.Context, p syncproto.Principal, doc, title string) (syncproto.SessionInfo, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.SessionInfo{}, err
	}
	ss, err := svc.StartSession(ctx, actorOf(authPrincipal(p)), doc, title)
	if err != nil {
		return syncproto.SessionInfo{}, err
	}
	return sessionInfo(ss), nil
}

func (a syncAssist) SwitchSession(ctx context.Context, p syncproto.Principal, doc, id string) (syncproto.SessionInfo, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.SessionInfo{}, err
	}
	ss, err := svc.SwitchSession(ctx, actorOf(authPrincipal(p)), doc, id)
	if err != nil {
		return syncproto.SessionInfo{}, hidden(err, "session", id)
	}
	return sessionInfo(ss), nil
}

// PersonalizeSession sets the choice of p's session id, which must be on
// doc (else it is not found, like another user's).
func (a syncAssist) PersonalizeSession(ctx context.Context, p syncproto.Principal, doc, id string, c syncproto.SessionChoice) (syncproto.SessionInfo, error) {
	svc, err := a.service()
	if err != nil {
		return syncproto.SessionInfo{}, err
	}
	ac := actorOf(authPrincipal(p))
	ss, err := svc.Session(ctx, ac, id)
	if err == nil && ss.Doc != doc {
		err = missing("session", id)
	}
	if err != nil {
		return syncproto.SessionInfo{}, hidden(err, "session", id)
	}
	ss, err = svc.SetChoice(ctx, ac, id, assistant.Choice{Kind: assistant.PersonalizationKind(c.Kind), ID: c.ID})
	if err != nil {
		return syncproto.SessionInfo{}, err
	}
	return sessionInfo(ss), nil
}

// canReadRun reports whether p may follow run stream "run:<id>": p's own
// run (any, for an admin) on a document p still reaches.
func (a syncAssist) canReadRun(ctx context.Context, p syncproto.Principal, id string) bool {
	svc, err := a.service()
	if err != nil {
		return false
	}
	_, err = a.run(ctx, svc, p, id)
	return err == nil
}

// The conversions between the service's records and their wire form.

func scopeOf(s syncproto.AssistScope) assistant.Scope {
	return assistant.Scope{Kind: assistant.ScopeKind(s.Kind), Block: s.Block, Start: s.Start, End: s.End, From: s.From, To: s.To}
}

func wireScope(s assistant.Scope) syncproto.AssistScope {
	return syncproto.AssistScope{Kind: string(s.Kind), Block: s.Block, Start: s.Start, End: s.End, From: s.From, To: s.To}
}

func runInfo(r assistant.Run) syncproto.RunInfo {
	out := syncproto.RunInfo{ID: r.ID, Doc: r.Doc, Session: r.Session, State: string(r.State), Scope: wireScope(r.Scope),
		Instruction: r.Instruction, Personalization: string(r.Personalization.Kind), Base: r.Base.Label,
		Attempts: r.Attempts, Retries: r.Retries, Recoveries: r.Recoveries, CancelRequested: r.CancelRequested,
		Provider: r.Provider, Model: r.Model, PromptHash: r.Prompt.Hash, Outcome: r.Outcome, Summary: r.Summary,
		Suggestion: r.Suggestion, Created: r.Created, Started: r.Started, Finished: r.Finished}
	if pin := r.Personalization.Preset; pin != nil {
		out.Preset = &syncproto.PresetPin{Type: string(pin.Type), ID: pin.ID, VersionID: pin.VersionID, Number: pin.Number, Name: pin.Name}
	}
	if pin := r.Personalization.Persona; pin != nil {
		out.Persona = wirePersona(pin)
	}
	if g := r.Grounding; g != nil {
		out.Grounding = &syncproto.RunGrounding{Pass: g.Pass, Retried: g.Retried, Checked: g.Checked,
			Claims: wireClaims(g.Claims), RetryClaims: wireClaims(g.RetryClaims), MemoryProvided: g.MemoryProvided,
			UsedMemory: g.UsedMemory, References: g.References}
	}
	if r.Error != nil {
		out.Error = &syncproto.RunFailure{Code: r.Error.Code, Message: r.Error.Message}
	}
	return out
}

func wirePersona(p *assistant.PersonaPin) *syncproto.PersonaPin {
	out := &syncproto.PersonaPin{ID: p.ID, Name: p.Name, Version: p.Version, Seq: p.Seq, Style: p.Style,
		Learning: p.Learning, LearningRules: p.LearningRules, Memory: p.Memory, MemoryKeys: p.MemoryKeys,
		MemoryMatched: p.MemoryMatched, MemoryWithheld: p.MemoryWithheld}
	for _, ms := range p.MemorySources {
		out.MemorySources = append(out.MemorySources, syncproto.MemorySourcePin{Doc: ms.Doc, Version: ms.Version.String(),
			Label: ms.Label, Items: ms.Items})
	}
	for _, ref := range p.References {
		out.References = append(out.References, syncproto.ReferencePin{Doc: ref.Doc, Version: ref.Version.String(),
			Label: ref.Label, Title: ref.Title, Score: ref.Score, Reasons: ref.Reasons})
	}
	return out
}

func wireClaims(cs []assistant.GroundingClaim) []syncproto.GroundingClaim {
	if len(cs) == 0 {
		return nil
	}
	out := make([]syncproto.GroundingClaim, len(cs))
	for i, c := range cs {
		out[i] = syncproto.GroundingClaim{Text: c.Text, Kind: c.Kind, Unsupported: c.Unsupported}
	}
	return out
}

func suggestionInfo(sg assistant.Suggestion) syncproto.SuggestionInfo {
	out := syncproto.SuggestionInfo{ID: sg.ID, Doc: sg.Doc, Run: sg.Run, Session: sg.Session, Status: string(sg.Status),
		Scope: wireScope(sg.Scope), Base: sg.Base.Label, Ops: sg.Ops, Summary: sg.Summary, Deletes: sg.Deletes,
		Created: sg.Created, Decided: sg.Decided, DecidedBy: sg.DecidedBy, Version: sg.Version, RejectReason: sg.RejectReason}
	if c := sg.Conflict; c != nil {
		out.Conflict = &syncproto.SuggestionConflict{Reason: c.Reason, Blocks: c.Blocks, By: c.By}
	}
	if c := sg.Carried; c != nil {
		out.Carried = &syncproto.SuggestionCarried{From: c.From.Label, To: c.To.Label}
	}
	if c := sg.Closeness; c != nil {
		out.Closeness = &syncproto.Closeness{Delta: c.Delta, Percentile: c.Percentile, Units: c.Units, Reliable: c.Reliable}
	}
	return out
}

func sessionInfo(s assistant.Session) syncproto.SessionInfo {
	out := syncproto.SessionInfo{ID: s.ID, Doc: s.Doc, Title: s.Title, Created: s.Created, Updated: s.Updated, Messages: s.Messages, Current: s.Current}
	if c := s.Choice; c != nil {
		out.Personalization = &syncproto.SessionChoice{Kind: string(c.Kind), ID: c.ID}
	}
	return out
}

// runStreamID returns the run id of a stream name "run:<id>".
func runStreamID(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, "run:")
	return id, ok && id != ""
}
