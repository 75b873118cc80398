package server

import (
	"context"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server/syncrepo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
)

// Content is what the server uses of the content service (package
// internal/repo's Repo implements it; the daemon wires one in). The
// server reaches storage only through it: the health of the store, the
// persisted event streams and the stores packs read are methods here, not
// handles the server digs out of the service. The methods are safe for
// concurrent use, and their errors are the content service's
// (*repo.NotFoundError, *folio.ConflictError, repo.ErrInvalid, errs kinds),
// which the server answers as they are.
type Content interface {
	Documents
	Drafts
	History
	Maintenance
	Bounds
	Storage
	Streams
	Packs
	Assets
	Changes
}

// The sync server's adapter is handed the server's Content.
var (
	_ syncrepo.Content = Content(nil)
	_ syncrepo.Streams = Content(nil)
)

// Documents is the catalog of documents and who owns them.
type Documents interface {
	// CreateDoc creates a document with its first version.
	CreateDoc(ctx context.Context, p repo.CreateParams) (repo.VersionInfo, error)
	// GetDoc and ListDocs describe one document and the documents of
	// owner (a user id; "": all of them).
	GetDoc(ctx context.Context, doc string) (repo.DocInfo, error)
	ListDocs(ctx context.Context, owner string) ([]repo.DocInfo, error)
	// DocOwner returns the user id owning doc ("": nobody);
	// *repo.NotFoundError when there is no such document.
	DocOwner(doc string) (string, error)
	// Chown reassigns a document and returns its previous owner's id.
	Chown(ctx context.Context, p repo.ChownParams) (prev string, err error)
	// MigrateOwners turns owner names of an older store into user ids;
	// New runs it before serving.
	MigrateOwners(ctx context.Context, users repo.UserIDs) (repo.MigrateReport, error)
	// DeleteDoc hides a document (a soft delete; *repo.NotFoundError when
	// missing or deleted); UndeleteDoc brings it back (errs.Conflict when
	// it is not deleted); ListDeleted lists the deleted ones of owner
	// ("": all).
	DeleteDoc(ctx context.Context, doc, actor string) (repo.DeletedDoc, error)
	UndeleteDoc(ctx context.Context, doc, actor string) (repo.DeletedDoc, error)
	ListDeleted(ctx context.Context, owner string) ([]repo.DeletedDoc, error)
}

// Drafts is a document's draft and the versions sealed from it: the API's
// and the sync server's edits.
type Drafts interface {
	Draft(ctx context.Context, doc string) (repo.Draft, error)
	// OpenDraft is Draft for an editor that opens doc: a draft left
	// unsealed by an earlier process is sealed first (its version is
	// returned).
	OpenDraft(ctx context.Context, doc, actor string) (repo.Draft, *repo.VersionInfo, error)
	SaveDraft(ctx context.Context, p repo.SaveParams) (repo.SaveResult, error)
	// Checkpoint seals the draft for a client's reason; Seal for the
	// server's own boundaries. The bool says whether a version was made.
	Checkpoint(ctx context.Context, doc, reason, actor, message string) (repo.VersionInfo, bool, error)
	Seal(ctx context.Context, doc, reason, actor string) (repo.VersionInfo, bool, error)
	Restore(ctx context.Context, doc, label, actor string) (repo.VersionInfo, error)
	RestoreBlock(ctx context.Context, doc, label, blockID, actor string) (repo.VersionInfo, error)
	// OnCheckpoint makes f learn of every checkpoint the idle and
	// max-duration rules seal, after it committed (for metrics).
	OnCheckpoint(f func(repo.VersionInfo))
}

// History reads the versions of a document.
type History interface {
	// Log lists versions newest first: at most limit (0: all) with seq
	// below before (0: from the head).
	Log(ctx context.Context, doc string, limit int, before uint64) ([]repo.VersionInfo, error)
	Show(ctx context.Context, doc, label string) (repo.Snapshot, error)
	Diff(ctx context.Context, doc, a, b string) ([]flowdoc.BlockChange, error)
	BlockHistory(ctx context.Context, doc, blockID string) ([]repo.BlockRevision, error)
}

// Maintenance checks and collects the store (admin endpoints).
type Maintenance interface {
	Fsck(ctx context.Context, o repo.FsckOptions) (repo.FsckReport, error)
	GC(ctx context.Context, o repo.GCOptions) (repo.GCReport, error)
}

// Bounds are the limits the content service enforces, which the server
// applies while it reads a request, before any of it reaches the service.
type Bounds interface {
	Limits() flowdoc.Limits
	RequestLimits() repo.RequestLimits
}

// Storage is the health of the store under the content service.
type Storage interface {
	// Failure is nil while the store works; once it has failed, the
	// error every request is answered with (its cause unwraps from it).
	Failure() error
	// Writable is nil while a write would be attempted; otherwise the
	// error it would get: Failure's, or one of kind errs.StorageFull
	// while the disk is short of space.
	Writable() error
	// Engine names the engine holding the store ("pebble", "postgres").
	Engine() string
}

// Streams are the persisted event streams ("doc:<id>", "run:<id>"): the
// sync server's subscriptions replay and follow them, and run streams
// (FollowRun) wait on them. The store is the source of truth (recent
// events of a busy stream may be answered from memory: stream.Hub);
// WaitEvents only wakes a reader.
type Streams interface {
	// ReadEvents returns up to limit events of stream name after seq
	// after, in order; an error wrapping stream.ErrTrimmed when some
	// of them are no longer kept.
	ReadEvents(ctx context.Context, name string, after uint64, limit int) ([]stream.Event, error)
	// LastEvent is the last seq of stream name (0: never written).
	LastEvent(ctx context.Context, name string) (uint64, error)
	// FirstRetained is the first seq of stream name still kept (1:
	// never trimmed).
	FirstRetained(ctx context.Context, name string) (uint64, error)
	// WaitEvents returns a channel closed after the next commit that
	// appends to stream name. Take it before reading, so that no event
	// slips between the read and the wait.
	WaitEvents(name string) <-chan struct{}
	// WatchEvents calls fn after every later commit that appends to
	// stream name until stop is called; fn runs on the writer's
	// goroutine and must return at once. Register before reading.
	WatchEvents(name string, fn func()) (stop func())
}

// Changes are the outbox entries of document changes that feed the
// search index (repo.OutboxDoc; package search applies them).
type Changes interface {
	// DocChanges lists the pending entries, oldest first.
	DocChanges(ctx context.Context) ([]repo.DocChange, error)
	// AckDocChanges deletes entries once the index has their changes.
	AckDocChanges(ctx context.Context, cs []repo.DocChange) error
}

// Packs gives the stores pack and git exports read from.
type Packs interface {
	// PackStores are the content service's own object, ref and key-value
	// stores, so that an export sees every ref the service moved.
	PackStores() pack.Stores
}

// Assets stores and reads uploaded images and files (docs/api.md,
// "Assets").
type Assets interface {
	// PutAsset stores data uploaded by the user with id user under name:
	// errs.Unsupported for a refused type, errs.TooLarge over MaxAsset.
	PutAsset(ctx context.Context, data []byte, name, user string) (repo.AssetInfo, error)
	// Asset reads an asset; *repo.NotFoundError when there is none.
	Asset(ctx context.Context, id objstore.ID) (*objstore.Asset, repo.AssetInfo, error)
	// MayReadAsset reports whether the user with id user may read it (one
	// point read; admins are not asked).
	MayReadAsset(id objstore.ID, user string) (bool, error)
	// MaxAsset is the limit of one asset's bytes.
	MaxAsset() int
}
