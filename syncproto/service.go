package syncproto

import (
	"context"

	"github.com/cockroachdb/pebble"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
)

// Docs is what the server needs of the repository (internal/repo
// implements it). Every method is safe for concurrent use; changes to one
// document are serialized by the implementation.
type Docs interface {
	// OpenDraft returns the draft of doc for an editor. When the draft is
	// unsealed from an earlier session it is first sealed as a "recovery"
	// checkpoint, which is returned (nil otherwise). Errors: repo.ErrNotFound.
	OpenDraft(ctx context.Context, doc, actor string) (repo.Draft, *repo.VersionInfo, error)
	// SaveDraft applies a save durably and appends its draft.updated event
	// (data: DraftUpdated) to "doc:<id>". Errors: repo.ErrNotFound,
	// *repo.ConflictError (touched blocks changed since BaseSeq),
	// *flowdoc.ValidationError or repo.ErrInvalid (nothing stored).
	SaveDraft(ctx context.Context, p repo.SaveParams) (repo.SaveResult, error)
	// Checkpoint seals the draft as a version at a client's request, with
	// reason "manual", "publish" or "ai". created is false when the draft had nothing
	// unsealed; the head is returned then. Errors: repo.ErrNotFound.
	Checkpoint(ctx context.Context, doc, reason, actor, message string) (repo.VersionInfo, bool, error)
	// Seal is Checkpoint at the server's own boundaries: reason "idle",
	// "max_duration" or "leave". Checkpoint refuses those reasons, since a
	// client may not give them.
	Seal(ctx context.Context, doc, reason, actor string) (repo.VersionInfo, bool, error)
	// Restore appends a version restoring label. Errors: repo.ErrNotFound,
	// repo.ErrConflict.
	Restore(ctx context.Context, doc, label, actor string) (repo.VersionInfo, error)
	// Draft returns the current draft. Errors: repo.ErrNotFound.
	Draft(ctx context.Context, doc string) (repo.Draft, error)
}

// Principal is an authenticated caller. User is a name (for logs and the
// actors history records); UserID is the immutable id access decisions use.
type Principal struct {
	User     string
	UserID   string
	Admin    bool
	TokenID  string // identifies the token, for revocation
	ReadOnly bool   // a token that may only read (backups): no saves, checkpoints or restores
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

// Events reads persisted streams. The store is the source of truth;
// Wait only wakes readers.
type Events interface {
	// Read returns up to limit events of stream with cursor > after, in
	// order. Errors: stream.ErrTrimmed when after is older than retention.
	Read(ctx context.Context, stream string, after uint64, limit int) ([]stream.Event, error)
	// Last returns the cursor of the stream's last event (0 when empty).
	Last(ctx context.Context, stream string) (uint64, error)
	// FirstRetained returns the first cursor still stored.
	FirstRetained(ctx context.Context, stream string) (uint64, error)
	// Wait returns a channel closed when stream may have new events. Take
	// it before Read so that no event slips between read and wait.
	Wait(stream string) <-chan struct{}
}

// StoreEvents serves Events from a Pebble store and the Hub its writers
// notify (package internal/stream).
type StoreEvents struct {
	Store pebble.Reader
	Hub   *stream.Hub
}

var _ Events = StoreEvents{}

// Read implements Events.
func (s StoreEvents) Read(_ context.Context, name string, after uint64, limit int) ([]stream.Event, error) {
	return stream.Read(s.Store, name, after, limit)
}

// Last implements Events.
func (s StoreEvents) Last(_ context.Context, name string) (uint64, error) {
	return stream.Last(s.Store, name)
}

// FirstRetained implements Events.
func (s StoreEvents) FirstRetained(_ context.Context, name string) (uint64, error) {
	return stream.FirstRetained(s.Store, name)
}

// Wait implements Events.
func (s StoreEvents) Wait(name string) <-chan struct{} { return s.Hub.Wait(name) }
