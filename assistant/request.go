package assistant

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant/presets"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/persona"
)

// DefaultEditingInstruction is the instruction of an editing-preset
// request whose instruction is empty.
const DefaultEditingInstruction = "按所选编辑预设编辑当前范围，并保留事实、观点和作者声音"

// DefaultEditingInstructionEN is DefaultEditingInstruction in English,
// for a document written in English.
const DefaultEditingInstructionEN = "Edit the chosen scope with the selected editing preset, keeping the facts, opinions and the author's voice"

// defaultInstruction is the default instruction in the language of doc's
// draft (presets.DetectLanguage of its text), or of the site when the
// draft has no text to tell by; Chinese when neither says.
func (s *Service) defaultInstruction(ctx context.Context, doc string) string {
	lang := ""
	if d, err := s.repo.Draft(ctx, doc); err == nil {
		var b strings.Builder
		for _, blk := range d.Body.Blocks {
			b.WriteString(flowdoc.PlainText(blk.RichText))
			if b.Len() > 4096 {
				break
			}
		}
		lang = presets.DetectLanguage(b.String())
	}
	if lang == "" {
		lang = s.lang
	}
	if lang == presets.English {
		return DefaultEditingInstructionEN
	}
	return DefaultEditingInstruction
}

// AssistRequest is one assistant request.
type AssistRequest struct {
	Doc string `json:"doc"`
	// Session is the session to continue; "" continues the article's
	// current session (creating one when it has none).
	Session     string `json:"session,omitempty"`
	Scope       Scope  `json:"scope"`
	Instruction string `json:"instruction"`
	// At most one of Persona, WritingPreset and EditingPreset.
	Persona       string `json:"persona,omitempty"`
	WritingPreset string `json:"writingPreset,omitempty"`
	EditingPreset string `json:"editingPreset,omitempty"`
	// IdempotencyKey makes a retried request return the first run (1-128
	// bytes of printable ASCII; per document and user).
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// Queued is the answer to a request: its run (queued, or as far as it
// got when the key was seen before), the session and the user message.
type Queued struct {
	Run Run `json:"run"`
	// Created is false when the idempotency key returned an earlier run.
	Created bool    `json:"created"`
	Session Session `json:"session"`
	Message Message `json:"message"`
	// Checkpoint is the version sealed (reason ai) because the draft was
	// unsealed; nil when it was not.
	Checkpoint *repo.VersionInfo `json:"checkpoint,omitempty"`
}

// payload is the task's input: everything the run executes with, frozen
// at the request (DESIGN.md §6: the conversation and the preset version
// are pinned in the task payload as in the run).
type payload struct {
	Run             string          `msgpack:"run"`
	Doc             string          `msgpack:"doc"`
	Actor           string          `msgpack:"actor"`
	ActorID         string          `msgpack:"actorid,omitempty"` // user id: the per-user limits' key
	Scope           Scope           `msgpack:"scope"`
	Instruction     string          `msgpack:"instr"`
	Personalization Personalization `msgpack:"pers"`
	Base            Baseline        `msgpack:"base"`
	Context         Context         `msgpack:"ctx"`
	Prompt          PromptInfo      `msgpack:"prompt"`
	// Persona is the frozen persona context of a persona run.
	Persona *personaInput `msgpack:"persona,omitempty"`
	// Agent is the outside agent that asked (nil: the author).
	Agent *AgentSource `msgpack:"agent,omitempty"`
}

// personalization checks the request's choice: exactly one or none.
func (s *Service) personalization(req AssistRequest) (Personalization, error) {
	var chosen []string
	if req.Persona != "" {
		chosen = append(chosen, "persona "+req.Persona)
	}
	if req.WritingPreset != "" {
		chosen = append(chosen, "writing preset "+req.WritingPreset)
	}
	if req.EditingPreset != "" {
		chosen = append(chosen, "editing preset "+req.EditingPreset)
	}
	if len(chosen) > 1 {
		return Personalization{}, errs.C(errs.Invalid, CodePersonalizationConflict,
			"a request chooses one of persona, writing preset and editing preset, or none; this one chose %s", strings.Join(chosen, " and "))
	}
	switch {
	case req.Persona != "":
		if s.personas == nil {
			return Personalization{}, errs.C(errs.Disabled, CodePersonaUnavailable,
				"this server runs the writing assistant without personas; choose a writing preset, an editing preset or none")
		}
		if !s.personas.Switches().Enabled {
			return Personalization{}, errs.C(errs.Disabled, persona.CodeDisabled, "personas are switched off ([persona] enabled = false)")
		}
		return Personalization{Kind: PersonalizePersona, Persona: &PersonaPin{ID: req.Persona}}, nil
	case req.WritingPreset != "":
		if !s.sw.WritingPresets {
			return Personalization{}, errs.C(errs.Disabled, CodeDisabled, "writing presets are switched off ([assistant] writing_presets)")
		}
		pin, err := s.pinPreset(req.WritingPreset, WritingPreset)
		return Personalization{Kind: PersonalizeWriting, Preset: &pin}, err
	case req.EditingPreset != "":
		if !s.sw.EditingPresets {
			return Personalization{}, errs.C(errs.Disabled, CodeDisabled, "editing presets are switched off ([assistant] editing_presets)")
		}
		pin, err := s.pinPreset(req.EditingPreset, EditingPreset)
		return Personalization{Kind: PersonalizeEditing, Preset: &pin}, err
	}
	return Personalization{Kind: PersonalizeNone}, nil
}

// enabled checks the switches for a scope.
func (s *Service) enabled(k ScopeKind) error {
	if !s.sw.Enabled {
		return errs.C(errs.Disabled, CodeDisabled, "the writing assistant is switched off ([assistant] enabled = false)")
	}
	on := map[ScopeKind]bool{ScopeDocument: s.sw.Document, ScopeBlock: s.sw.Block,
		ScopeSelection: s.sw.Selection, ScopeSection: s.sw.Section}
	if v, known := on[k]; known && !v {
		return errs.C(errs.Disabled, CodeDisabled, "%s requests are switched off ([assistant] %s = false)", k, k)
	}
	return nil
}

func validKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Assist takes a request: it checks the switches, the personalization,
// the instruction and the writing quota, seals the draft as a checkpoint
// (reason ai) when it is unsealed, and then, in one synced batch under
// the document's lock, stores the user message, the run (with the frozen
// conversation and the pinned preset version) and its task. The run
// executes on the task runner; follow it on "run:<id>" or with WaitRun.
//
// Errors: assistant_disabled, personalization_conflict,
// persona_unavailable, preset_archived, the writing quota's codes
// (writing_token_budget_exhausted, writing_rate_limited), not_found (the
// document, session or preset), invalid (scope, instruction, key).
func (s *Service) Assist(ctx context.Context, a Actor, req AssistRequest) (Queued, error) {
	if err := a.identified(); err != nil {
		return Queued{}, err
	}
	if err := s.enabled(req.Scope.Kind); err != nil {
		return Queued{}, err
	}
	pers, err := s.personalization(req)
	if err != nil {
		return Queued{}, err
	}
	instr := strings.TrimSpace(req.Instruction)
	defaulted := false
	if instr == "" && pers.Kind == PersonalizeEditing {
		instr, defaulted = s.defaultInstruction(ctx, req.Doc), true
	}
	switch {
	case instr == "":
		return Queued{}, errs.E(errs.Invalid, "an instruction is required (it may be empty only with an editing preset)")
	case !utf8.ValidString(instr) || utf8.RuneCountInString(instr) > maxInstruction:
		return Queued{}, errs.E(errs.Invalid, "the instruction must be valid UTF-8 of at most %d characters", maxInstruction)
	case req.IdempotencyKey != "" && !validKey(req.IdempotencyKey):
		return Queued{}, errs.E(errs.Invalid, "an idempotency key is 1-128 bytes of printable ASCII")
	}
	if err := s.checkDoc(ctx, req.Doc); err != nil {
		return Queued{}, err
	}
	if q, ok, err := s.seenKey(req.Doc, a.UserID, req.IdempotencyKey); err != nil || ok {
		return q, err
	}
	// The scope must make sense on what the author sees before anything
	// is sealed.
	dr, err := s.repo.Draft(ctx, req.Doc)
	if err != nil {
		return Queued{}, repoErr(err)
	}
	in, err := resolveScope(dr.Body, req.Scope)
	if err != nil {
		return Queued{}, err
	}
	if err := s.checkQuota(a.UserID, instr+"\n"+in.text); err != nil {
		return Queued{}, err
	}
	if err := s.agentAllowed(a); err != nil {
		return Queued{}, err
	}
	var q Queued
	for attempt := 0; ; attempt++ {
		done, err := s.enqueue(ctx, a, req, instr, defaulted, pers, &q)
		if done || err != nil {
			return q, repoErr(err)
		}
		if attempt == 2 {
			return Queued{}, errs.E(errs.Conflict, "the article kept changing while the request was prepared; try again")
		}
	}
}

// enqueue seals the draft if needed, takes the baseline and writes the
// request under the document lock. It returns false, nil when the
// article changed between the baseline and the lock (the caller tries
// again).
func (s *Service) enqueue(ctx context.Context, a Actor, req AssistRequest, instr string, defaulted bool, pers Personalization, q *Queued) (bool, error) {
	// Seal unsealed typing so the request is made against a version.
	cp, sealed, err := s.repo.Checkpoint(ctx, req.Doc, objstore.ReasonAI, a.User, "")
	if err != nil {
		return false, err
	}
	if sealed {
		q.Checkpoint = &cp
	}
	snap, err := s.repo.Show(ctx, req.Doc, "")
	if err != nil {
		return false, err
	}
	res, err := resolveScope(snap.Body, req.Scope)
	if err != nil {
		return false, err
	}
	base := Baseline{Version: snap.Info.Hash, Label: snap.Info.Label, Fingerprint: snap.Info.Fingerprint}
	for _, id := range anchorIDs(snap.Body, req.Scope, res) {
		b, _ := findBlock(snap.Body.Blocks, id)
		base.Targets = append(base.Targets, Target{ID: id, Content: objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(b))})
	}
	var pin *personaInput
	if pers.Kind == PersonalizePersona {
		pp, in, err := s.personaFor(ctx, a, pers.Persona.ID, instr, snap, res, anchorIDs(snap.Body, req.Scope, res))
		if err != nil {
			return false, err
		}
		pers.Persona, pin = pp, in
	}
	prompt := promptFor(req.Scope.Kind)
	done := false
	err = s.repo.Locked(ctx, req.Doc, func(tx *repo.DocTx) error {
		// A retry racing the first attempt: the key is checked again
		// under the lock.
		if prev, ok, err := s.seenKey(req.Doc, a.UserID, req.IdempotencyKey); err != nil || ok {
			*q, done = prev, ok
			return err
		}
		if tx.Head != base.Version || tx.Fingerprint != base.Fingerprint {
			return nil // changed since the baseline: start over
		}
		ss, err := s.sessionFor(req.Doc, req.Session, a)
		if err != nil {
			return err
		}
		seq := ss.Messages + 1
		convo, err := buildContext(s.db, ss.ID, seq, s.statusOf)
		if err != nil {
			return err
		}
		now := s.now().UnixMilli()
		runID := newID("r")
		msg := Message{Session: ss.ID, Seq: seq, Role: RoleUser, Text: instr, Actor: a.User, Time: now, Doc: req.Doc,
			Version: base.Version, Label: base.Label, Scope: req.Scope, Run: runID, Personalization: &pers}
		run := Run{ID: runID, Doc: req.Doc, Session: ss.ID, UserMessage: seq, Actor: a.User, ActorID: a.UserID, Scope: req.Scope,
			Instruction: instr, DefaultInstruction: defaulted, Personalization: pers, Base: base,
			Context: summarize(convo), Prompt: prompt.info, IdempotencyKey: req.IdempotencyKey,
			State: RunQueued, Created: now, Agent: a.Agent}
		pl, err := kv.Marshal(payload{Run: runID, Doc: req.Doc, Actor: a.User, ActorID: a.UserID, Scope: req.Scope, Instruction: instr,
			Personalization: pers, Base: base, Context: convo, Prompt: prompt.info, Persona: pin, Agent: a.Agent})
		if err != nil {
			return err
		}
		b := s.db.NewBatch()
		defer b.Close()
		t, err := s.runner.EnqueueIn(ctx, b, task.Spec{Kind: TaskKind, User: a.UserID, Payload: pl})
		if err != nil {
			return err
		}
		run.Task = t.ID.String()
		old := ss
		ss.Messages, ss.Updated = seq, max(now, ss.Updated+1)
		if ss.Title == "" {
			ss.Title, _ = clipRunes(strings.Join(strings.Fields(instr), " "), maxTitle)
		}
		if err := putSession(b, &old, ss); err != nil {
			return err
		}
		if err := kv.SetRecord(b, messageKey(ss.ID, seq), msg); err != nil {
			return err
		}
		if err := kv.SetRecord(b, runKey(runID), run); err != nil {
			return err
		}
		if req.IdempotencyKey != "" {
			if err := b.Set(runIdemKey(req.Doc, a.UserID, req.IdempotencyKey), []byte(runID)); err != nil {
				return err
			}
		}
		if err := appendRun(b, s.db, runID, EventQueued, now, RunEvent{Doc: req.Doc, Task: run.Task}); err != nil {
			return err
		}
		if err := s.db.Apply(b, kv.Sync); err != nil {
			return err
		}
		s.runner.Enqueued(t)
		s.repo.Hub().Notify(streamRun(runID))
		q.Run, q.Created, q.Session, q.Message, done = run, true, ss, msg, true
		return nil
	})
	return done, err
}

// seenKey returns the run of an idempotency key user already used on doc.
func (s *Service) seenKey(doc, user, key string) (Queued, bool, error) {
	if key == "" {
		return Queued{}, false, nil
	}
	v, err := kv.Get(s.db, runIdemKey(doc, user, key))
	if errors.Is(err, kv.ErrNotFound) {
		return Queued{}, false, nil
	}
	if err != nil {
		return Queued{}, false, err
	}
	run, err := s.loadRun(s.db, string(v))
	if err != nil {
		return Queued{}, false, err
	}
	ss, err := s.loadSession(s.db, run.Session)
	if err != nil {
		return Queued{}, false, err
	}
	msg, err := s.loadMessage(s.db, run.Session, run.UserMessage)
	return Queued{Run: run, Session: ss, Message: msg}, err == nil, err
}

// sessionFor returns a's session a request continues. The caller holds
// the document lock.
func (s *Service) sessionFor(doc, id string, a Actor) (Session, error) {
	if id != "" {
		ss, err := s.ownSession(s.db, a, id)
		if err != nil {
			return ss, err
		}
		if ss.Doc != doc {
			return ss, errs.E(errs.NotFound, "session %q not found on document %s", id, doc)
		}
		return ss, nil
	}
	ss, ok, err := s.currentSession(s.db, doc, a.UserID)
	if err != nil || ok {
		return ss, err
	}
	return s.createSession(doc, a, "")
}

// checkQuota refuses a request the writing policy would refuse now for
// its budget, its daily cap or its per-minute window (quota.Policy.Check),
// estimating its tokens from its text (instruction and scope) and the
// answer budget. Concurrency is left to run time: the task waits for a
// slot.
func (s *Service) checkQuota(user, text string) error {
	rt, ok := s.gw.Route(quota.Writing)
	if !ok || rt.Policy == nil {
		return nil // the run fails with ai_not_configured and says so
	}
	reserve := int64(rt.MaxOutputTokens)
	if reserve <= 0 {
		reserve = DefaultReserve
	}
	err := rt.Policy.Check(user, llm.CountTokens(text)+reserve)
	var qe *quota.Error
	if errors.As(err, &qe) {
		return &errs.Error{Kind: errs.RateLimited, Code: qe.Code(), Msg: qe.Error(), Err: qe, RetryAfter: qe.RetryAfter,
			NoRetry: !qe.Retryable()}
	}
	return err
}

// statusOf reads a suggestion's status now ("" when it cannot be read).
func (s *Service) statusOf(id string) SuggestionStatus {
	sg, err := s.loadSuggestion(s.db, id)
	if err != nil {
		return ""
	}
	return sg.Status
}

// summarize is what a run records of its frozen conversation.
func summarize(c Context) ContextSummary {
	cs := ContextSummary{Full: len(c.Recent), Summarized: c.Summarized, Scanned: c.Scanned, Omitted: c.Omitted}
	for _, m := range c.Recent {
		if m.Truncated {
			cs.Truncated++
		}
		if m.Role == RoleAssistant {
			if cs.Statuses == nil {
				cs.Statuses = map[SuggestionStatus]int{}
			}
			cs.Statuses[m.Status]++
		}
	}
	return cs
}

// anchors are the top-level blocks a scope's suggestion will touch.
func anchorIDs(body flowdoc.Document, s Scope, r resolved) []string {
	switch s.Kind {
	case ScopeSelection, ScopeBlock:
		ids := flowdoc.TargetBlocks(body, []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: s.Block}})
		return ids
	}
	ids := make([]string, len(r.blocks))
	for i, b := range r.blocks {
		ids[i] = b.ID
	}
	return ids
}
