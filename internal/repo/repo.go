package repo

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/refs"
)

// Options configure a Repo.
type Options struct {
	Limits flowdoc.Limits // zero: flowdoc.DefaultLimits
	// MaxChanges bounds the changes of one draft save (zero:
	// DefaultMaxChanges); MaxRuns the rich-text runs, list items and table
	// cells of one request (zero: DefaultMaxRuns). See RequestLimits.
	MaxChanges int
	MaxRuns    int
	// Clock is the source of time and of the checkpoint timers; zero:
	// the wall clock (Now, when set, reads it).
	Clock Clock
	Now   func() time.Time // zero: time.Now; ignored when Clock is set
	// CheckpointIdle seals a draft as an "idle" checkpoint this long after
	// the last save that changed it (zero: DefaultCheckpointIdle);
	// CheckpointMax seals one unsealed for this long as "max_duration"
	// (zero: DefaultCheckpointMax). Negative turns the rule off. Every
	// save counts, whatever the transport.
	CheckpointIdle time.Duration
	CheckpointMax  time.Duration
	// Logger receives what the checkpoint policy could not do; nil: discard.
	Logger *slog.Logger
	Hub    *stream.Hub // woken after every commit; zero: a private hub
	Cache  int         // decoded block contents kept in memory; zero: 100,000
	// DraftCache bounds the draft block entries writers keep in memory
	// between changes (about 200 bytes each); zero: 524,288.
	DraftCache int
	KV         kv.Options // how the store is opened (Open only)
	// EventRetention is how many events each document stream keeps; an
	// editor whose cursor is older must resync. Zero: 1,024.
	EventRetention uint64
	// MaxAsset bounds one uploaded asset's bytes (zero: DefaultMaxAsset;
	// at most objstore.MaxAsset).
	MaxAsset int
}

// Repo is the content service over one store. It is safe for concurrent
// use; changes to one document are serialized by that document's lock.
type Repo struct {
	db       *kv.DB
	objs     *objstore.Store
	refs     *refs.Store
	hub      *stream.Hub
	limits   flowdoc.Limits
	req      RequestLimits
	now      func() time.Time
	boot     string // this Repo's session; a draft saved by another is from an earlier session
	keep     uint64 // events kept per document stream
	maxAsset int    // bytes of one asset (PutAsset)
	owned    bool   // Close closes db
	cp       *checkpointer

	locks docLocks   // one lock per document: changes to it are serialized
	gcMu  sync.Mutex // one collection at a time

	cacheMu sync.Mutex
	cache   map[objstore.ID]flowdoc.Block // decoded content by id (immutable, so never stale)
	cacheN  int

	headsMu sync.Mutex
	heads   map[string]headVersion // last head read or written per document

	hook atomic.Pointer[hookBox] // the ChangeHook (SetHook); nil box: none

	subsMu sync.Mutex    // guards subs
	subs   []*subscriber // Subscribe's, in the order installed

	drafts draftCache // drafts between changes (loadDraft, keepDraft)
	docs   docCache   // document records (loadDoc, lockedDoc)
	revs   revLog     // recent block revisions, for merging saves (revs.go)

	beforeSave    func(*kv.Batch)  // tests: sees a draft save's batch before it commits
	afterPremerge func(doc string) // tests: runs between a save's merge before the lock and the lock
}

// headVersion is a decoded version and its id.
type headVersion struct {
	id objstore.ID
	v  *objstore.Version
}

// headOf returns document d's head version, from memory when it is the
// one last seen.
func (r *Repo) headOf(doc string, id objstore.ID) (*objstore.Version, error) {
	r.headsMu.Lock()
	h, ok := r.heads[doc]
	r.headsMu.Unlock()
	if ok && h.id == id {
		return h.v, nil
	}
	v, err := r.objs.GetVersion(id)
	if err != nil {
		return nil, err
	}
	r.setHead(doc, id, v)
	return v, nil
}

func (r *Repo) setHead(doc string, id objstore.ID, v *objstore.Version) {
	r.headsMu.Lock()
	if len(r.heads) > 4096 {
		clear(r.heads)
	}
	r.heads[doc] = headVersion{id, v}
	r.headsMu.Unlock()
}

// Init creates an empty store in dir (folio init). It is not an error if
// one exists.
func Init(dir string) error {
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		return err
	}
	return db.Close()
}

// Open opens the store in dir.
func Open(dir string, o Options) (*Repo, error) {
	db, err := kv.Open(dir, o.KV)
	if err != nil {
		return nil, err
	}
	r := New(db, o)
	r.owned = true
	return r, nil
}

// New returns a Repo on an open store; Close does not close db.
func New(db *kv.DB, o Options) *Repo {
	r := &Repo{
		db:     db,
		objs:   objstore.New(db),
		refs:   refs.New(db),
		hub:    o.Hub,
		limits: o.Limits,
		boot:   newID(16),
		cache:  map[objstore.ID]flowdoc.Block{},
		heads:  map[string]headVersion{},
		cacheN: o.Cache,
		drafts: draftCache{drafts: map[string]*draftRec{}, max: o.DraftCache},
		docs:   docCache{recs: map[string]docRec{}},
	}
	if r.drafts.max <= 0 {
		r.drafts.max = 1 << 19
	}
	if r.hub == nil {
		r.hub = stream.NewHub()
	}
	if r.limits == (flowdoc.Limits{}) {
		r.limits = flowdoc.DefaultLimits
	}
	r.req = RequestLimits{MaxChanges: o.MaxChanges, MaxBlocks: r.limits.MaxBlocks, MaxRuns: o.MaxRuns}
	if r.req.MaxBlocks <= 0 {
		r.req.MaxBlocks = flowdoc.DefaultLimits.MaxBlocks
	}
	if r.req.MaxChanges <= 0 {
		r.req.MaxChanges = DefaultMaxChanges
	}
	if r.req.MaxRuns <= 0 {
		r.req.MaxRuns = DefaultMaxRuns
	}
	clock := o.Clock
	switch {
	case clock != nil:
	case o.Now != nil:
		clock = nowClock{o.Now}
	default:
		clock = RealClock{}
	}
	r.now = clock.Now
	r.cp = &checkpointer{r: r, clock: clock, idle: o.CheckpointIdle, max: o.CheckpointMax,
		log: o.Logger, docs: map[string]*pendingSeal{}}
	if r.cp.idle == 0 {
		r.cp.idle = DefaultCheckpointIdle
	}
	if r.cp.max == 0 {
		r.cp.max = DefaultCheckpointMax
	}
	if r.cp.log == nil {
		r.cp.log = slog.New(slog.DiscardHandler)
	}
	if r.cacheN <= 0 {
		r.cacheN = 100000
	}
	r.keep = o.EventRetention
	if r.keep == 0 {
		r.keep = 1024
	}
	r.maxAsset = o.MaxAsset
	if r.maxAsset <= 0 {
		r.maxAsset = DefaultMaxAsset
	}
	r.maxAsset = min(r.maxAsset, objstore.MaxAsset)
	return r
}

// Close stops the checkpoint timers, waits for a checkpoint they are
// sealing, and closes the store if Open opened it. Drafts left unsealed
// are sealed as "recovery" checkpoints when next opened.
func (r *Repo) Close() error {
	r.cp.close()
	r.closeSubs()
	if r.owned {
		return r.db.Close()
	}
	return nil
}

// DB is the underlying store.
func (r *Repo) DB() *kv.DB { return r.db }

// Objects is the object store.
func (r *Repo) Objects() *objstore.Store { return r.objs }

// Refs is the ref store.
func (r *Repo) Refs() *refs.Store { return r.refs }

// Hub is woken after every commit on stream "doc:<id>".
func (r *Repo) Hub() *stream.Hub { return r.hub }

// Limits are the document limits in force.
func (r *Repo) Limits() flowdoc.Limits { return r.limits }

// Failure is the store's failure (kv.DB.Failure): nil while it is
// healthy, an errs.Storage error whose cause unwraps from it once it has
// failed.
func (r *Repo) Failure() error { return r.db.Failure() }

// Writable is nil when a write would be attempted now (kv.DB.Writable),
// and otherwise the error it would get: Failure, or an errs.StorageFull
// error while the disk is short of space.
func (r *Repo) Writable() error { return r.db.Writable() }

// Engine names the engine holding the store (kv.DB.Engine).
func (r *Repo) Engine() string { return r.db.Engine() }

// ReadEvents returns up to limit events of the persisted stream name
// after seq after, in order (stream.Read; recent ones from the hub's
// tail): stream.ErrTrimmed when some of them were trimmed.
//
// Events stored by reference (a sealing change's, eventref.go) are
// rebuilt from the version they name, so every reader gets them as they
// were published.
func (r *Repo) ReadEvents(_ context.Context, name string, after uint64, limit int) ([]stream.Event, error) {
	evs, err := r.hub.Read(r.db, name, after, limit)
	if err != nil {
		return nil, err
	}
	if err := r.resolveEvents(name, evs); err != nil {
		return nil, err
	}
	return evs, nil
}

// LastEvent returns the last seq of stream name (0 when never written).
func (r *Repo) LastEvent(_ context.Context, name string) (uint64, error) {
	return r.hub.Last(r.db, name)
}

// FirstRetained returns the first seq of stream name that retention kept
// (1 when never trimmed).
func (r *Repo) FirstRetained(_ context.Context, name string) (uint64, error) {
	return stream.FirstRetained(r.db, name)
}

// WaitEvents returns a channel closed after the next commit that appends
// to stream name (the Hub's Wait). Take it before ReadEvents, so that no
// event slips between the read and the wait.
func (r *Repo) WaitEvents(name string) <-chan struct{} { return r.hub.Wait(name) }

// WatchEvents calls fn after every later commit that appends to stream
// name, until stop is called (stream.Hub.Watch: fn must return at once
// and must not call back into the repository).
func (r *Repo) WatchEvents(name string, fn func()) (stop func()) { return r.hub.Watch(name, fn) }

// PackStores are the stores packs and git exports read from: the
// repository's own, so that they see every ref it moved.
func (r *Repo) PackStores() pack.Stores {
	return pack.Stores{DB: r.db, Objects: r.objs, Refs: r.refs}
}

// Stream is the name of a document's event stream.
func Stream(doc string) string { return "doc:" + doc }

// HeadRef is the name of a document's head ref.
func HeadRef(doc string) string { return "docs/" + doc + "/head" }

// PublishedRef is the name of a document's published ref: the version
// the public sees (package publish moves it).
func PublishedRef(doc string) string { return "docs/" + doc + "/published" }

// Event types on a document's stream.
const (
	EventVersionCreated = "version.created"
	EventDraftUpdated   = "draft.updated"
)

// writing takes what a change to doc needs, in this order: a write pass
// (kv.DB.WritePass, so that a gc never removes what the change reuses),
// then the document lock, waiting for it at most until ctx is done. It
// returns the func that releases both.
//
// Both are held only for work bounded by the change (reading the draft,
// the baseline checks, building and committing the batch): everything
// proportional to a request's input (validating, sanitizing, encoding and
// hashing new blocks) is done before, so that neither other writers of the
// document nor a gc waiting for the store (and every writer queued behind
// it) wait on it.
func (r *Repo) writing(ctx context.Context, doc string) (release func(), err error) {
	releasePass := r.db.WritePass()
	unlock, err := r.locks.lock(ctx, doc)
	if err != nil {
		releasePass()
		return nil, err
	}
	return func() {
		unlock()
		releasePass()
	}, nil
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return idEncoding.EncodeToString(b)
}

// NewDocID returns a new document id: 16 characters of lowercase base32
// (80 random bits), so that nobody finds a document by guessing its id.
func NewDocID() string { return newID(10) }

// ValidDocID reports whether id can name a document: 1–64 characters of
// [A-Za-z0-9_-].
func ValidDocID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// --- records -----------------------------------------------------------

// docRec is the document record: what Log and ListDocs need without
// reading versions. The head ref stays the source of truth for the head.
type docRec struct {
	ID string `msgpack:"id"`
	// Owner is the id of the owning user (package auth). An empty one, or
	// one that names no user (deleted), leaves the document to nobody:
	// only admins reach it until one reassigns it (Chown).
	Owner string `msgpack:"ownerId,omitempty"`
	// LegacyOwner is the owner's name, as stores written before users had
	// ids recorded it. MigrateOwners turns it into Owner and clears it;
	// nothing else reads it, and access checks never do.
	LegacyOwner string      `msgpack:"owner,omitempty"`
	Title       string      `msgpack:"title"`
	Created     int64       `msgpack:"created"`
	Seq         uint64      `msgpack:"seq"` // seq of the head version
	Label       string      `msgpack:"label"`
	Major       int         `msgpack:"major"`
	Revision    int         `msgpack:"rev"`
	Head        objstore.ID `msgpack:"head"`
	// Deleted is when the document was deleted (Unix ms; 0: it is not),
	// by DeletedBy: loadDoc and lockedDoc then answer as for a missing
	// one (delete.go).
	Deleted   int64  `msgpack:"deleted,omitempty"`
	DeletedBy string `msgpack:"deletedBy,omitempty"`
}

// draftBlock is one block of a draft: its content and the draft seq of its
// last change (the draft conflict rule compares it with a save's baseSeq).
type draftBlock struct {
	ID      string      `msgpack:"id"`
	Content objstore.ID `msgpack:"c"`
	Seq     uint64      `msgpack:"s"`
	Size    int         `msgpack:"z"`           // bytes of the block's canonical JSON
	Count   int         `msgpack:"n"`           // blocks it holds, itself included
	Nested  []string    `msgpack:"x,omitempty"` // ids of blocks nested inside it
	key     []byte      // its order key (layout 2, see draftstore.go); nil: none yet
}

// slot is a block of a draft being changed: its state in the draft, and
// Block when this change gives it new content (nil: unchanged).
type slot struct {
	draftBlock
	Block *flowdoc.Block
	prev  objstore.ID       // content in the draft before this change (zero: new block)
	enc   *objstore.Encoded // Block's content object, when encoded ahead (see newBlock)
}

// newBlock is a block a change brings, sanitized, validated, encoded and
// hashed ahead of the document lock, with the meta its draft entry keeps.
type newBlock struct {
	blk     flowdoc.Block
	content objstore.Encoded // its ID alone until seal, when raw is set
	raw     []byte           // the encoded content not yet in content (see hashSized)
	size    int
	count   int
	nested  []string
}

// encodeBlock encodes and hashes a sanitized and validated block.
func encodeBlock(b flowdoc.Block) *newBlock {
	size, _, _ := blockMeta(b)
	return encodeSized(b, size)
}

// encodeSized is encodeBlock of a block whose canonical JSON size is
// known (validating it measured it): each new block is sanitized,
// validated, encoded to JSON and to msgpack, and hashed once.
func encodeSized(b flowdoc.Block, size int) *newBlock {
	nb := &newBlock{blk: b, content: objstore.Encode(objstore.KindContent, flowdoc.EncodeContent(b)), size: size}
	nb.count, nb.nested = nestedOf(b)
	return nb
}

// hashSized is encodeSized that leaves the stored form (compressing it is
// most of encoding a long block) to seal: for a block of a merging save,
// which is not stored when the block changed since the save's base (it is
// merged or a conflict then).
func hashSized(b flowdoc.Block, size int) *newBlock {
	raw := flowdoc.EncodeContent(b)
	nb := &newBlock{blk: b, content: objstore.Encoded{ID: objstore.Sum(objstore.KindContent, raw)}, raw: raw, size: size}
	nb.count, nb.nested = nestedOf(b)
	return nb
}

// seal makes nb's stored form, if hashSized left it.
func (nb *newBlock) seal() {
	if nb.raw != nil {
		nb.content, nb.raw = objstore.Encode(objstore.KindContent, nb.raw), nil
	}
}

// give makes nb the slot's new content.
func (s *slot) give(nb *newBlock) {
	nb.seal()
	s.Block, s.enc = &nb.blk, &nb.content
	s.Content, s.Size, s.Count, s.Nested = nb.content.ID, nb.size, nb.count, nb.nested
}

// blockMeta returns what the draft keeps about a block to check document
// limits and id uniqueness without reading every block.
func blockMeta(b flowdoc.Block) (size, count int, nested []string) {
	size = len(flowdoc.CanonicalJSON(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{b}})) - emptyBodySize
	count, nested = nestedOf(b)
	return size, count, nested
}

// emptyBodySize is the length of an empty body's canonical JSON: a
// body's is that plus each block's and a comma between blocks.
var emptyBodySize = len(`{"schemaVersion":1,"blocks":[]}`)

// nestedOf returns the blocks b holds, itself included, and the ids of
// those nested in it.
func nestedOf(b flowdoc.Block) (count int, nested []string) {
	var walk func(bs []flowdoc.Block)
	walk = func(bs []flowdoc.Block) {
		for _, c := range bs {
			nested = append(nested, c.ID)
			for _, n := range c.Nested() {
				walk(*n)
			}
		}
	}
	for _, n := range b.Nested() {
		walk(*n)
	}
	return 1 + len(nested), nested
}

// tomb remembers a block deleted from the draft, so that a stale save that
// touches it is a conflict rather than a resurrection.
type tomb struct {
	ID  string `msgpack:"id"`
	Seq uint64 `msgpack:"s"`
}

// maxTombs bounds the tombstones a draft keeps.
const maxTombs = 1024

// draftRec is a document's draft. Stored (draftstore.go), it is a header
// with Layout 2 and N, and Blocks and Tombs under keys of their own; in
// memory Blocks holds the body in order and Tombs the tombstones, oldest
// first.
type draftRec struct {
	Seq           uint64              `msgpack:"seq"`
	Layout        int                 `msgpack:"layout,omitempty"` // 0: layout 1, blocks in the record
	N             int                 `msgpack:"n,omitempty"`      // layout 2: the block entries stored
	Blocks        draftBlocks         `msgpack:"blocks,omitempty"` // layout 1 only, when stored
	Tombs         []tomb              `msgpack:"tombs,omitempty"`  // layout 1 only, when stored
	Attrs         flowdoc.Attributes  `msgpack:"attrs"`
	AttrsSeq      uint64              `msgpack:"attrsSeq"`
	Fingerprint   flowdoc.Fingerprint `msgpack:"fp"`
	Base          objstore.ID         `msgpack:"base"`
	BaseLabel     string              `msgpack:"baseLabel"`
	BaseFP        flowdoc.Fingerprint `msgpack:"baseFp"`
	BaseAttrs     flowdoc.Attributes  `msgpack:"baseAttrs"`
	Unsealed      bool                `msgpack:"unsealed"`
	UnsealedSince int64               `msgpack:"unsealedSince,omitempty"`
	LastChange    int64               `msgpack:"lastChange,omitempty"`
	LastActor     string              `msgpack:"lastActor,omitempty"` // who made the last change (empty in drafts written before it was kept)
	Boot          string              `msgpack:"boot,omitempty"`

	// unstored: the blocks and tombstones are not stored as keys yet (a
	// new draft, or one read from layout 1); the next write writes all.
	unstored bool
	// idx indexes Blocks for saves that change blocks in place; nil until
	// one builds it, and dropped by any change of the block list.
	idx *draftIndex
}

// logRec is the log entry of one version (a projection of the version).
type logRec struct {
	Label        string              `msgpack:"label"`
	Kind         string              `msgpack:"kind"`
	Reason       string              `msgpack:"reason,omitempty"`
	Hash         objstore.ID         `msgpack:"hash"`
	Author       string              `msgpack:"author"`
	Time         int64               `msgpack:"time"`
	Message      string              `msgpack:"msg,omitempty"`
	Fingerprint  flowdoc.Fingerprint `msgpack:"fp"`
	RestoredFrom string              `msgpack:"from,omitempty"`
	Blocks       int                 `msgpack:"blocks"`
}

func docKey(doc string) []byte   { return kv.TableKey("doc", doc) }
func draftKey(doc string) []byte { return kv.TableKey("draft", doc) }
func vlogPrefix(doc string) []byte {
	return append(kv.TableKey("vlog", doc), 0)
}
func vlogKey(doc string, seq uint64) []byte { return kv.Uint64(vlogPrefix(doc), seq) }
func vlabelKey(doc, label string) []byte    { return kv.TableKey("vlabel", doc, label) }
func bidxPrefix(doc, block string) []byte {
	return append(kv.TableKey("bidx", doc, block), 0)
}
func bidxKey(doc, block string, seq uint64) []byte { return kv.Uint64(bidxPrefix(doc, block), seq) }

// bidxInVersion is the value of a block-index entry whose block is in
// the version at that seq: its content id is the version's, read from
// there rather than stored a second time (a 32-byte hash is what no
// compressor shrinks). Stores written before kept the 32-byte content id
// as the value; both forms are read (bidxValue). Empty: deleted.
var bidxInVersion = []byte{1}

// bidxValue reads a block-index entry of block at version seq of doc:
// the block's content id, or deleted. v, when not nil, is that version.
func (r *Repo) bidxValue(doc, block string, seq uint64, val []byte, v *objstore.Version) (id objstore.ID, deleted bool, err error) {
	switch {
	case len(val) == 0:
		return objstore.ID{}, true, nil
	case len(val) == len(id):
		copy(id[:], val)
		return id, false, nil
	case len(val) != 1 || val[0] != bidxInVersion[0]:
		return objstore.ID{}, false, fmt.Errorf("%w: block index entry %s@%d of %s has a value of %d bytes", objstore.ErrCorrupt, block, seq, doc, len(val))
	}
	if v == nil {
		lr, err := r.logEntry(doc, seq)
		if err != nil {
			return objstore.ID{}, false, err
		}
		if v, err = r.objs.GetVersion(lr.Hash); err != nil {
			return objstore.ID{}, false, fmt.Errorf("read version %s of %s for block %s: %w", lr.Label, doc, block, err)
		}
	}
	for _, e := range v.Blocks {
		if e.ID == block {
			return e.Content, false, nil
		}
	}
	return objstore.ID{}, false, fmt.Errorf("%w: block index names block %s in version %d of %s, which does not hold it: run folio fsck", objstore.ErrCorrupt, block, seq, doc)
}
func idemKey(doc, key string) []byte { return kv.TableKey("idem", doc, key) }

func getRec(r kv.Reader, key []byte, v any) (bool, error) {
	data, err := kv.Get(r, key)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := kv.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", key, err)
	}
	return true, nil
}

func setRec(b *kv.Batch, key []byte, v any) error {
	data, err := kv.Marshal(v)
	if err != nil {
		return err
	}
	return b.Set(key, data)
}

func (r *Repo) loadDoc(doc string) (*docRec, error) {
	if d, ok := r.docs.get(doc); ok {
		return visible(d)
	}
	d, err := r.readDoc(doc)
	if err != nil {
		return nil, err
	}
	return visible(d)
}

// visible is d, or a *NotFoundError when d is deleted: a deleted document
// is answered exactly as a missing one.
func visible(d *docRec) (*docRec, error) {
	if d.Deleted != 0 {
		return nil, &NotFoundError{What: "document", Name: d.ID}
	}
	return d, nil
}

// lockedDoc is loadDoc for a writer, under the document lock: a record
// read from the store is kept for the next change.
func (r *Repo) lockedDoc(doc string) (*docRec, error) {
	if d, ok := r.docs.get(doc); ok {
		return visible(d)
	}
	d, err := r.readDoc(doc)
	if err != nil {
		return nil, err
	}
	r.docs.set(d)
	return visible(d)
}

func (r *Repo) readDoc(doc string) (*docRec, error) {
	var d docRec
	ok, err := getRec(r.db, docKey(doc), &d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &NotFoundError{What: "document", Name: doc}
	}
	return &d, nil
}

// docCache keeps document records between changes, so that a save does
// not read its document's record from the store. Only writers fill and
// update it, under the document lock and after their batch committed
// (lockedDoc, docCache.set); a writer that cannot tell whether its batch
// committed forgets the record. Readers take what it holds, else read the
// store without filling it, so they never put back a record older than a
// writer's. Records are copied in and out: callers own what they get.
type docCache struct {
	mu   sync.Mutex
	recs map[string]docRec
}

// maxCachedDocs bounds docCache (about 200 bytes a record); over it, the
// cache starts again empty.
const maxCachedDocs = 1 << 16

func (c *docCache) get(doc string) (*docRec, bool) {
	c.mu.Lock()
	d, ok := c.recs[doc]
	c.mu.Unlock()
	return &d, ok
}

func (c *docCache) set(d *docRec) {
	c.mu.Lock()
	if len(c.recs) >= maxCachedDocs {
		clear(c.recs)
	}
	c.recs[d.ID] = *d
	c.mu.Unlock()
}

func (c *docCache) forget(doc string) {
	c.mu.Lock()
	delete(c.recs, doc)
	c.mu.Unlock()
}

func (c *docCache) forgetAll() {
	c.mu.Lock()
	clear(c.recs)
	c.mu.Unlock()
}

// loadDraft returns doc's draft for a change, under the document lock:
// the one the last change left in memory, or the stored one. The caller
// owns it and gives it back with keepDraft after its change committed.
func (r *Repo) loadDraft(doc string) (*draftRec, error) {
	if dr := r.drafts.take(doc); dr != nil {
		return dr, nil
	}
	return readDraft(r.db, doc)
}

// keepDraft keeps dr, the draft a committed change left, for the next.
func (r *Repo) keepDraft(doc string, dr *draftRec) { r.drafts.keep(doc, dr) }

// readDraftSnapshot reads doc's draft outside the document lock, from one
// snapshot of the store.
func (r *Repo) readDraftSnapshot(doc string) (*draftRec, error) {
	snap := r.db.NewSnapshot()
	defer snap.Close()
	return readDraft(snap, doc)
}

// readDraftHeader reads doc's draft header alone: what the draft says
// about itself (seq, fingerprint, base, unsealed), not its blocks.
func (r *Repo) readDraftHeader(doc string) (*draftRec, error) {
	var dr draftRec
	ok, err := getRec(r.db, draftKey(doc), &dr)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("document %s has no draft record: run folio fsck", doc)
	}
	return &dr, nil
}

// --- content ------------------------------------------------------------

// block returns the decoded content id with the block id set.
func (r *Repo) block(id objstore.ID, blockID string) (flowdoc.Block, error) {
	r.cacheMu.Lock()
	b, ok := r.cache[id]
	r.cacheMu.Unlock()
	if !ok {
		data, err := r.objs.GetContent(id)
		if err != nil {
			return flowdoc.Block{}, fmt.Errorf("block %s: %w", blockID, err)
		}
		if b, err = objstore.DecodeContent(data); err != nil {
			return flowdoc.Block{}, fmt.Errorf("block %s content %s: %w", blockID, id.Short(), err)
		}
		r.cacheMu.Lock()
		if len(r.cache) >= r.cacheN {
			clear(r.cache)
		}
		r.cache[id] = b
		r.cacheMu.Unlock()
	}
	c := b.Clone()
	c.ID = blockID
	return c, nil
}

// materialize builds a document from (id, content) entries.
func (r *Repo) materialize(entries []objstore.BlockEntry) (flowdoc.Document, error) {
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: make([]flowdoc.Block, len(entries))}
	for i, e := range entries {
		b, err := r.block(e.Content, e.ID)
		if err != nil {
			return flowdoc.Document{}, err
		}
		d.Blocks[i] = b
	}
	return d, nil
}

// putSlots gives every slot with a new Block its content id and meta
// (unless encodeSlots did), writes the content objects that are new into
// b, and returns the entries.
func (r *Repo) putSlots(b *kv.Batch, owner string, slots []slot) ([]objstore.BlockEntry, error) {
	out := make([]objstore.BlockEntry, len(slots))
	for i := range slots {
		s := &slots[i]
		if s.Block != nil {
			if s.enc == nil {
				s.give(encodeBlock(*s.Block))
			}
			if s.Content != s.prev {
				if err := r.objs.PutEncoded(b, *s.enc); err != nil {
					return nil, err
				}
				if err := r.noteAssets(owner, s.Block); err != nil {
					return nil, err
				}
			}
		}
		out[i] = objstore.BlockEntry{ID: s.ID, Content: s.Content}
	}
	return out, nil
}

// encodeSlots encodes the new content of slots ahead of the document lock.
func encodeSlots(ctx context.Context, slots []slot) error {
	for i := range slots {
		if i%256 == 0 {
			if err := ctxErr(ctx); err != nil {
				return err
			}
		}
		if s := &slots[i]; s.Block != nil && s.enc == nil {
			s.give(encodeBlock(*s.Block))
		}
	}
	return nil
}

// slotsOf makes slots that give every block of body new content.
func slotsOf(body flowdoc.Document) []slot {
	out := make([]slot, len(body.Blocks))
	for i := range body.Blocks {
		out[i] = slot{draftBlock: draftBlock{ID: body.Blocks[i].ID}, Block: &body.Blocks[i]}
	}
	return out
}

func fingerprintOf(entries []objstore.BlockEntry) flowdoc.Fingerprint {
	hs := make([]flowdoc.BlockHash, len(entries))
	for i, e := range entries {
		hs[i] = flowdoc.BlockHash{ID: e.ID, Hash: e.Content}
	}
	return flowdoc.FingerprintOfHashes(hs)
}

func invalid(ps []flowdoc.Problem) error {
	return &flowdoc.ValidationError{Problems: ps}
}

// normalize sanitizes and validates a body.
func (r *Repo) normalize(d flowdoc.Document) (flowdoc.Document, error) {
	n, err := flowdoc.Normalize(d, r.limits)
	if err != nil {
		return flowdoc.Document{}, errs.Wrap(errs.Invalid, err)
	}
	return n, nil
}

func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}
