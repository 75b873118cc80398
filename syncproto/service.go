package syncproto

import (
	"context"
)

// Docs is what the server needs of the content service (the adapter in
// internal/server/syncrepo implements it over the repository). Every
// method is safe for concurrent use; changes to one document are
// serialized by the implementation. Errors carry their kind (package
// errs): a missing document is errs.NotFound, whatever the method.
type Docs interface {
	// OpenDraft returns the draft of doc for an editor. When the draft is
	// unsealed from an earlier session it is first sealed as a "recovery"
	// checkpoint, which is returned (nil otherwise).
	OpenDraft(ctx context.Context, doc, actor string) (Draft, *VersionInfo, error)
	// SaveDraft applies a save durably and appends its draft.updated
	// event (data: *DraftUpdated with p.Session) to "doc:<id>" before it
	// returns. Errors: *folio.ConflictError (a touched block or the attributes
	// changed since BaseSeq, or a block named is gone), errs.Invalid or
	// errs.TooLarge (nothing stored; a *flowdoc.ValidationError in the
	// chain names the problems).
	SaveDraft(ctx context.Context, p SaveParams) (SaveResult, error)
	// Checkpoint seals the draft as a version at a client's request, with
	// reason "manual", "publish" or "ai". created is false when the draft
	// had nothing unsealed; the head is returned then.
	Checkpoint(ctx context.Context, doc, reason, actor, message string) (VersionInfo, bool, error)
	// Seal is Checkpoint at the server's own boundaries: reason "idle",
	// "max_duration" or "leave". Checkpoint refuses those reasons, since a
	// client may not give them.
	Seal(ctx context.Context, doc, reason, actor string) (VersionInfo, bool, error)
	// Restore appends a version restoring label. Errors: errs.NotFound,
	// errs.Conflict.
	Restore(ctx context.Context, doc, label, actor string) (VersionInfo, error)
	// Draft returns the current draft.
	Draft(ctx context.Context, doc string) (Draft, error)
}

// Principal is an authenticated caller. User is a name (for logs and the
// actors history records); UserID is the immutable id access decisions use.
type Principal struct {
	User     string
	UserID   string
	Admin    bool
	TokenID  string // identifies the token, for revocation
	ReadOnly bool   // a token that may only read (backups): no saves, checkpoints or restores
	Agent    bool   // an agent token: only the requests AgentMay allows
}

// Authenticator checks bearer tokens. Revocations reach the server
// through Server.RevokeToken and Server.RevokeUser.
type Authenticator interface {
	// Authenticate returns the principal of token, or an error wrapping
	// ErrUnauthenticated for a missing, unknown or revoked one.
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// Access decides what a principal may see. Both methods must answer
// false for things that do not exist, so that another user's document
// and a missing one look the same.
type Access interface {
	// CanAccess reports whether p may read and edit document doc.
	CanAccess(ctx context.Context, p Principal, doc string) bool
	// CanReadStream reports whether p may subscribe to a stream that is
	// not a document stream (for example "run:<id>").
	CanReadStream(ctx context.Context, p Principal, stream string) bool
}

// Events reads persisted streams, in the protocol's terms (the adapter
// in internal/server/syncrepo turns stored payloads into DraftUpdated,
// VersionCreated, OwnerChanged or RawData). The store is the source of
// truth; Watch only wakes readers.
type Events interface {
	// Read returns up to limit events of stream with cursor > after, in
	// order. Errors: ErrTrimmed when after is older than retention.
	Read(ctx context.Context, stream string, after uint64, limit int) ([]StreamEvent, error)
	// Last returns the cursor of the stream's last event (0 when empty).
	Last(ctx context.Context, stream string) (uint64, error)
	// FirstRetained returns the first cursor still stored.
	FirstRetained(ctx context.Context, stream string) (uint64, error)
	// Watch calls notify whenever stream may have new events, until stop
	// is called (after stop returns, notify is not called again). notify
	// runs on the writer's goroutine: it must return at once. Register
	// before Read so that no event slips between read and notice.
	Watch(stream string, notify func()) (stop func())
}
