package assistant

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/persona/style"
)

// SuggestionStatus is where a suggestion stands.
type SuggestionStatus string

// Suggestion statuses. Only pending suggestions can be decided.
const (
	StatusPending    SuggestionStatus = "pending"
	StatusAccepted   SuggestionStatus = "accepted"
	StatusRejected   SuggestionStatus = "rejected"
	StatusConflicted SuggestionStatus = "conflicted"
)

// Suggestion is a candidate change: structured operations against a
// baseline, which the author accepts (a new version through
// CommitChange) or rejects. It is created by a run's success and changes
// only its status.
type Suggestion struct {
	ID      string           `json:"id" msgpack:"id"`
	Doc     string           `json:"doc" msgpack:"doc"`
	Run     string           `json:"run" msgpack:"run"`
	Session string           `json:"session" msgpack:"session"`
	Status  SuggestionStatus `json:"status" msgpack:"status"`
	Scope   Scope            `json:"scope" msgpack:"scope"`
	Base    Baseline         `json:"base" msgpack:"base"`
	// Watch are, for a block-scoped suggestion, the top-level blocks it
	// depends on — its targets and every block its operations name — with
	// their content at the baseline: while they are unchanged it carries
	// over to newer baselines (see Carried); empty for a whole-document
	// suggestion (and for those stored before Watch existed), which is
	// strict.
	Watch           []Target        `json:"watch,omitempty" msgpack:"watch,omitempty"`
	Ops             []flowdoc.Op    `json:"ops" msgpack:"ops"`
	Summary         string          `json:"summary,omitempty" msgpack:"summary,omitempty"`
	Personalization Personalization `json:"personalization" msgpack:"pers"`
	// Deletes says the operations delete blocks: accepting needs an
	// explicit confirmation.
	Deletes bool  `json:"deletes,omitempty" msgpack:"deletes,omitempty"`
	Created int64 `json:"created" msgpack:"created"` // Unix ms
	// Decided and DecidedBy are set when accepted or rejected.
	Decided   int64  `json:"decided,omitempty" msgpack:"decided,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty" msgpack:"by,omitempty"`
	// Version is the version an accept created.
	Version   string      `json:"version,omitempty" msgpack:"version,omitempty"`
	VersionID objstore.ID `json:"versionId,omitzero" msgpack:"vid,omitempty"`
	// Carried is set when the accept carried the suggestion over from its
	// baseline to the head and draft of the time (edits elsewhere came
	// between); absent when it applied to its own baseline.
	Carried *Carried `json:"carried,omitempty" msgpack:"carried,omitempty"`
	// Conflict says why the suggestion can no longer apply.
	Conflict     *Conflict `json:"conflict,omitempty" msgpack:"conflict,omitempty"`
	RejectReason string    `json:"rejectReason,omitempty" msgpack:"reason,omitempty"`
	// Closeness is, for a persona run's suggestion, how close the text
	// it writes is to the persona's style profile (Burrows' Delta over
	// the profile's function words; absent with [persona] style off).
	Closeness *style.Closeness `json:"closeness,omitempty" msgpack:"close,omitempty"`
	// Agent is the outside agent the suggestion came from: one it wrote
	// itself (Propose; no run, no session) or one its assistant request
	// produced. Absent for the author's own requests.
	Agent *AgentSource `json:"agent,omitempty" msgpack:"agent,omitempty"`
}

// Conflict is why a suggestion became conflicted.
type Conflict struct {
	Reason string `json:"reason" msgpack:"reason"`
	// Blocks are its anchor blocks that changed, when known.
	Blocks []string `json:"blocks,omitempty" msgpack:"blocks,omitempty"`
	// By is the kind of change that moved the baseline ("draft",
	// "checkpoint", "accept_suggestion", "restore", …).
	By   string `json:"by,omitempty" msgpack:"by,omitempty"`
	Time int64  `json:"time" msgpack:"time"`
}

// Document stream event types of suggestions ("doc:<id>").
const (
	EventSuggestionCreated    = "suggestion.created"
	EventSuggestionAccepted   = "suggestion.accepted"
	EventSuggestionRejected   = "suggestion.rejected"
	EventSuggestionConflicted = "suggestion.conflicted"
)

// SuggestionEvent is the payload of the suggestion.* events (msgpack
// names are the JSON names, as for RunEvent).
type SuggestionEvent struct {
	ID      string           `json:"id" msgpack:"id"`
	Doc     string           `json:"doc" msgpack:"doc"`
	Run     string           `json:"run,omitempty" msgpack:"run,omitempty"`
	Status  SuggestionStatus `json:"status" msgpack:"status"`
	Scope   *Scope           `json:"scope,omitempty" msgpack:"scope,omitempty"`
	Base    string           `json:"base,omitempty" msgpack:"base,omitempty"` // baseline label
	Ops     int              `json:"ops,omitempty" msgpack:"ops,omitempty"`
	Deletes bool             `json:"deletes,omitempty" msgpack:"deletes,omitempty"`
	Summary string           `json:"summary,omitempty" msgpack:"summary,omitempty"`
	Actor   string           `json:"actor,omitempty" msgpack:"actor,omitempty"`
	Version string           `json:"version,omitempty" msgpack:"version,omitempty"` // accepted: the new label
	Reason  string           `json:"reason,omitempty" msgpack:"reason,omitempty"`
	Blocks  []string         `json:"blocks,omitempty" msgpack:"blocks,omitempty"`
	By      string           `json:"by,omitempty" msgpack:"by,omitempty"`
	// CarriedFrom is, on suggestion.accepted, the suggestion's own
	// baseline label when the accept carried it over to a newer one.
	CarriedFrom string `json:"carriedFrom,omitempty" msgpack:"carriedFrom,omitempty"`
	// Agent is, on suggestion.created, the outside agent the suggestion
	// came from (its Suggestion.Agent), so that an open editor can name it
	// without reading the record; absent for the author's own requests.
	Agent *EventAgent `json:"agent,omitempty" msgpack:"agent,omitempty"`
}

// EventAgent is an AgentSource as the suggestion events carry it (msgpack
// names are the JSON names, as for the rest of the payload).
type EventAgent struct {
	Client        string `json:"client,omitempty" msgpack:"client,omitempty"`
	ClientVersion string `json:"clientVersion,omitempty" msgpack:"clientVersion,omitempty"`
	Token         string `json:"token" msgpack:"token"`
	User          string `json:"user" msgpack:"user"`
}

// eventAgent is a's event form (nil for nil).
func eventAgent(a *AgentSource) *EventAgent {
	if a == nil {
		return nil
	}
	return &EventAgent{Client: a.Client, ClientVersion: a.ClientVersion, Token: a.Token, User: a.User}
}

func (s *Service) loadSuggestion(r kv.Reader, id string) (Suggestion, error) {
	var sg Suggestion
	if !validID(id) {
		return sg, errs.E(errs.NotFound, "suggestion %q not found", id)
	}
	ok, err := kv.GetRecord(r, suggestionKey(id), &sg)
	if err != nil {
		return sg, err
	}
	if !ok {
		return sg, errs.E(errs.NotFound, "suggestion %q not found", id)
	}
	return sg, nil
}

// Suggestion returns suggestion id.
func (s *Service) Suggestion(ctx context.Context, a Actor, id string) (Suggestion, error) {
	if err := ctx.Err(); err != nil {
		return Suggestion{}, err
	}
	return s.loadSuggestion(s.db, id)
}

// Suggestions lists the article's suggestions, newest first, at most
// limit (1..200; 0 means 50), only those with status when it is set.
func (s *Service) Suggestions(ctx context.Context, a Actor, doc string, status SuggestionStatus, limit int) ([]Suggestion, error) {
	if err := s.checkDoc(ctx, doc); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	p := suggDocPrefix(doc)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Suggestion
	for it.Last(); it.Valid() && len(out) < limit; it.Prev() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sg, err := s.loadSuggestion(s.db, lastAfterZero(it.Key()))
		if err != nil {
			return nil, err
		}
		if status == "" || sg.Status == status {
			out = append(out, sg)
		}
	}
	return out, it.Error()
}

func suggDocTimeKey(doc string, created int64, id string) []byte {
	k := kv.Uint64(suggDocPrefix(doc), uint64(max(created, 0)))
	return append(append(k, 0), id...)
}

// Preview is a suggestion materialized against its baseline.
type Preview struct {
	Suggestion Suggestion `json:"suggestion"`
	// Candidate is the baseline with the operations applied (a deletion
	// shown as done).
	Candidate flowdoc.Document `json:"candidate"`
	// Changes is the block and word diff from the baseline to Candidate.
	Changes []flowdoc.BlockChange `json:"changes"`
	// Current says an accept would apply now: the baseline is still the
	// article's head and body, or (CarriedOver) the suggestion's watched
	// blocks are unchanged in the current draft.
	Current bool `json:"current"`
	// CarriedOver says the preview shows the current context: Candidate is
	// the current draft with the operations applied and Changes its diff
	// from that draft, as an accept now would make it. Otherwise they are
	// against the suggestion's own baseline.
	CarriedOver bool `json:"carriedOver"`
	// Against is the label of the version the preview was made against
	// (the baseline, or with CarriedOver the draft's head) and Unsealed
	// whether the draft had changes beyond it.
	Against  string `json:"against"`
	Unsealed bool   `json:"unsealed,omitempty"`
}

// Preview materializes suggestion id and diffs it, block by block and
// word by word: a pending block-scoped suggestion whose watched blocks
// are unchanged against the current draft (what an accept would carry it
// over to), anything else against its own baseline version.
func (s *Service) Preview(ctx context.Context, a Actor, id string) (Preview, error) {
	sg, err := s.loadSuggestion(s.db, id)
	if err != nil {
		return Preview{}, err
	}
	snap, err := s.repo.Show(ctx, sg.Doc, sg.Base.Label)
	if err != nil {
		return Preview{}, repoErr(err)
	}
	if snap.Info.Hash != sg.Base.Version {
		return Preview{}, errs.E(errs.Corrupt, "suggestion %s: its baseline %s is not the version it recorded", id, sg.Base.Label)
	}
	ops := confirmed(sg.Ops)
	cand, err := flowdoc.Apply(snap.Body, ops, s.limits)
	if err != nil {
		return Preview{}, errs.E(errs.Corrupt, "suggestion %s no longer applies to its own baseline: %w", id, err)
	}
	p := Preview{Suggestion: sg, Candidate: cand, Changes: flowdoc.Diff(snap.Body, cand), Against: sg.Base.Label}
	dr, err := s.repo.Draft(ctx, sg.Doc)
	if err != nil {
		return Preview{}, repoErr(err)
	}
	p.Current = dr.HeadID == sg.Base.Version && dr.Fingerprint == sg.Base.Fingerprint
	if p.Current || sg.Status != StatusPending || sg.strict() {
		return p, nil
	}
	cur := map[string]objstore.ID{}
	for _, b := range dr.Body.Blocks {
		cur[b.ID] = objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(b))
	}
	if len(sg.changedWatched(cur)) > 0 {
		return p, nil // a change conflicts it at once; shown against its baseline
	}
	now, err := flowdoc.Apply(dr.Body, ops, s.limits)
	if err != nil {
		return p, nil // it no longer applies: an accept is a conflict
	}
	p.Candidate, p.Changes, p.Current, p.CarriedOver = now, flowdoc.Diff(dr.Body, now), true, true
	p.Against, p.Unsealed = dr.Head, dr.Unsealed
	return p, nil
}

// confirmed returns ops with every delete_block confirmed.
func confirmed(ops []flowdoc.Op) []flowdoc.Op {
	out := make([]flowdoc.Op, len(ops))
	for i, op := range ops {
		out[i] = op
		if op.Op == flowdoc.DeleteBlock {
			out[i].Confirm = true
		}
	}
	return out
}

// AcceptOptions qualify an accept.
type AcceptOptions struct {
	// ConfirmDelete confirms the deletions of a suggestion that deletes
	// blocks; without it such an accept is refused.
	ConfirmDelete bool `json:"confirmDelete,omitempty"`
}

// Accepted is the result of an accept.
type Accepted struct {
	Suggestion Suggestion       `json:"suggestion"`
	Version    repo.VersionInfo `json:"version"`
	// Repeat is true when the suggestion was accepted before: the answer
	// is the first accept's, and no version was made now.
	Repeat bool `json:"-"`
}

// acceptKey is the idempotency key of accepting a suggestion: a repeated
// accept, from any transport, returns the first result.
func acceptKey(id string) string { return "suggestion/" + id }

// Accept applies suggestion id through CommitChange with all four
// baseline checks — version, body fingerprint, each target block's
// content and the idempotency key — creating a revision (selection,
// block, section) or a new major version (document) of kind
// accept_suggestion whose transaction names the suggestion. A
// block-scoped suggestion whose watched blocks are unchanged is carried
// over to the current head and draft (edits elsewhere are kept), the
// checks run against that baseline, and the transaction and the
// suggestion (Carried) record both; a whole-document one must apply to
// exactly its baseline. The
// suggestion becomes accepted, and an accepted observation is written, in
// the version's own batch. Accepting an accepted suggestion returns the
// first result.
//
// Errors: delete_confirmation_required (nothing written),
// suggestion_conflicted (a stale baseline: the suggestion is marked
// conflicted, the body is untouched), suggestion_decided (rejected
// before), not_found.
func (s *Service) Accept(ctx context.Context, a Actor, id string, o AcceptOptions) (Accepted, error) {
	sg, err := s.loadSuggestion(s.db, id)
	if err != nil {
		return Accepted{}, err
	}
	return s.AcceptLoaded(ctx, a, sg, o)
}

// acceptState is what an accept hands its commit (repo.ChangeParams.Value):
// the suggestion, read again under the document lock by acceptIn and
// then used by rememberProduced and for the answer, so that the record is
// read once before the lock and once under it.
type acceptState struct {
	sg   Suggestion
	done bool // acceptIn marked sg accepted in the commit's batch
}

// AcceptLoaded is Accept of a suggestion the caller has just read (to
// check access): its operations and baseline are taken from sg, and its
// status is read again under the document lock, where every change of
// a suggestion's status is made.
func (s *Service) AcceptLoaded(ctx context.Context, a Actor, sg Suggestion, o AcceptOptions) (Accepted, error) {
	id := sg.ID
	switch sg.Status {
	case StatusAccepted:
		return s.acceptedResult(ctx, sg)
	case StatusRejected:
		return Accepted{}, errs.C(errs.Conflict, CodeSuggestionDecided, "suggestion %s was rejected; ask again for a new one", id)
	case StatusConflicted:
		return Accepted{}, conflictedErr(sg)
	}
	if sg.Deletes && !o.ConfirmDelete {
		return Accepted{}, errs.C(errs.Invalid, CodeDeleteConfirmation,
			"suggestion %s deletes blocks; accept it with the deletion confirmed", id)
	}
	st := &acceptState{sg: sg}
	v, err := s.repo.CommitChange(ctx, repo.ChangeParams{
		Doc: sg.Doc, Actor: a.User, Kind: objstore.KindAcceptSuggestion,
		BaseVersion: sg.Base.Version, BaseFingerprint: sg.Base.Fingerprint, TargetBlocks: sg.watchMap(),
		Ops: confirmed(sg.Ops), IdempotencyKey: acceptKey(id), SuggestionID: id,
		Message: "accept suggestion " + id, CarryOver: !sg.strict(), Value: st,
	})
	var ce *folio.ConflictError
	switch {
	case errors.As(err, &ce):
		var blocks []string
		for _, b := range ce.Blocks {
			blocks = append(blocks, b.ID)
		}
		if merr := s.markConflicted(ctx, sg.Doc, id, Conflict{Reason: ce.Reason, Blocks: blocks, By: "accept"}); merr != nil {
			return Accepted{}, merr
		}
		sg, _ = s.loadSuggestion(s.db, id)
		return Accepted{}, conflictedErr(sg, err)
	case err != nil:
		return Accepted{}, repoErr(err)
	}
	if st.done {
		sg = st.sg // as committed with v
	} else if sg, err = s.loadSuggestion(s.db, id); err != nil {
		// The idempotency key answered with an earlier version: the
		// record says whether that accept was this suggestion's.
		return Accepted{}, err
	}
	if sg.Status != StatusAccepted || sg.VersionID != v.Hash {
		// The commit's idempotency key answered with a version that did
		// not accept this suggestion: the key was spent otherwise.
		return Accepted{}, errs.E(errs.Corrupt, "accepting suggestion %s returned version %s, which did not accept it", id, v.Label)
	}
	return Accepted{Suggestion: sg, Version: v}, nil
}

func (s *Service) acceptedResult(ctx context.Context, sg Suggestion) (Accepted, error) {
	v, err := s.repo.ResolveLabel(ctx, sg.Doc, sg.Version)
	if err != nil {
		return Accepted{}, repoErr(err)
	}
	return Accepted{Suggestion: sg, Version: v, Repeat: true}, nil
}

func conflictedErr(sg Suggestion, cause ...error) error {
	reason := "its baseline is stale"
	if sg.Conflict != nil && sg.Conflict.Reason != "" {
		reason = sg.Conflict.Reason
	}
	e := errs.C(errs.Conflict, CodeSuggestionConflicted,
		"suggestion %s can no longer apply (%s); the article was not changed — ask again against the current version", sg.ID, reason)
	if len(cause) > 0 {
		e.Err = cause[0]
	}
	return e
}

// markConflicted marks a pending suggestion conflicted, under the
// document lock, and streams suggestion.conflicted.
func (s *Service) markConflicted(ctx context.Context, doc, id string, c Conflict) error {
	return repoErr(s.repo.Locked(context.WithoutCancel(ctx), doc, func(tx *repo.DocTx) error {
		sg, err := s.loadSuggestion(s.db, id)
		if err != nil || sg.Status != StatusPending {
			return err
		}
		b := s.db.NewBatch()
		defer b.Close()
		c.Time = s.now().UnixMilli()
		if err := s.conflictIn(b, &sg, c, func(typ string, data any) error { return tx.Emit(b, typ, c.Time, data) }); err != nil {
			return err
		}
		return s.db.Apply(b, kv.Sync)
	}))
}

// conflictIn adds sg's move to conflicted to b.
func (s *Service) conflictIn(b *kv.Batch, sg *Suggestion, c Conflict, emit func(string, any) error) error {
	sg.Status, sg.Conflict = StatusConflicted, &c
	if err := kv.SetRecord(b, suggestionKey(sg.ID), sg); err != nil {
		return err
	}
	if err := unindexPending(b, sg); err != nil {
		return err
	}
	return emit(EventSuggestionConflicted, SuggestionEvent{ID: sg.ID, Doc: sg.Doc, Run: sg.Run, Status: StatusConflicted,
		Reason: c.Reason, Blocks: c.Blocks, By: c.By})
}

// Reject rejects suggestion id: its status becomes rejected and an
// immutable rejected observation is written; the article is untouched.
// Rejecting a rejected suggestion returns it; an accepted or conflicted
// one is suggestion_decided / suggestion_conflicted.
func (s *Service) Reject(ctx context.Context, a Actor, id, reason string) (Suggestion, error) {
	if utf8.RuneCountInString(reason) > 500 {
		return Suggestion{}, errs.E(errs.Invalid, "a rejection reason is at most 500 characters")
	}
	sg, err := s.loadSuggestion(s.db, id)
	if err != nil {
		return Suggestion{}, err
	}
	err = s.repo.Locked(ctx, sg.Doc, func(tx *repo.DocTx) error {
		if sg, err = s.loadSuggestion(s.db, id); err != nil {
			return err
		}
		switch sg.Status {
		case StatusRejected:
			return nil
		case StatusAccepted:
			return errs.C(errs.Conflict, CodeSuggestionDecided, "suggestion %s was accepted as %s; restore an earlier version to undo it", id, sg.Version)
		case StatusConflicted:
			return conflictedErr(sg)
		}
		now := s.now().UnixMilli()
		sg.Status, sg.Decided, sg.DecidedBy, sg.RejectReason = StatusRejected, now, a.User, strings.TrimSpace(reason)
		b := s.db.NewBatch()
		defer b.Close()
		if err := kv.SetRecord(b, suggestionKey(id), sg); err != nil {
			return err
		}
		if err := unindexPending(b, &sg); err != nil {
			return err
		}
		if err := s.observe(b, Observation{Kind: ObsRejected, Suggestion: id, Run: sg.Run, Doc: sg.Doc, Actor: a.User,
			Personalization: sg.Personalization, Version: tx.HeadLabel, Reason: sg.RejectReason, Time: now}); err != nil {
			return err
		}
		if err := tx.Emit(b, EventSuggestionRejected, now, SuggestionEvent{ID: id, Doc: sg.Doc, Run: sg.Run,
			Status: StatusRejected, Actor: a.User, Reason: sg.RejectReason}); err != nil {
			return err
		}
		return s.db.Apply(b, kv.Sync)
	})
	return sg, repoErr(err)
}

// changeHook is the repo.ChangeHook of the service (see DocChanged).
type changeHook struct{ s *Service }

var _ repo.ChangeHook = changeHook{}

// DocChanged keeps suggestions true to the article inside every change's
// batch: the suggestion an accept applies becomes accepted (with its
// observation and the blocks it produced remembered); every other pending
// suggestion the change conflicts becomes conflicted at once, with a
// suggestion.conflicted event — a block-scoped one when the change
// changed, added or deleted a block it watches, a whole-document one on
// any body change or new version; and a version that closes the window
// after an accept records an edited_after_accept observation for each
// produced block the author changed. Finding the suggestions costs one
// index read per changed block (see carry.go), and none for a document
// known to have no pending suggestion.
func (h changeHook) DocChanged(b *kv.Batch, c *repo.Change) error {
	s := h.s
	emit := c.Emit
	if c.SuggestionID != "" {
		if err := s.acceptIn(b, c, emit); err != nil {
			return err
		}
	}
	if c.Version != nil {
		edited, err := s.closeWindow(b, c)
		if err != nil {
			return err
		}
		if c.Kind == objstore.KindCheckpoint || c.Kind == objstore.KindRecovery {
			if err := s.observeManual(b, c, edited); err != nil {
				return err
			}
		}
	}
	if c.SuggestionID != "" {
		if err := s.rememberProduced(b, c); err != nil {
			return err
		}
	}
	if !c.BodyChanged && c.Version == nil {
		return nil // attributes only: every baseline still holds
	}
	gen, none := s.pend.scanning(c.Doc)
	if none {
		return nil
	}
	if keys, err := kv.Keys(s.db, suggPendPrefix(c.Doc), 1); err != nil {
		return err
	} else if len(keys) == 0 {
		s.pend.found(c.Doc, gen)
		return nil
	}
	hits, err := s.affected(c)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(hits))
	for id := range hits {
		ids = append(ids, id)
	}
	sort.Strings(ids) // events in a stable order
	for _, id := range ids {
		if id == c.SuggestionID {
			continue
		}
		sg, err := s.loadSuggestion(s.db, id)
		if err != nil {
			return err
		}
		if sg.Status != StatusPending {
			continue
		}
		hit := hits[id]
		if sg.strict() {
			if !c.BodyChanged && c.Version == nil {
				continue
			}
			hit = nil
			changed := map[string]bool{}
			for _, b := range c.Changed {
				changed[b] = true
			}
			for _, t := range sg.Base.Targets {
				if changed[t.ID] {
					hit = append(hit, t.ID)
				}
			}
		}
		if err := s.conflictIn(b, &sg, Conflict{Reason: conflictReason(&sg, hit, c), Blocks: hit, By: c.Kind, Time: c.Time}, emit); err != nil {
			return err
		}
	}
	return nil
}

func byWhat(c *repo.Change) string {
	switch {
	case c.Kind == repo.ChangeDraft:
		return "a draft save"
	case c.Version != nil:
		return fmt.Sprintf("%s %s", strings.ReplaceAll(c.Kind, "_", " "), c.Version.Label)
	}
	return c.Kind
}

// acceptIn marks the suggestion a CommitChange applies accepted, in its
// batch. A suggestion that is no longer pending aborts the commit.
func (s *Service) acceptIn(b *kv.Batch, c *repo.Change, emit func(string, any) error) (err error) {
	sg, err := s.loadSuggestion(s.db, c.SuggestionID) // under the lock: the status is current
	if err != nil {
		return err
	}
	if st, ok := c.Value.(*acceptState); ok {
		defer func() {
			if st.done = err == nil; st.done {
				st.sg = sg
			}
		}()
	}
	if sg.Doc != c.Doc {
		return errs.E(errs.Invalid, "suggestion %s belongs to document %s, not %s", sg.ID, sg.Doc, c.Doc)
	}
	switch sg.Status {
	case StatusPending:
	case StatusConflicted:
		return conflictedErr(sg)
	default:
		return errs.C(errs.Conflict, CodeSuggestionDecided, "suggestion %s is already %s", sg.ID, sg.Status)
	}
	if c.Version == nil {
		return errs.E(errs.Internal, "accepting suggestion %s sealed no version", sg.ID)
	}
	sg.Status, sg.Decided, sg.DecidedBy = StatusAccepted, c.Time, c.Actor
	sg.Version, sg.VersionID = c.Version.Label, c.Version.Hash
	carriedFrom := ""
	if c.Carried {
		sg.Carried = &Carried{
			From: BaseRef{Label: sg.Base.Label, Version: sg.Base.Version, Fingerprint: sg.Base.Fingerprint},
			To:   BaseRef{Label: c.BaseLabel, Version: c.BaseVersion, Fingerprint: c.BaseFingerprint}}
		carriedFrom = sg.Base.Label
	}
	if err := kv.SetRecord(b, suggestionKey(sg.ID), sg); err != nil {
		return err
	}
	if err := unindexPending(b, &sg); err != nil {
		return err
	}
	if err := s.observe(b, Observation{Kind: ObsAccepted, Suggestion: sg.ID, Run: sg.Run, Doc: sg.Doc, Actor: c.Actor,
		Personalization: sg.Personalization, Version: c.Version.Label, Time: c.Time}); err != nil {
		return err
	}
	return emit(EventSuggestionAccepted, SuggestionEvent{ID: sg.ID, Doc: sg.Doc, Run: sg.Run, Status: StatusAccepted,
		Actor: c.Actor, Version: c.Version.Label, CarriedFrom: carriedFrom})
}
