package assistant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// AgentSource says which outside agent a suggestion came from: the
// client it named in its MCP handshake (or an HTTP client's
// X-Folio-Agent header), the id of the agent token it used and that
// token's user. It is recorded on the suggestion (and, for an assistant
// run an agent asked for, on the run) and shown by `suggestion show`,
// the API the editor reads and `explain`.
type AgentSource struct {
	Client        string `json:"client,omitempty" msgpack:"client,omitempty"`
	ClientVersion string `json:"clientVersion,omitempty" msgpack:"cver,omitempty"`
	Token         string `json:"token" msgpack:"token"`
	User          string `json:"user" msgpack:"user"`
}

// String is how history names the agent: "agent claude-desktop 1.2
// (token 0123456789ab of ann)".
func (a *AgentSource) String() string {
	if a == nil {
		return ""
	}
	name := a.Client
	if name == "" {
		name = "unnamed client"
	}
	if a.ClientVersion != "" {
		name += " " + a.ClientVersion
	}
	return fmt.Sprintf("agent %s (token %s of %s)", name, a.Token, a.User)
}

// CodeStaleBaseline (conflict) refuses agent-written operations made
// against a version that is no longer the article's head (or whose
// fingerprint differs): they are not merged; read the article again.
const CodeStaleBaseline = "stale_baseline"

// CodeAgentRateLimited (rate_limited): the agent token's own proposal
// rate (AgentRate) is spent for now.
const CodeAgentRateLimited = "agent_rate_limited"

// Bounds of agent proposals.
const (
	// AgentRate and AgentBurst bound the proposals (assistant requests and
	// agent-written operations) of one agent token: AgentBurst at once,
	// then one every 60/AgentRate seconds. They come on top of the user's
	// writing quota, which every proposal counts against, so that a
	// looping agent spends at most this share of its author's quota.
	AgentRate  = 10 // per minute
	AgentBurst = 5
	// maxProposalBytes bounds the operations of one proposal as JSON.
	maxProposalBytes = 4 << 20
)

// ProposeRequest is an agent's own change: operations (the suggestion
// operation set of docs/flowdoc.md) on a scope of an article, against the
// version it read.
type ProposeRequest struct {
	Doc   string `json:"doc"`
	Scope Scope  `json:"scope"`
	// Base is the label of the version the operations were written
	// against; it must be the head. Fingerprint, when set, is that
	// version's body fingerprint (hex) as the agent read it.
	Base        string `json:"base"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Ops are the operations as JSON, decoded strictly (an unknown field
	// is refused) and then checked exactly as a model's answer.
	Ops     json.RawMessage `json:"ops"`
	Summary string          `json:"summary,omitempty"`
}

// agentLimiter is a token bucket per agent token.
type agentLimiter struct {
	rate, burst int // per minute, at once; zero: AgentRate, AgentBurst; rate < 0: unbounded

	mu      sync.Mutex // guards buckets
	buckets map[string]*agentBucket
}

type agentBucket struct {
	tokens float64
	last   time.Time
}

// take spends one proposal of token, or says how long until one is left.
func (l *agentLimiter) take(token string, now time.Time) (time.Duration, bool) {
	if l.rate < 0 {
		return 0, true
	}
	rate, burst := float64(AgentRate), float64(AgentBurst)
	if l.rate > 0 {
		rate = float64(l.rate)
	}
	if l.burst > 0 {
		burst = float64(l.burst)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[string]*agentBucket{}
	}
	b := l.buckets[token]
	if b == nil {
		b = &agentBucket{tokens: burst, last: now}
		l.buckets[token] = b
	}
	perSec := rate / 60
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*perSec)
	b.last = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / perSec * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}

// agentAllowed spends a proposal of a's agent token (nothing for an
// author's own requests).
func (s *Service) agentAllowed(a Actor) error {
	if a.Agent == nil {
		return nil
	}
	if wait, ok := s.agents.take(a.Agent.Token, s.now()); !ok {
		return &errs.Error{Kind: errs.RateLimited, Code: CodeAgentRateLimited, RetryAfter: wait,
			Msg: fmt.Sprintf("agent token %s is over its proposal rate (a burst, then %d a minute); retry in %s", a.Agent.Token, AgentRate, wait.Round(time.Second))}
	}
	return nil
}

// Propose stores an agent's own operations as a pending suggestion. The
// operations are checked exactly as a model's answer is (parseAnswer: the
// operation schema, the scope's rules, the complex-block guard, the
// result a valid FlowDocument within the limits) against the baseline,
// which must be the head: the draft is first sealed as a checkpoint
// (reason ai) when it is unsealed, as for an assistant request, and a
// baseline that is not the head then, or a fingerprint that differs, is
// a conflict (CodeStaleBaseline), never a merge. The suggestion's Agent
// names the caller (a.Agent); it has no run or session. It counts
// against the user's writing quota and the agent token's rate.
//
// Errors: invalid (scope, operations: the answer's reasons), too_large,
// stale_baseline (conflict), not_found (the document), the writing
// quota's codes, agent_rate_limited, assistant_disabled.
func (s *Service) Propose(ctx context.Context, a Actor, req ProposeRequest) (Suggestion, error) {
	if err := a.identified(); err != nil {
		return Suggestion{}, err
	}
	if err := s.enabled(req.Scope.Kind); err != nil {
		return Suggestion{}, err
	}
	if len(req.Ops) > maxProposalBytes {
		return Suggestion{}, errs.E(errs.TooLarge, "the operations are %d bytes of JSON, at most %d: propose a smaller change", len(req.Ops), maxProposalBytes)
	}
	ops, err := strictOps(req.Ops)
	if err != nil {
		return Suggestion{}, err
	}
	summary := strings.TrimSpace(req.Summary)
	var fp *flowdoc.Fingerprint
	if req.Fingerprint != "" {
		f, err := flowdoc.ParseFingerprint(req.Fingerprint)
		if err != nil {
			return Suggestion{}, errs.E(errs.Invalid, "fingerprint %q: %v", req.Fingerprint, err)
		}
		fp = &f
	}
	if req.Base == "" {
		return Suggestion{}, errs.E(errs.Invalid, "the baseline is required: the label of the version the operations were written against (the head, as read)")
	}
	if err := s.checkDoc(ctx, req.Doc); err != nil {
		return Suggestion{}, err
	}
	if err := s.agentAllowed(a); err != nil {
		return Suggestion{}, err
	}
	// An AI request is a checkpoint boundary (DESIGN.md §4): unsealed
	// typing becomes a version first, and a baseline older than it is
	// stale.
	if _, _, err := s.repo.Checkpoint(ctx, req.Doc, objstore.ReasonAI, a.User, ""); err != nil {
		return Suggestion{}, repoErr(err)
	}
	snap, err := s.repo.Show(ctx, req.Doc, "")
	if err != nil {
		return Suggestion{}, repoErr(err)
	}
	stale := func(why string) error {
		return errs.C(errs.Conflict, CodeStaleBaseline, "the operations were written against %s of %s, but %s; read the article again (its head is %s) and propose against it",
			req.Base, req.Doc, why, snap.Info.Label)
	}
	if req.Base != snap.Info.Label {
		return Suggestion{}, stale("the article changed since")
	}
	if fp != nil && *fp != snap.Info.Fingerprint {
		return Suggestion{}, stale("its fingerprint is not the one given")
	}
	res, err := resolveScope(snap.Body, req.Scope)
	if err != nil {
		return Suggestion{}, err
	}
	if err := s.checkQuota(a.UserID, summary+"\n"+string(req.Ops)); err != nil {
		return Suggestion{}, err
	}
	id := newID("s")
	obj, err := json.Marshal(struct {
		Summary string          `json:"summary"`
		Ops     json.RawMessage `json:"ops"`
	}{summary, req.Ops})
	if err != nil {
		return Suggestion{}, errs.E(errs.Invalid, "operations: %v", err)
	}
	// Applied as written first: the complex-block guard and the
	// document's rules answer in their own words.
	direct, err := flowdoc.Apply(snap.Body, confirmed(ops), s.limits)
	if err != nil {
		return Suggestion{}, errs.E(errs.Invalid, "the operations do not apply to %s: %v", snap.Info.Label, err)
	}
	cand, err := parseAnswer(obj, snap.Body, res, s.limits, id)
	if err != nil {
		return Suggestion{}, proposalErr(err)
	}
	if !bytes.Equal(flowdoc.EncodeBody(cand.result), flowdoc.EncodeBody(direct)) {
		// A model's answer would be repaired here; an agent's is refused,
		// so that what is stored is exactly what it proposed.
		return Suggestion{}, errs.E(errs.Invalid, "the operations break the rules of a %s suggestion: %s", req.Scope.Kind, strings.Join(cand.repairs, "; "))
	}
	if cand.noChange {
		return Suggestion{}, errs.E(errs.Invalid, "the operations change nothing in %s of %s; propose a change, or none", req.Scope.String(), snap.Info.Label)
	}
	base := Baseline{Version: snap.Info.Hash, Label: snap.Info.Label, Fingerprint: snap.Info.Fingerprint}
	for _, tid := range anchorIDs(snap.Body, req.Scope, res) {
		b, _ := findBlock(snap.Body.Blocks, tid)
		base.Targets = append(base.Targets, Target{ID: tid, Content: objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(b))})
	}
	now := s.now().UnixMilli()
	sg := Suggestion{ID: id, Doc: req.Doc, Status: StatusPending, Scope: req.Scope, Base: base, Ops: cand.ops,
		Summary: cand.summary, Personalization: Personalization{Kind: PersonalizeNone}, Created: now, Agent: a.Agent}
	for _, op := range cand.ops {
		if op.Op == flowdoc.DeleteBlock {
			sg.Deletes = true
		}
	}
	if req.Scope.Kind != ScopeDocument {
		sg.Watch = watchOf(snap.Body, base, cand.ops)
	}
	err = s.repo.Locked(ctx, req.Doc, func(tx *repo.DocTx) error {
		if tx.Head != base.Version || tx.Fingerprint != base.Fingerprint {
			return stale("it changed while the operations were checked")
		}
		b := s.db.NewBatch()
		defer b.Close()
		if err := kv.SetRecord(b, suggestionKey(sg.ID), sg); err != nil {
			return err
		}
		if err := b.Set(suggDocTimeKey(sg.Doc, sg.Created, sg.ID), nil); err != nil {
			return err
		}
		scope := sg.Scope
		if err := tx.Emit(b, EventSuggestionCreated, now, SuggestionEvent{ID: sg.ID, Doc: sg.Doc, Status: sg.Status, Scope: &scope,
			Base: sg.Base.Label, Ops: len(sg.Ops), Deletes: sg.Deletes, Summary: sg.Summary, Actor: a.Agent.String(), Agent: eventAgent(sg.Agent)}); err != nil {
			return err
		}
		if err := indexPending(b, &sg); err != nil {
			return err
		}
		s.pend.created()
		return s.db.Apply(b, kv.Sync)
	})
	if err != nil {
		return Suggestion{}, repoErr(err)
	}
	return sg, nil
}

// proposalErr words a model-answer error for an agent: the same kind and
// reason, addressed to operations rather than an answer.
func proposalErr(err error) error {
	var e *errs.Error
	if errors.As(err, &e) && e.Kind == errs.Invalid {
		msg := strings.Replace(e.Msg, "the answer is not a valid suggestion: ", "the operations are not a valid suggestion: ", 1)
		return &errs.Error{Kind: e.Kind, Code: e.Code, Msg: msg, Err: e.Err}
	}
	return err
}

// strictOps refuses operations with a field the operation set does not
// have (a model's answer is repaired; an agent's is held to the schema).
func strictOps(raw json.RawMessage) ([]flowdoc.Op, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errs.E(errs.Invalid, `the operations are required: a JSON list such as [{"op":"replace_block","blockId":"p1","block":{...}}]`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ops []flowdoc.Op
	if err := dec.Decode(&ops); err != nil {
		return nil, errs.E(errs.Invalid, "operations: %v (docs/flowdoc.md, Operations, lists their fields)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errs.E(errs.Invalid, "operations: unexpected data after the list")
	}
	if len(ops) == 0 {
		return nil, errs.E(errs.Invalid, "the operation list is empty: there is nothing to propose")
	}
	if len(ops) > maxAnswerOps {
		return nil, errs.E(errs.TooLarge, "%d operations, at most %d", len(ops), maxAnswerOps)
	}
	return ops, nil
}
