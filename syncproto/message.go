package syncproto

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/vmihailenco/msgpack/v5"
)

// Message types. Requests are sent by clients, replies and events by the
// server. The list is append-only: a type keeps its meaning forever.
const (
	// Client -> server.
	TypeHello       = "hello"
	TypeOpen        = "open"
	TypeLeave       = "leave"
	TypeSave        = "draft.save"
	TypeCheckpoint  = "checkpoint"
	TypeRestore     = "restore"
	TypeSubscribe   = "subscribe"
	TypeUnsubscribe = "unsubscribe"
	TypePing        = "ping"

	// Server -> client replies.
	TypeWelcome        = "welcome"
	TypeSnapshot       = "snapshot"
	TypeLeft           = "left"
	TypeAck            = "draft.ack"
	TypeConflict       = "draft.conflict"
	TypeCheckpointDone = "checkpoint.done"
	TypeRestoreDone    = "restore.done"
	TypeSubscribed     = "subscribed"
	TypeUnsubscribed   = "unsubscribed"
	TypePong           = "pong"
	TypeError          = "error"

	// Server -> client, unsolicited.
	TypeResync = "resync"

	// Stream events (server -> client). Any other event type a stream
	// holds is delivered the same way, with its data as a plain map.
	TypeDraftUpdated   = "draft.updated"
	TypeVersionCreated = "version.created"
	TypeOwnerChanged   = "owner.changed"
)

// Envelope is the part every message has. ID is chosen by the client for
// a request (any string up to 64 bytes, unique among its requests in
// flight) and copied into the reply; events have no ID.
type Envelope struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
}

// Env returns the envelope; it makes every message type a Message.
func (e *Envelope) Env() *Envelope { return e }

// Message is any protocol message: a struct that embeds Envelope.
type Message interface {
	Env() *Envelope
}

// Hello authenticates the connection. Without a bearer token on the
// upgrade request it must be the first message and arrive within
// Config.HelloTimeout. With one, the server authenticates at once and
// sends an unsolicited Welcome; a Hello is then optional and answered
// with the Welcome again (its token is ignored).
type Hello struct {
	Envelope
	Token  string `json:"token,omitempty"`
	Client string `json:"client,omitempty"` // free-form client name and version, for logs
}

// Limits are the connection's limits, announced in Welcome.
type Limits struct {
	MaxFrame          int64   `json:"maxFrame"`
	MessagesPerSecond float64 `json:"messagesPerSecond"`
	Burst             int     `json:"burst"`
	MaxSubscriptions  int     `json:"maxSubscriptions"`
	SendQueue         int     `json:"sendQueue"`
}

// Welcome answers Hello.
type Welcome struct {
	Envelope
	User     string `json:"user"`
	Admin    bool   `json:"admin,omitempty"`
	Session  string `json:"session"` // this connection's id; echoed in draft.updated
	Protocol string `json:"protocol"`
	Limits   Limits `json:"limits"`
}

// Open starts editing a document. The reply is a Snapshot; the
// connection is then subscribed to the document's stream from the
// snapshot's cursor.
type Open struct {
	Envelope
	Doc string `json:"doc"`
}

// Snapshot is the draft as it was when the document was opened.
type Snapshot struct {
	Envelope
	Doc           string              `json:"doc"`
	Seq           uint64              `json:"seq"`
	Body          flowdoc.Document    `json:"body"`
	Attrs         flowdoc.Attributes  `json:"attrs"`
	Fingerprint   flowdoc.Fingerprint `json:"fingerprint"`
	Head          string              `json:"head"`
	Unsealed      bool                `json:"unsealed"`
	UnsealedSince int64               `json:"unsealedSince,omitempty"`
	// Stream is "doc:<id>"; Cursor is its last event when the draft was
	// read. Events after it follow; a draft.updated whose seq is not
	// above Seq is already in this snapshot.
	Stream string `json:"stream"`
	Cursor uint64 `json:"cursor"`
	// Recovered is the recovery checkpoint sealed before the snapshot when
	// an earlier session left the draft unsealed.
	Recovered *VersionInfo `json:"recovered,omitempty"`
}

// Leave stops editing a document: its stream subscription ends and, when
// this connection saved changes that are not sealed, a "leave"
// checkpoint is sealed.
type Leave struct {
	Envelope
	Doc string `json:"doc"`
}

// Left answers Leave.
type Left struct {
	Envelope
	Doc     string       `json:"doc"`
	Version *VersionInfo `json:"version,omitempty"` // the leave checkpoint, when one was sealed
}

// Save is a draft save: block-level Changes against BaseSeq, or a full
// Body. Attrs, when set, replace the article attributes.
type Save struct {
	Envelope
	Doc     string `json:"doc"`
	BaseSeq uint64 `json:"baseSeq"`
	// Key, when set, makes the save idempotent: the same save sent again
	// with the same key (after a lost ack) is answered with the original
	// ack. 1-64 bytes of visible ASCII, unique per save of a document
	// and user (docs/protocol.md, "Lost acks").
	Key     string              `json:"key,omitempty"`
	Changes []Change            `json:"changes,omitempty"`
	Body    *flowdoc.Document   `json:"body,omitempty"`
	Attrs   *flowdoc.Attributes `json:"attrs,omitempty"`
	// Merge opts in to merging inside text blocks (docs/protocol.md
	// "Merging inside a block"): an upserted text block changed since
	// BaseSeq is merged with the draft's version when the edits do not
	// overlap, instead of a conflict. Without it the save is strict.
	Merge bool `json:"merge,omitempty"`
}

// Ack acknowledges a durable save.
type Ack struct {
	Envelope
	Doc         string              `json:"doc"`
	Seq         uint64              `json:"seq"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint"`
	Unsealed    bool                `json:"unsealed"`
	Changed     []string            `json:"changed,omitempty"`
	// Merged lists the blocks of a merging save that the server merged
	// with another editor's change, with the merged content: the saving
	// editor's copy of each becomes it.
	Merged []EventBlock `json:"merged,omitempty"`
}

// Conflict rejects a save whose touched blocks changed since its BaseSeq.
// Nothing of the save was stored. Its fields are those of the
// *folio.ConflictError the save returned.
type Conflict struct {
	Envelope
	Doc   string      `json:"doc"`
	Seq   uint64      `json:"seq"`             // the draft's current seq
	Check folio.Check `json:"check,omitempty"` // the check that failed (folio.Check*)
	// BaseSeq is the baseSeq of the save refused.
	BaseSeq uint64 `json:"baseSeq,omitempty"`
	// Missing is the block a change named that is not in the draft
	// (check missing_block).
	Missing string `json:"missing,omitempty"`
	Reason  string `json:"reason"` // for people
	// Blocks are the server's state of the contested blocks.
	Blocks []folio.ConflictBlock `json:"blocks"`
}

// ConflictError rebuilds the error the server answered with.
func (m *Conflict) ConflictError() *folio.ConflictError {
	return &folio.ConflictError{Doc: m.Doc, Check: m.Check, Seq: m.Seq, BaseSeq: m.BaseSeq, Missing: m.Missing, Reason: m.Reason, Blocks: m.Blocks}
}

// Checkpoint asks the server to seal the draft now (a boundary the client
// knows of: publish, an AI request, the user's "save version").
type Checkpoint struct {
	Envelope
	Doc     string `json:"doc"`
	Reason  string `json:"reason,omitempty"` // default "manual"
	Message string `json:"message,omitempty"`
}

// CheckpointDone answers Checkpoint. Created is false when the draft had
// nothing unsealed; Version is then the current head.
type CheckpointDone struct {
	Envelope
	Doc     string      `json:"doc"`
	Created bool        `json:"created"`
	Version VersionInfo `json:"version"`
}

// Restore appends a new version with the content of version Label.
type Restore struct {
	Envelope
	Doc   string `json:"doc"`
	Label string `json:"label"`
}

// RestoreDone answers Restore.
type RestoreDone struct {
	Envelope
	Doc     string      `json:"doc"`
	Version VersionInfo `json:"version"`
}

// Subscribe starts delivery of a persisted stream. With After set, every
// event after that cursor is replayed in order, then live events follow;
// without it only new events are sent.
type Subscribe struct {
	Envelope
	Stream string  `json:"stream"`
	After  *uint64 `json:"after,omitempty"`
}

// Subscribed answers Subscribe. Cursor is where delivery starts: the next
// event has a larger cursor. Last is the stream's last event now; events
// up to it are replay.
type Subscribed struct {
	Envelope
	Stream string `json:"stream"`
	Cursor uint64 `json:"cursor"`
	Last   uint64 `json:"last"`
}

// Unsubscribe ends delivery of a stream.
type Unsubscribe struct {
	Envelope
	Stream string `json:"stream"`
}

// Unsubscribed answers Unsubscribe. No event of the stream follows it.
type Unsubscribed struct {
	Envelope
	Stream string `json:"stream"`
}

// Resync says that a stream's events after the client's cursor are no
// longer retained. The subscription has ended; the client reloads the
// state (open again, or read it over HTTP) and subscribes after Last.
type Resync struct {
	Envelope
	Stream string `json:"stream"`
	After  uint64 `json:"after"` // the cursor that cannot be served
	First  uint64 `json:"first"` // the first retained event
	Last   uint64 `json:"last"`  // the stream's last event
}

// Ping asks for a Pong; clients use it as a heartbeat.
type Ping struct {
	Envelope
}

// Pong answers Ping.
type Pong struct {
	Envelope
	Time int64 `json:"time"` // server time, Unix ms
}

// Error answers a request that failed. ID is the failed request's id,
// always present on the wire: "" when the frame could not be read far
// enough to find it, or the error answers no request (a subscription that
// ended). Code and Kind are the HTTP API's (package errs): the same error
// has the same code and kind on both.
type Error struct {
	Envelope
	Code         Code              `json:"code"`
	Kind         string            `json:"kind"`
	Message      string            `json:"message"`
	Problems     []flowdoc.Problem `json:"problems,omitempty"`     // invalid documents
	RetryAfterMs int64             `json:"retryAfterMs,omitempty"` // rate_limited
}

// errorWire is Error as encoded: the same fields with id always present.
type errorWire struct {
	Type         string            `json:"type"`
	ID           string            `json:"id"`
	Code         Code              `json:"code"`
	Kind         string            `json:"kind"`
	Message      string            `json:"message"`
	Problems     []flowdoc.Problem `json:"problems,omitempty"`
	RetryAfterMs int64             `json:"retryAfterMs,omitempty"`
}

func (e *Error) wire() errorWire {
	return errorWire{Type: e.Type, ID: e.ID, Code: e.Code, Kind: e.Kind, Message: e.Message, Problems: e.Problems,
		RetryAfterMs: e.RetryAfterMs}
}

// MarshalJSON writes the error with its id even when empty.
func (e *Error) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e.wire()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// EncodeMsgpack writes the error with its id even when empty (the codec's
// encoder uses the json tags).
func (e *Error) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.Encode(e.wire()) }

// Event is one persisted stream event. Its Type is the event's type
// (draft.updated, version.created, ...).
type Event struct {
	Envelope
	Stream string `json:"stream"`
	Cursor uint64 `json:"cursor"`
	Time   int64  `json:"time"` // Unix ms
	Data   any    `json:"data,omitempty"`

	raw   []byte // data as received (clients); decode with DecodeData
	codec Codec  // the codec raw is in
}

// DraftUpdated is the data of a draft.updated event: what another editor
// needs to bring its copy from Seq-1 to Seq. Blocks are the blocks that
// changed (their new content) or were deleted (Block absent); Order is the
// full block order when it changed (always when a block was added,
// deleted or moved); Attrs are the article attributes when they changed.
type DraftUpdated struct {
	Doc         string              `json:"doc"`
	Seq         uint64              `json:"seq"`
	Actor       string              `json:"actor"`
	Session     string              `json:"session,omitempty"` // the saving connection; absent for other writers
	Fingerprint flowdoc.Fingerprint `json:"fingerprint"`
	Unsealed    bool                `json:"unsealed"`
	Blocks      []EventBlock        `json:"blocks,omitempty"`
	Order       []string            `json:"order,omitempty"`
	Attrs       *flowdoc.Attributes `json:"attrs,omitempty"`
	// Authors, when the save merged blocks, are the users whose edits
	// the merged blocks combine (the saving actor included), sorted.
	Authors []string `json:"authors,omitempty"`
}

// VersionCreated is the data of a version.created event.
type VersionCreated struct {
	Doc          string              `json:"doc"`
	Label        string              `json:"label"`
	Seq          uint64              `json:"seq"` // the version's number in the document's log
	Kind         string              `json:"kind"`
	Reason       string              `json:"reason,omitempty"`
	Hash         Hash                `json:"hash"`
	Author       string              `json:"author"`
	Time         int64               `json:"time"` // Unix ms
	Fingerprint  flowdoc.Fingerprint `json:"fingerprint"`
	RestoredFrom string              `json:"restoredFrom,omitempty"`
}

// OwnerChanged is the data of an owner.changed event: an admin gave the
// document to another user. From and To are user ids (From is empty when
// it belonged to nobody); the names are as they were at the time. Editors
// of the previous owner are disconnected (CloseAccessWithdrawn).
type OwnerChanged struct {
	Doc      string `json:"doc"`
	From     string `json:"from,omitempty"`
	FromName string `json:"fromName,omitempty"`
	To       string `json:"to"`
	ToName   string `json:"toName,omitempty"`
	Actor    string `json:"actor"`
	Time     int64  `json:"time"` // Unix ms
}

// newMessage returns an empty message of a client or server type; ok is
// false for types that are not in the protocol (events are decoded by
// the caller as Event).
func newMessage(typ string) (Message, bool) {
	switch typ {
	case TypeHello:
		return &Hello{}, true
	case TypeOpen:
		return &Open{}, true
	case TypeLeave:
		return &Leave{}, true
	case TypeSave:
		return &Save{}, true
	case TypeCheckpoint:
		return &Checkpoint{}, true
	case TypeRestore:
		return &Restore{}, true
	case TypeSubscribe:
		return &Subscribe{}, true
	case TypeUnsubscribe:
		return &Unsubscribe{}, true
	case TypePing:
		return &Ping{}, true
	case TypeWelcome:
		return &Welcome{}, true
	case TypeSnapshot:
		return &Snapshot{}, true
	case TypeLeft:
		return &Left{}, true
	case TypeAck:
		return &Ack{}, true
	case TypeConflict:
		return &Conflict{}, true
	case TypeCheckpointDone:
		return &CheckpointDone{}, true
	case TypeRestoreDone:
		return &RestoreDone{}, true
	case TypeSubscribed:
		return &Subscribed{}, true
	case TypeUnsubscribed:
		return &Unsubscribed{}, true
	case TypePong:
		return &Pong{}, true
	case TypeError:
		return &Error{}, true
	case TypeResync:
		return &Resync{}, true
	case TypeAttrsSuggest:
		return &AttrsSuggest{}, true
	case TypeAttrsSuggestion:
		return &AttrsSuggestion{}, true
	}
	return newAssistMessage(typ)
}

// requestTypes are the messages a client may send, in the order of
// docs/protocol.md.
var requestTypes = []string{TypeHello, TypeOpen, TypeLeave, TypeSave, TypeCheckpoint, TypeRestore,
	TypeSubscribe, TypeUnsubscribe, TypePing, TypeAttrsSuggest,
	TypeAssistRequest, TypeAssistCancel, TypeSuggestionPreview, TypeSuggestionAccept, TypeSuggestionReject,
	TypeSessionList, TypeSessionStart, TypeSessionSwitch, TypeSessionPersonalize}

// NewRequest returns an empty message of a request type (RequestTypes);
// ok is false for any other type.
func NewRequest(typ string) (Message, bool) {
	if !IsRequest(typ) {
		return nil, false
	}
	return newMessage(typ)
}

// RequestTypes returns every message type a client may send.
func RequestTypes() []string { return append([]string(nil), requestTypes...) }

// IsRequest reports whether typ is a message a client may send.
func IsRequest(typ string) bool { return slices.Contains(requestTypes, typ) }

// AgentMay reports whether a connection authenticated with an agent
// token may send typ: reading and proposing (hello, ping, subscribe,
// unsubscribe, session.list, suggestion.preview, assist.request). Every
// other request — saves, checkpoints, restores, opening an editing
// session (whose leave seals a checkpoint), deciding a suggestion,
// cancelling a run, changing sessions, the attributes assistant — is
// refused with CodeForbidden before it is looked at. It is an allow
// list, so a request type added later is refused until it is listed.
func AgentMay(typ string) bool {
	switch typ {
	case TypeHello, TypePing, TypeSubscribe, TypeUnsubscribe, TypeSessionList, TypeSuggestionPreview, TypeAssistRequest:
		return true
	}
	return false
}

// TypeOf returns the wire type of a message struct (an *Event keeps the
// type it carries).
func TypeOf(m Message) string {
	switch m.(type) {
	case *Hello:
		return TypeHello
	case *Open:
		return TypeOpen
	case *Leave:
		return TypeLeave
	case *Save:
		return TypeSave
	case *Checkpoint:
		return TypeCheckpoint
	case *Restore:
		return TypeRestore
	case *Subscribe:
		return TypeSubscribe
	case *Unsubscribe:
		return TypeUnsubscribe
	case *Ping:
		return TypePing
	case *Welcome:
		return TypeWelcome
	case *Snapshot:
		return TypeSnapshot
	case *Left:
		return TypeLeft
	case *Ack:
		return TypeAck
	case *Conflict:
		return TypeConflict
	case *CheckpointDone:
		return TypeCheckpointDone
	case *RestoreDone:
		return TypeRestoreDone
	case *Subscribed:
		return TypeSubscribed
	case *Unsubscribed:
		return TypeUnsubscribed
	case *Pong:
		return TypePong
	case *Error:
		return TypeError
	case *Resync:
		return TypeResync
	case *AttrsSuggest:
		return TypeAttrsSuggest
	case *AttrsSuggestion:
		return TypeAttrsSuggestion
	}
	if t, ok := assistTypeOf(m); ok {
		return t
	}
	return m.Env().Type
}
