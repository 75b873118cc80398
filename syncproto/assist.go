package syncproto

import (
	"context"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// The writing assistant over the socket (docs/protocol.md, "Writing
// assistant"): an author asks for a suggestion, follows its run on the
// stream "run:<id>", previews, accepts or rejects it, and lists, starts
// and switches the conversation sessions of an article. Every request is
// answered by the same service call the HTTP API makes (Config.Assistant,
// implemented in internal/server), so both transports enforce the same
// rules with the same error codes.
//
// A reply's type is its request's type followed by ".done" (assist.request
// is answered by assist.queued): never suggestion.accepted and the like,
// which are events of the document's stream, since one type means one
// thing to a decoder.
const (
	TypeAssistRequest          = "assist.request"
	TypeAssistQueued           = "assist.queued"
	TypeAssistCancel           = "assist.cancel"
	TypeAssistCancelDone       = "assist.cancel.done"
	TypeSuggestionPreview      = "suggestion.preview"
	TypeSuggestionPreviewDone  = "suggestion.preview.done"
	TypeSuggestionAccept       = "suggestion.accept"
	TypeSuggestionAcceptDone   = "suggestion.accept.done"
	TypeSuggestionReject       = "suggestion.reject"
	TypeSuggestionRejectDone   = "suggestion.reject.done"
	TypeSessionList            = "session.list"
	TypeSessionListDone        = "session.list.done"
	TypeSessionStart           = "session.start"
	TypeSessionStartDone       = "session.start.done"
	TypeSessionSwitch          = "session.switch"
	TypeSessionSwitchDone      = "session.switch.done"
	TypeSessionPersonalize     = "session.personalize"
	TypeSessionPersonalizeDone = "session.personalize.done"
)

// The assistant's events: run streams ("run:<id>") carry RunEventData,
// document streams the suggestion events with SuggestionEventData.
const (
	TypeRunQueued          = "queued"
	TypeRunStarted         = "started"
	TypeRunProgress        = "progress"
	TypeRunRetry           = "retry"
	TypeRunRecovered       = "recovered_after_restart"
	TypeRunInterrupted     = "interrupted"
	TypeRunCancelRequested = "cancel_requested"
	TypeRunSucceeded       = "succeeded"
	TypeRunFailed          = "failed"
	TypeRunCancelled       = "cancelled"

	TypeSuggestionCreated    = "suggestion.created"
	TypeSuggestionAccepted   = "suggestion.accepted"
	TypeSuggestionRejected   = "suggestion.rejected"
	TypeSuggestionConflicted = "suggestion.conflicted"
)

// RunStream returns the stream name of a run.
func RunStream(run string) string { return "run:" + run }

// AssistScope is the part of the article a request is about: kind
// "selection" (code points Start..End of the text block Block),
// "block" (Block), "section" (top-level blocks From..To) or "document".
type AssistScope struct {
	Kind  string `json:"kind"`
	Block string `json:"block,omitempty"`
	Start int    `json:"start,omitempty"`
	End   int    `json:"end,omitempty"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
}

// AssistRequest asks for a suggestion on document Doc. At most one of
// Persona, WritingPreset and EditingPreset may be set (two are refused
// with personalization_conflict). Session continues that session ("" the
// article's current one); IdempotencyKey makes a retried request answer
// its first run. It is decoded strictly, like draft.save: a field it does
// not have (a misspelt preset) is refused, not dropped.
type AssistRequest struct {
	Envelope
	Doc            string      `json:"doc"`
	Scope          AssistScope `json:"scope"`
	Instruction    string      `json:"instruction,omitempty"`
	Persona        string      `json:"persona,omitempty"`
	WritingPreset  string      `json:"writingPreset,omitempty"`
	EditingPreset  string      `json:"editingPreset,omitempty"`
	Session        string      `json:"session,omitempty"`
	IdempotencyKey string      `json:"idempotencyKey,omitempty"`
}

// AssistQueued answers AssistRequest: the run as stored, whether this
// request created it (false: the idempotency key's first run), the
// session, the user message's number in it, the label of the checkpoint
// (reason ai) sealed first when the draft was unsealed, and the run's
// stream, which the client subscribes to with after 0.
type AssistQueued struct {
	Envelope
	Doc        string  `json:"doc"`
	Run        RunInfo `json:"run"`
	Created    bool    `json:"created"`
	Session    string  `json:"session"`
	Message    uint64  `json:"message"`
	Checkpoint string  `json:"checkpoint,omitempty"`
	Stream     string  `json:"stream"`
}

// PresetPin is the preset version a run pinned.
type PresetPin struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	VersionID string `json:"versionId"`
	Number    int    `json:"number"`
	Name      string `json:"name,omitempty"`
}

// PersonaPin is what a persona run pinned (personalization "persona"):
// the persona's active version (Version its id, Seq its number), the
// ids of the components it used (Style, Learning and its active rules
// LearningRules, Memory; each absent when its switch is off), the
// memory items given to the model (MemoryKeys, in rank order, of
// MemoryMatched that matched the query; MemoryWithheld left out as
// private; MemorySources the source article versions they came from)
// and up to 3 reference articles, each pinned by version. The
// names are the HTTP API's (docs/api.md).
type PersonaPin struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	Seq            int               `json:"seq"`
	Style          string            `json:"style,omitempty"`
	Learning       string            `json:"learning,omitempty"`
	LearningRules  []string          `json:"learningRules,omitempty"`
	Memory         string            `json:"memory,omitempty"`
	MemoryKeys     []string          `json:"memoryKeys,omitempty"`
	MemoryMatched  uint64            `json:"memoryMatched,omitempty"`
	MemoryWithheld int               `json:"memoryWithheld,omitempty"`
	MemorySources  []MemorySourcePin `json:"memorySources,omitempty"`
	References     []ReferencePin    `json:"references,omitempty"`
}

// MemorySourcePin is a source article version the memory given to a run
// came from: the document, its content id Version and label, and the keys
// of the provided items whose evidence it holds.
type MemorySourcePin struct {
	Doc     string   `json:"doc"`
	Version string   `json:"version"`
	Label   string   `json:"label"`
	Items   []string `json:"items"`
}

// ReferencePin is a reference article as a persona run pinned it: the
// document, its published version (content id Version, label Label),
// its title, and its rank's score with the reasons.
type ReferencePin struct {
	Doc     string   `json:"doc"`
	Version string   `json:"version"`
	Label   string   `json:"label"`
	Title   string   `json:"title"`
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons,omitempty"`
}

// RunGrounding is a persona run's grounding verdict: Pass, whether the
// first answer was Retried with its unsupported claims named
// (RetryClaims), the first-person claims Checked, those of the last
// answer nothing supports (Claims), the memory items given to the model
// (MemoryProvided) and the keys of those a claim used (UsedMemory), and
// the number of reference articles: the assistant message's
// "自动参考 N 篇 · 使用 Memory N 条".
type RunGrounding struct {
	Pass           bool             `json:"pass"`
	Retried        bool             `json:"retried,omitempty"`
	Checked        int              `json:"checked"`
	Claims         []GroundingClaim `json:"claims,omitempty"`
	RetryClaims    []GroundingClaim `json:"retryClaims,omitempty"`
	MemoryProvided int              `json:"memoryProvided"`
	UsedMemory     []string         `json:"usedMemory,omitempty"`
	References     int              `json:"references"`
}

// GroundingClaim is a first-person claim of an answer: its sentence, its
// fact type (identity, work, education, birth, residence, event,
// quantity) and the anchors nothing supports ("time 2020", "place 上海").
type GroundingClaim struct {
	Text        string   `json:"text"`
	Kind        string   `json:"kind"`
	Unsupported []string `json:"unsupported,omitempty"`
}

// Closeness is how close a persona run's suggestion writes to the
// persona's style profile: Burrows' Delta over function words (0 is the
// author's centre, about 1 one standard deviation away), the share of
// the author's own sources at least as far (Percentile; -1 without
// calibration), the words measured and whether that is enough to rely
// on.
type Closeness struct {
	Delta      float64 `json:"delta"`
	Percentile float64 `json:"percentile"`
	Units      int     `json:"units"`
	Reliable   bool    `json:"reliable"`
}

// RunFailure is why a run failed (or its last attempt did): a stable
// code and a message for people.
type RunFailure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunInfo is a run as a client sees it. State is queued, running,
// succeeded, failed or cancelled; Personalization none, writing_preset,
// editing_preset or persona, with the pinned Preset or Persona (and, once
// a persona run's answer was checked, its Grounding); Base is the label of
// the baseline version; Outcome (suggestion or no_change), Summary and
// Suggestion are set once it succeeded. Times are Unix ms.
type RunInfo struct {
	ID              string        `json:"id"`
	Doc             string        `json:"doc"`
	Session         string        `json:"session"`
	State           string        `json:"state"`
	Scope           AssistScope   `json:"scope"`
	Instruction     string        `json:"instruction"`
	Personalization string        `json:"personalization"`
	Preset          *PresetPin    `json:"preset,omitempty"`
	Persona         *PersonaPin   `json:"persona,omitempty"`
	Grounding       *RunGrounding `json:"grounding,omitempty"`
	Base            string        `json:"base"`
	Attempts        int           `json:"attempts"`
	Retries         int           `json:"retries,omitempty"`
	Recoveries      int           `json:"recoveries,omitempty"`
	CancelRequested bool          `json:"cancelRequested,omitempty"`
	Provider        string        `json:"provider,omitempty"`
	Model           string        `json:"model,omitempty"`
	PromptHash      string        `json:"promptHash,omitempty"`
	Outcome         string        `json:"outcome,omitempty"`
	Summary         string        `json:"summary,omitempty"`
	Suggestion      string        `json:"suggestion,omitempty"`
	Error           *RunFailure   `json:"error,omitempty"`
	Created         int64         `json:"created"`
	Started         int64         `json:"started,omitempty"`
	Finished        int64         `json:"finished,omitempty"`
}

// AssistCancel cancels run Run: a queued run ends cancelled at once, a
// running one when its model call stops. A finished run is answered as it
// is.
type AssistCancel struct {
	Envelope
	Run string `json:"run"`
}

// AssistCancelDone answers AssistCancel with the run as it stands.
type AssistCancelDone struct {
	Envelope
	Run RunInfo `json:"run"`
}

// SuggestionConflict is why a suggestion can no longer apply; By is the
// kind of change that moved its baseline (draft, checkpoint,
// accept_suggestion, restore, generation, accept).
type SuggestionConflict struct {
	Reason string   `json:"reason"`
	Blocks []string `json:"blocks,omitempty"`
	By     string   `json:"by,omitempty"`
}

// SuggestionInfo is a suggestion: operations (docs/flowdoc.md) against
// the baseline version Base. Status is pending, accepted, rejected or
// conflicted; Deletes says an accept needs confirmDelete; Version is the
// label an accept created. Closeness is set on a persona run's
// suggestion.
type SuggestionInfo struct {
	ID           string              `json:"id"`
	Doc          string              `json:"doc"`
	Run          string              `json:"run"`
	Session      string              `json:"session"`
	Status       string              `json:"status"`
	Scope        AssistScope         `json:"scope"`
	Base         string              `json:"base"`
	Ops          []flowdoc.Op        `json:"ops"`
	Summary      string              `json:"summary,omitempty"`
	Deletes      bool                `json:"deletes,omitempty"`
	Created      int64               `json:"created"`
	Decided      int64               `json:"decided,omitempty"`
	DecidedBy    string              `json:"decidedBy,omitempty"`
	Version      string              `json:"version,omitempty"`
	Conflict     *SuggestionConflict `json:"conflict,omitempty"`
	RejectReason string              `json:"rejectReason,omitempty"`
	Closeness    *Closeness          `json:"closeness,omitempty"`
	// Carried is set on an accepted suggestion that the accept carried
	// over from its baseline (From, a version label) to a newer one (To:
	// the head then, with the draft's edits elsewhere kept).
	Carried *SuggestionCarried `json:"carried,omitempty"`
}

// SuggestionCarried names the two baselines of a carried-over accept.
type SuggestionCarried struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// SuggestionPreview asks for suggestion Suggestion materialized against
// its baseline.
type SuggestionPreview struct {
	Envelope
	Suggestion string `json:"suggestion"`
}

// SuggestionPreviewDone answers SuggestionPreview: the operations
// applied (a deletion shown as done) and the block and word diff they
// make, and whether an accept would apply now (Current). For a pending
// block-scoped suggestion whose watched blocks are unchanged, that is
// against the current draft (CarriedOver: what the accept would carry it
// over to; Against its head's label); otherwise against its baseline.
type SuggestionPreviewDone struct {
	Envelope
	Suggestion  SuggestionInfo        `json:"suggestion"`
	Candidate   flowdoc.Document      `json:"candidate"`
	Changes     []flowdoc.BlockChange `json:"changes"`
	Current     bool                  `json:"current"`
	CarriedOver bool                  `json:"carriedOver,omitempty"`
	Against     string                `json:"against,omitempty"`
}

// SuggestionAccept accepts a suggestion: the server applies it through
// CommitChange with the four baseline checks. ConfirmDelete confirms the
// deletions of a suggestion that deletes blocks.
type SuggestionAccept struct {
	Envelope
	Suggestion    string `json:"suggestion"`
	ConfirmDelete bool   `json:"confirmDelete,omitempty"`
}

// SuggestionAcceptDone answers SuggestionAccept (a repeated accept gets
// the first one's answer): the suggestion, now accepted, the label of the
// version it created and that version's body fingerprint.
type SuggestionAcceptDone struct {
	Envelope
	Suggestion  SuggestionInfo      `json:"suggestion"`
	Version     string              `json:"version"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint"`
}

// SuggestionReject rejects a suggestion, with an optional reason.
type SuggestionReject struct {
	Envelope
	Suggestion string `json:"suggestion"`
	Reason     string `json:"reason,omitempty"`
}

// SuggestionRejectDone answers SuggestionReject with the suggestion.
type SuggestionRejectDone struct {
	Envelope
	Suggestion SuggestionInfo `json:"suggestion"`
}

// SessionInfo is one of the caller's conversation sessions on an
// article; Messages counts its messages. Times are Unix ms.
type SessionInfo struct {
	ID       string `json:"id"`
	Doc      string `json:"doc"`
	Title    string `json:"title,omitempty"`
	Created  int64  `json:"created"`
	Updated  int64  `json:"updated"`
	Messages uint64 `json:"messages"`
	// Current marks, in session.list.done, the caller's current session
	// on the article: the one a request without "session" continues.
	Current bool `json:"current,omitempty"`
	// Personalization is the session's current choice (none set: absent).
	Personalization *SessionChoice `json:"personalization,omitempty"`
}

// SessionChoice is a session's current personalization: Kind none,
// writing_preset, editing_preset or persona, and the preset's or
// persona's ID.
type SessionChoice struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// SessionList lists the caller's sessions on document Doc.
type SessionList struct {
	Envelope
	Doc string `json:"doc"`
}

// SessionListDone answers SessionList, most recently updated first: the
// first is the one a request without a session continues.
type SessionListDone struct {
	Envelope
	Doc      string        `json:"doc"`
	Sessions []SessionInfo `json:"sessions"`
}

// SessionStart starts a new session on Doc, which becomes the current
// one.
type SessionStart struct {
	Envelope
	Doc   string `json:"doc"`
	Title string `json:"title,omitempty"`
}

// SessionStartDone answers SessionStart.
type SessionStartDone struct {
	Envelope
	Session SessionInfo `json:"session"`
}

// SessionSwitch makes session Session the current one of Doc.
type SessionSwitch struct {
	Envelope
	Doc     string `json:"doc"`
	Session string `json:"session"`
}

// SessionSwitchDone answers SessionSwitch.
type SessionSwitchDone struct {
	Envelope
	Session SessionInfo `json:"session"`
}

// SessionPersonalize sets the current personalization of the caller's
// session Session on Doc.
type SessionPersonalize struct {
	Envelope
	Doc             string        `json:"doc"`
	Session         string        `json:"session"`
	Personalization SessionChoice `json:"personalization"`
}

// SessionPersonalizeDone answers SessionPersonalize with the session.
type SessionPersonalizeDone struct {
	Envelope
	Session SessionInfo `json:"session"`
}

// RunUsage is a succeeded run's token usage.
type RunUsage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Total  int64 `json:"total"`
}

// RunEventData is the data of every event of a run stream; the fields
// that do not apply to a type are absent (docs/protocol.md lists them per
// type). Decode it with Event.DecodeData.
type RunEventData struct {
	Run         string    `json:"run"`
	Doc         string    `json:"doc,omitempty"`
	Task        string    `json:"task,omitempty"`
	Attempt     int       `json:"attempt,omitempty"`
	Text        string    `json:"text,omitempty"`
	DelayMs     int64     `json:"delayMs,omitempty"`
	RateLimited bool      `json:"rateLimited,omitempty"`
	Code        string    `json:"code,omitempty"`
	Message     string    `json:"message,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Suggestion  string    `json:"suggestion,omitempty"`
	Status      string    `json:"status,omitempty"`
	Usage       *RunUsage `json:"usage,omitempty"`
}

// SuggestionEventData is the data of the suggestion.* events of a
// document's stream.
type SuggestionEventData struct {
	ID      string       `json:"id"`
	Doc     string       `json:"doc"`
	Run     string       `json:"run,omitempty"`
	Status  string       `json:"status"`
	Scope   *AssistScope `json:"scope,omitempty"`
	Base    string       `json:"base,omitempty"`
	Ops     int          `json:"ops,omitempty"`
	Deletes bool         `json:"deletes,omitempty"`
	Summary string       `json:"summary,omitempty"`
	Actor   string       `json:"actor,omitempty"`
	Version string       `json:"version,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	Blocks  []string     `json:"blocks,omitempty"`
	By      string       `json:"by,omitempty"`
	// CarriedFrom is, on suggestion.accepted, the suggestion's own
	// baseline label when the accept carried it over to a newer one.
	CarriedFrom string `json:"carriedFrom,omitempty"`
	// Agent is, on suggestion.created, the outside agent (an agent token,
	// docs/agents.md) the suggestion came from; absent for the author's
	// own requests.
	Agent *SuggestionAgent `json:"agent,omitempty"`
}

// SuggestionAgent names the outside agent of a suggestion: the client
// and its version (from the MCP handshake or the X-Folio-Agent header),
// the agent token's id and its user.
type SuggestionAgent struct {
	Client        string `json:"client,omitempty"`
	ClientVersion string `json:"clientVersion,omitempty"`
	Token         string `json:"token"`
	User          string `json:"user"`
}

// Assistant is the writing assistant as the sync server needs it
// (internal/server adapts package assistant). The server has checked the
// caller's access to the document of the calls that name one; the calls
// that name a run or a suggestion check it themselves and answer one the
// caller may not reach exactly like a missing one (not_found). Errors are
// the service's (package errs), sent with their code and kind.
//
// Every method is safe for concurrent use and returns once what it did
// is durable.
type Assistant interface {
	// Assist stores and queues a request on req.Doc; the model works
	// after it returns. Errors: personalization_conflict,
	// persona_unavailable, persona_disabled, persona_not_generated,
	// private_source_blocked, preset_archived, assistant_disabled, the
	// writing quota's codes, invalid (scope, instruction, key).
	Assist(ctx context.Context, p Principal, req *AssistRequest) (AssistQueued, error)
	// CancelRun cancels a run and returns it as it then stands.
	CancelRun(ctx context.Context, p Principal, run string) (RunInfo, error)
	// PreviewSuggestion materializes a suggestion against its baseline.
	PreviewSuggestion(ctx context.Context, p Principal, id string) (SuggestionPreviewDone, error)
	// AcceptSuggestion applies a suggestion through CommitChange; a
	// repeat answers the first accept. Errors: suggestion_conflicted,
	// suggestion_decided, delete_confirmation_required.
	AcceptSuggestion(ctx context.Context, p Principal, id string, confirmDelete bool) (SuggestionAcceptDone, error)
	// RejectSuggestion rejects a suggestion. Errors: suggestion_decided.
	RejectSuggestion(ctx context.Context, p Principal, id, reason string) (SuggestionInfo, error)
	// Sessions lists p's sessions on doc, most recently updated first.
	Sessions(ctx context.Context, p Principal, doc string) ([]SessionInfo, error)
	// StartSession starts a session on doc; it becomes the current one.
	StartSession(ctx context.Context, p Principal, doc, title string) (SessionInfo, error)
	// SwitchSession makes p's session id on doc the current one.
	SwitchSession(ctx context.Context, p Principal, doc, id string) (SessionInfo, error)
	// PersonalizeSession sets the current personalization of p's session
	// id on doc. Errors: as a request's choice (invalid, preset_archived,
	// assistant_disabled, the persona codes), not_found.
	PersonalizeSession(ctx context.Context, p Principal, doc, id string, c SessionChoice) (SessionInfo, error)
}

// errNoAssistant answers every assistant request of a server without one.
var errNoAssistant = errs.C(errs.Disabled, "assistant_disabled", "this server runs no writing assistant")

// newAssistMessage returns an empty assistant message of type typ.
func newAssistMessage(typ string) (Message, bool) {
	switch typ {
	case TypeAssistRequest:
		return &AssistRequest{}, true
	case TypeAssistQueued:
		return &AssistQueued{}, true
	case TypeAssistCancel:
		return &AssistCancel{}, true
	case TypeAssistCancelDone:
		return &AssistCancelDone{}, true
	case TypeSuggestionPreview:
		return &SuggestionPreview{}, true
	case TypeSuggestionPreviewDone:
		return &SuggestionPreviewDone{}, true
	case TypeSuggestionAccept:
		return &SuggestionAccept{}, true
	case TypeSuggestionAcceptDone:
		return &SuggestionAcceptDone{}, true
	case TypeSuggestionReject:
		return &SuggestionReject{}, true
	case TypeSuggestionRejectDone:
		return &SuggestionRejectDone{}, true
	case TypeSessionList:
		return &SessionList{}, true
	case TypeSessionListDone:
		return &SessionListDone{}, true
	case TypeSessionStart:
		return &SessionStart{}, true
	case TypeSessionStartDone:
		return &SessionStartDone{}, true
	case TypeSessionSwitch:
		return &SessionSwitch{}, true
	case TypeSessionSwitchDone:
		return &SessionSwitchDone{}, true
	case TypeSessionPersonalize:
		return &SessionPersonalize{}, true
	case TypeSessionPersonalizeDone:
		return &SessionPersonalizeDone{}, true
	}
	return nil, false
}

// isAssistRequest reports whether typ is an assistant request a client
// sends.
func isAssistRequest(typ string) bool {
	switch typ {
	case TypeAssistRequest, TypeAssistCancel, TypeSuggestionPreview, TypeSuggestionAccept, TypeSuggestionReject,
		TypeSessionList, TypeSessionStart, TypeSessionSwitch, TypeSessionPersonalize:
		return true
	}
	return false
}

// assistTypeOf returns the wire type of an assistant message.
func assistTypeOf(m Message) (string, bool) {
	switch m.(type) {
	case *AssistRequest:
		return TypeAssistRequest, true
	case *AssistQueued:
		return TypeAssistQueued, true
	case *AssistCancel:
		return TypeAssistCancel, true
	case *AssistCancelDone:
		return TypeAssistCancelDone, true
	case *SuggestionPreview:
		return TypeSuggestionPreview, true
	case *SuggestionPreviewDone:
		return TypeSuggestionPreviewDone, true
	case *SuggestionAccept:
		return TypeSuggestionAccept, true
	case *SuggestionAcceptDone:
		return TypeSuggestionAcceptDone, true
	case *SuggestionReject:
		return TypeSuggestionReject, true
	case *SuggestionRejectDone:
		return TypeSuggestionRejectDone, true
	case *SessionList:
		return TypeSessionList, true
	case *SessionListDone:
		return TypeSessionListDone, true
	case *SessionStart:
		return TypeSessionStart, true
	case *SessionStartDone:
		return TypeSessionStartDone, true
	case *SessionSwitch:
		return TypeSessionSwitch, true
	case *SessionSwitchDone:
		return TypeSessionSwitchDone, true
	case *SessionPersonalize:
		return TypeSessionPersonalize, true
	case *SessionPersonalizeDone:
		return TypeSessionPersonalizeDone, true
	}
	return "", false
}

// strictDecode reports whether a message type is decoded strictly: a
// field it does not have is refused, not dropped.
func strictDecode(typ string) bool { return typ == TypeSave || typ == TypeAssistRequest }

// handleAssist answers an assistant request; it reports false for any
// other message.
func (c *conn) handleAssist(m Message) bool {
	if !isAssistRequest(TypeOf(m)) {
		return false
	}
	id := m.Env().ID
	switch m.(type) {
	case *AssistRequest, *AssistCancel, *SuggestionAccept, *SuggestionReject, *SessionStart, *SessionSwitch, *SessionPersonalize:
		if c.principal().ReadOnly {
			c.replyError(id, CodeReadOnly, "a backup token may only read; use an author's token to ask the assistant or decide a suggestion")
			return true
		}
	}
	as := c.srv.cfg.Assistant
	if as == nil {
		c.replyErr(id, errNoAssistant)
		return true
	}
	// Doc-scoped requests are checked here; the others by the Assistant.
	switch m := m.(type) {
	case *AssistRequest:
		if !c.checkDoc(id, m.Doc) {
			return true
		}
	case *SessionList:
		if !c.checkDoc(id, m.Doc) {
			return true
		}
	case *SessionStart:
		if !c.checkDoc(id, m.Doc) {
			return true
		}
	case *SessionSwitch:
		if !c.checkDoc(id, m.Doc) {
			return true
		}
	case *SessionPersonalize:
		if !c.checkDoc(id, m.Doc) {
			return true
		}
	}
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	p := c.principal()
	var (
		reply     Message
		err       error
		what, obj string // for the log of an internal error
	)
	switch m := m.(type) {
	case *AssistRequest:
		what, obj = "assist", m.Doc
		var q AssistQueued
		if q, err = as.Assist(ctx, p, m); err == nil {
			q.Doc, q.Stream = m.Doc, RunStream(q.Run.ID)
			reply = &q
		}
	case *AssistCancel:
		what, obj = "cancel run", m.Run
		var r RunInfo
		if r, err = as.CancelRun(ctx, p, m.Run); err == nil {
			reply = &AssistCancelDone{Run: r}
		}
	case *SuggestionPreview:
		what, obj = "preview suggestion", m.Suggestion
		var pv SuggestionPreviewDone
		if pv, err = as.PreviewSuggestion(ctx, p, m.Suggestion); err == nil {
			if pv.Changes == nil {
				pv.Changes = []flowdoc.BlockChange{}
			}
			reply = &pv
		}
	case *SuggestionAccept:
		what, obj = "accept suggestion", m.Suggestion
		var acc SuggestionAcceptDone
		if acc, err = as.AcceptSuggestion(ctx, p, m.Suggestion, m.ConfirmDelete); err == nil {
			// Like a save's ack, the reply follows the accept's
			// draft.updated and version.created (docs/protocol.md "Ordering").
			c.catchUp(ctx, acc.Suggestion.Doc)
			reply = &acc
		}
	case *SuggestionReject:
		what, obj = "reject suggestion", m.Suggestion
		var sg SuggestionInfo
		if sg, err = as.RejectSuggestion(ctx, p, m.Suggestion, m.Reason); err == nil {
			reply = &SuggestionRejectDone{Suggestion: sg}
		}
	case *SessionList:
		what, obj = "list sessions of", m.Doc
		var ss []SessionInfo
		if ss, err = as.Sessions(ctx, p, m.Doc); err == nil {
			if ss == nil {
				ss = []SessionInfo{}
			}
			reply = &SessionListDone{Doc: m.Doc, Sessions: ss}
		}
	case *SessionStart:
		what, obj = "start a session on", m.Doc
		var ss SessionInfo
		if ss, err = as.StartSession(ctx, p, m.Doc, m.Title); err == nil {
			reply = &SessionStartDone{Session: ss}
		}
	case *SessionSwitch:
		what, obj = "switch the session of", m.Doc
		var ss SessionInfo
		if ss, err = as.SwitchSession(ctx, p, m.Doc, m.Session); err == nil {
			reply = &SessionSwitchDone{Session: ss}
		}
	case *SessionPersonalize:
		what, obj = "personalize the session of", m.Doc
		var ss SessionInfo
		if ss, err = as.PersonalizeSession(ctx, p, m.Doc, m.Session, m.Personalization); err == nil {
			reply = &SessionPersonalizeDone{Session: ss}
		}
	default:
		err = fmt.Errorf("syncproto: assistant request %T has no handler", m)
	}
	if err != nil {
		c.repoError(id, obj, what, err)
		return true
	}
	reply.Env().ID = id
	c.send(reply)
	return true
}
