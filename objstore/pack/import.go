package pack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// BackupPrefix starts every backup namespace: refs imported with
// ImportOptions.Into = "backup/NAME" are stored as "backup/NAME/docs/<id>/head".
const BackupPrefix = "backup/"

var backupName = regexp.MustCompile(`^backup/[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Reindexer rebuilds a document's projections (document record, log, label
// and block-revision indexes, a clean draft) from its head version. Import
// calls it for every document whose head it moved.
type Reindexer func(ctx context.Context, doc string) error

// Indexer adds to b the projections of document doc at head.
type Indexer func(ctx context.Context, b *kv.Batch, doc string, head objstore.ID) error

// ImportOptions tune Import.
type ImportOptions struct {
	// Into, when set ("backup/NAME"), stores the pack's refs under that
	// namespace instead of moving document heads; they are set to the
	// pack's values whatever they were, and no projection is rebuilt.
	Into string
	// Index, when set, adds the projections of each document whose head
	// moves to the batch that moves the heads, so heads and projections
	// change together or not at all (repo.IndexInto).
	Index Indexer
	// Reindex is called after the move for each document whose head moved,
	// when Index is nil. Nil skips it and ImportResult.NotReindexed lists
	// those documents.
	Reindex Reindexer
	// Message is recorded in the reflog of every moved ref.
	Message string
	// Progress, when set, is told of the objects verified and imported
	// (of the pack header's count); it must return quickly.
	Progress Progress
}

// Progress reports how far a long job has come: done of total items of
// what (total 0 when not known). It has the signature of repo.Progress.
type Progress func(what string, done, total int64)

func (p Progress) report(what string, done, total uint64) {
	if p == nil {
		return
	}
	if total == Streamed {
		total = 0
	}
	p(what, int64(done), int64(total))
}

// RefAction says what Import did with one ref.
type RefAction string

// Ref actions.
const (
	RefCreated   RefAction = "created"   // did not exist
	RefForwarded RefAction = "forwarded" // moved to a descendant
	RefUnchanged RefAction = "unchanged" // already there
	RefAhead     RefAction = "ahead"     // the store's head already descends from the pack's
	RefSet       RefAction = "set"       // backup namespace: set to the pack's value
)

// RefResult is what Import did with one ref of the pack.
type RefResult struct {
	Name   string      `json:"name"` // the ref in this store
	Old    objstore.ID `json:"old"`
	New    objstore.ID `json:"new"`
	Action RefAction   `json:"action"`
}

// ImportResult describes an import.
type ImportResult struct {
	Objects      uint64      `json:"objects"`   // entries in the pack
	New          uint64      `json:"new"`       // of those, objects the store lacked
	RawBytes     uint64      `json:"rawBytes"`  // canonical bytes of the entries
	PackBytes    int64       `json:"packBytes"` // bytes of the pack
	Refs         []RefResult `json:"refs"`      // one per ref of the pack
	NotReindexed []string    `json:"notReindexed,omitempty"`
}

// VerifyResult describes a verified pack.
type VerifyResult struct {
	Header    Header
	Objects   uint64
	RawBytes  uint64
	PackBytes int64
	Kinds     map[objstore.Kind]uint64
}

// Verify reads the whole pack in r and checks its structure, every
// object's hash, that it is one msgpack value that decodes into its kind
// within the bounds of docs/objects.md (objstore.CheckBounds), the object
// count and the trailer checksum. It writes nothing and holds at most one
// chunk in memory.
func Verify(ctx context.Context, r io.Reader) (VerifyResult, error) {
	return verify(ctx, r, nil)
}

func verify(ctx context.Context, r io.Reader, progress Progress) (VerifyResult, error) {
	var res VerifyResult
	pr, err := NewReader(r)
	if err != nil {
		return res, err
	}
	defer pr.Close()
	res.Header = pr.Header()
	res.Kinds = map[objstore.Kind]uint64{}
	for {
		if pr.Count()%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		e, err := pr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
		if err := objstore.CheckBounds(e.Kind, e.Data); err != nil {
			return res, pr.entryError(e, err)
		}
		res.Kinds[e.Kind]++
		progress.report("objects verified", pr.Count(), res.Header.Count)
	}
	res.Objects, res.RawBytes, res.PackBytes = pr.Count(), pr.RawBytes(), pr.Offset()
	return res, nil
}

// Import adds the pack in r to the store and then moves its refs.
//
// Order of events: when r is an io.ReadSeeker (a file) the whole pack is
// verified first (Verify) and nothing is written unless it is valid; then
// it is read again and objects are written in batches, each object's hash
// and references checked again. Only after the trailer verified and every
// ref target is present are refs moved, all in one synced batch: either
// every ref of the pack moves or none does. When r cannot seek, objects are
// written while the pack is read; a bad pack then leaves some unreferenced
// objects behind (harmless, removed by gc) but moves no ref.
//
// Document heads move only forward: a pack head that does not descend
// from (or equal) the current head is refused with ErrRefused, unless
// o.Into names a backup namespace. Importing the same pack twice changes
// nothing the second time.
func Import(ctx context.Context, s Stores, r io.Reader, o ImportOptions) (ImportResult, error) {
	var res ImportResult
	if o.Into != "" {
		o.Into = strings.TrimSuffix(o.Into, "/")
		if !backupName.MatchString(o.Into) {
			return res, fmt.Errorf("%w: --into %q: want backup/NAME with NAME of letters, digits, '.', '_' or '-'", ErrRefused, o.Into)
		}
	}
	if rs, ok := r.(io.ReadSeeker); ok {
		start, err := rs.Seek(0, io.SeekCurrent)
		if err == nil {
			if _, err := verify(ctx, rs, o.Progress); err != nil {
				return res, err
			}
			if _, err := rs.Seek(start, io.SeekStart); err != nil {
				return res, fmt.Errorf("pack: rewind: %w", err)
			}
		}
	}
	pr, err := NewReader(r)
	if err != nil {
		return res, err
	}
	defer pr.Close()
	moved, err := stageAndMove(ctx, s, pr, o, &res)
	if err != nil {
		return res, err
	}
	// Reindex takes its own write pass; ours is released by now.
	for _, doc := range moved {
		if o.Index != nil {
			break // indexed in the batch that moved the heads
		}
		if o.Reindex == nil {
			res.NotReindexed = append(res.NotReindexed, doc)
			continue
		}
		if err := o.Reindex(ctx, doc); err != nil {
			return res, fmt.Errorf("pack: heads moved, but rebuilding document %s's indexes failed: %w", doc, err)
		}
	}
	return res, nil
}

// stageAndMove writes the pack's objects and moves its refs under one
// write pass (kv.DB.WritePass): staged objects are unreachable until the
// refs move, so a garbage collection must not sweep between the two. A
// collection that starts meanwhile waits for the import; one already
// marking keeps every object the import looks up or writes. It returns the
// documents whose heads moved.
func stageAndMove(ctx context.Context, s Stores, pr *Reader, o ImportOptions, res *ImportResult) ([]string, error) {
	release := s.DB.WritePass()
	defer release()
	plan, err := planRefs(s, pr.Header().Refs, o.Into)
	if err != nil {
		return nil, err
	}
	if res.New, err = stageObjects(ctx, s, pr, o.Progress); err != nil {
		return nil, err
	}
	res.Objects, res.RawBytes, res.PackBytes = pr.Count(), pr.RawBytes(), pr.Offset()
	if err := checkPlan(s, plan, o.Into); err != nil {
		return nil, err
	}
	var ups []refs.Update
	var moved []string
	b := s.DB.NewBatch()
	for _, p := range plan {
		res.Refs = append(res.Refs, p.RefResult)
		if p.Action == RefCreated || p.Action == RefForwarded || p.Action == RefSet {
			ups = append(ups, refs.Update{Name: p.Name, Old: p.Old, New: p.New})
			if o.Into == "" && !p.published {
				moved = append(moved, p.doc)
				if o.Index != nil {
					if err := o.Index(ctx, b, p.doc, p.New); err != nil {
						b.Close()
						return nil, fmt.Errorf("pack: index document %s: %w; nothing moved", p.doc, err)
					}
				}
			}
		}
	}
	if len(ups) == 0 {
		b.Close()
	} else {
		msg := o.Message
		if msg == "" {
			msg = "pack import"
		}
		if err := s.Refs.Update(b, ups, msg); err != nil {
			if errors.Is(err, refs.ErrConflict) {
				return nil, fmt.Errorf("pack: a head moved while importing (is a daemon writing to this store?); nothing moved, run the import again: %w", err)
			}
			return nil, fmt.Errorf("pack: move refs: %w", err)
		}
	}
	return moved, nil
}

// refPlan is what Import intends for one ref of the pack.
type refPlan struct {
	RefResult
	doc       string
	published bool // a published ref, not a head
}

// planRefs checks the pack's ref names and decides what can already be
// decided before any object is written: refs that cannot be document
// heads are refused, and heads whose pack value is already in the store
// are checked for forward movement now, so that a refusal writes nothing.
func planRefs(s Stores, packRefs []Ref, into string) ([]refPlan, error) {
	var plan []refPlan
	for _, r := range packRefs {
		doc, ok := DocOfRef(r.Name)
		published := false
		if !ok {
			if doc, ok = DocOfPublishedRef(r.Name); !ok {
				return nil, fmt.Errorf("%w: the pack carries ref %q, which is neither a document head (docs/<id>/head) nor a published ref (docs/<id>/published)", ErrRefused, r.Name)
			}
			published = true
		}
		name := r.Name
		if into != "" {
			name = into + "/" + r.Name
		}
		cur, err := s.Refs.Get(name)
		if err != nil && !errors.Is(err, refs.ErrNotFound) {
			return nil, err
		}
		p := refPlan{RefResult: RefResult{Name: name, Old: cur, New: r.ID}, doc: doc, published: published}
		plan = append(plan, p)
	}
	if err := decide(s, plan, into, false); err != nil {
		return nil, err
	}
	return plan, nil
}

// checkPlan runs after the objects are staged: every ref target must be a
// version of its document, and every head must move forward.
func checkPlan(s Stores, plan []refPlan, into string) error {
	for _, p := range plan {
		s.DB.Touch(objstore.Key(p.New))
		v, err := s.Objects.GetVersion(p.New)
		if err != nil {
			return fmt.Errorf("%w: ref %s points at %s, which is neither in the pack nor in this store: %v", ErrIncomplete, p.Name, p.New.Short(), err)
		}
		if v.Doc != p.doc {
			return fmt.Errorf("%w: ref %s points at a version of document %q", ErrRefused, p.Name, v.Doc)
		}
	}
	return decide(s, plan, into, true)
}

// decide sets each plan's action. With final false, heads whose new value
// is not yet in the store are left undecided.
func decide(s Stores, plan []refPlan, into string, final bool) error {
	var refused []string
	for i := range plan {
		p := &plan[i]
		switch {
		case p.Old == p.New:
			p.Action = RefUnchanged
			continue
		case into != "":
			p.Action = RefSet
			continue
		case p.Old.IsZero():
			p.Action = RefCreated
			continue
		}
		if !final {
			if ok, err := s.Objects.Has(p.New); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
		}
		fwd, err := s.Objects.IsAncestor(p.Old, p.New)
		if err != nil {
			return fmt.Errorf("pack: check %s moves forward: %w", p.Name, err)
		}
		if fwd {
			p.Action = RefForwarded
			continue
		}
		back, err := s.Objects.IsAncestor(p.New, p.Old)
		if err != nil {
			return fmt.Errorf("pack: check %s moves forward: %w", p.Name, err)
		}
		if back {
			p.Action = RefAhead
			continue
		}
		refused = append(refused, fmt.Sprintf("%s: the pack's head %s does not descend from this store's head %s",
			p.Name, describe(s.Objects, p.New), describe(s.Objects, p.Old)))
	}
	if len(refused) > 0 {
		return fmt.Errorf("%w: refs would move backwards or sideways, nothing moved:\n  %s\n"+
			"this store has history the pack lacks; to keep both, import into a separate namespace with --into backup/NAME",
			ErrRefused, strings.Join(refused, "\n  "))
	}
	return nil
}

func describe(objs *objstore.Store, id objstore.ID) string {
	v, err := objs.GetVersion(id)
	if err != nil {
		return id.Short()
	}
	return fmt.Sprintf("%s (%s)", v.Label, id.Short())
}

// decodeEntry decodes e, the entry just returned by Next, as its kind
// (bounded: a crafted object is an error, never an allocation it does not
// pay for) and returns the ids it references. Content, which references
// nothing but assets, is checked against the bounds (objstore.CheckBounds)
// and decoded only when it names an asset; an asset is checked to be of the
// type it records (objstore.CheckAsset). An
// entry that does not decode is a *FormatError naming it.
func (r *Reader) decodeEntry(e Entry) ([]objstore.ID, error) {
	var refs []objstore.ID
	var err error
	switch e.Kind {
	case objstore.KindContent:
		if err = objstore.CheckBounds(e.Kind, e.Data); err == nil {
			refs, err = objstore.References(e.Kind, e.Data) // the assets it names
		}
	case objstore.KindAsset:
		err = objstore.CheckAsset(e.Data) // its recorded type is its bytes' type
	default:
		refs, err = objstore.References(e.Kind, e.Data)
	}
	if err != nil {
		return nil, r.entryError(e, err)
	}
	return refs, nil
}

// entryError is the *FormatError for entry e (just returned by Next) that
// does not decode.
func (r *Reader) entryError(e Entry, err error) error {
	return &FormatError{Offset: r.chunkOff, Entry: r.Count(),
		Reason: fmt.Sprintf("%s %s does not decode: %v", e.Kind, e.ID.Short(), err)}
}

// recentMax bounds the set of ids Import remembers from the pack to check
// references without a store read; it is reset after each batch commit.
const (
	recentMax  = 1 << 16
	batchBytes = 8 << 20
)

// stageObjects writes the pack's objects in batches and checks that each
// one's references are already known: earlier in the pack or in the
// store. It returns how many objects the store lacked. It returns only
// after the trailer verified (the Reader's io.EOF).
func stageObjects(ctx context.Context, s Stores, pr *Reader, progress Progress) (uint64, error) {
	var added uint64
	recent := make(map[objstore.ID]struct{}, 1024)
	b := s.DB.NewBatch()
	defer func() {
		if b != nil {
			b.Close()
		}
	}()
	commit := func(opts bool) error {
		wo := kv.NoSync
		if opts {
			wo = kv.Sync
		}
		if err := s.DB.Apply(b, wo); err != nil {
			return fmt.Errorf("pack: write objects: %w", err)
		}
		b.Close()
		b = s.DB.NewBatch()
		if len(recent) > recentMax {
			clear(recent)
		}
		return nil
	}
	for {
		if pr.Count()%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return added, err
			}
		}
		e, err := pr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return added, err
		}
		refsOf, err := pr.decodeEntry(e)
		if err != nil {
			return added, err
		}
		for _, ref := range refsOf {
			if _, ok := recent[ref]; ok {
				continue
			}
			s.DB.Touch(objstore.Key(ref)) // a collection in progress must keep it
			ok, err := s.Objects.Has(ref)
			if err != nil {
				return added, err
			}
			if !ok {
				return added, fmt.Errorf("%w: %s %s (entry %d) references %s, which is neither earlier in the pack nor in this store; "+
					"the pack was made for a store that has more (its haves) — import a full pack first", ErrIncomplete, e.Kind, e.ID.Short(), pr.Count(), ref.Short())
			}
			recent[ref] = struct{}{}
		}
		if _, ok := recent[e.ID]; !ok {
			// Put looks the object up (touching it for a collection in
			// progress) and adds records only when the store lacks it.
			n := b.Count()
			if _, err := s.Objects.Put(b, e.Kind, e.Data); err != nil {
				return added, fmt.Errorf("pack: stage %s: %w", e.ID.Short(), err)
			}
			if b.Count() > n {
				added++
			}
			recent[e.ID] = struct{}{}
		}
		progress.report("objects imported", pr.Count(), pr.Header().Count)
		if b.Len() >= batchBytes {
			if err := commit(false); err != nil {
				return added, err
			}
		}
	}
	return added, commit(true)
}
