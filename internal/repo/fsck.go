package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// FsckProblem is one integrity problem.
type FsckProblem struct {
	Object  string `json:"object,omitempty"` // object id, when the problem is an object's
	Doc     string `json:"doc,omitempty"`
	Problem string `json:"problem"`
}

// FsckReport is the result of Fsck.
type FsckReport struct {
	OK       bool          `json:"ok"`
	Objects  int           `json:"objects"`
	Docs     int           `json:"docs"`
	Versions int           `json:"versions"`
	Problems []FsckProblem `json:"problems"`
	// Damaged is set when a table file of the store is damaged (a
	// checksum mismatch): what it held must come from a backup.
	Damaged bool `json:"damaged,omitempty"`
}

// FsckOptions tune Fsck.
type FsckOptions struct {
	// Progress, when set, is told of every object and document checked.
	Progress Progress
}

// Fsck checks the whole store: every object's hash and references; for
// every document its head ref, records, every version in its log (object
// present, label index, parents, block contents, txn), the block-revision
// index against the versions, and the draft's contents.
//
// It costs time linear in the objects (and in the versions' block lists):
// objects stored whole are checked as they are listed; versions stored as
// deltas and transactions stored by reference are checked where they are
// cheap to read, with their document's history oldest first (each version
// then costs one delta against its parent, just read), and whatever no
// document reaches in delta-chain order afterwards. Each content object is
// looked up once however many versions name it.
func (r *Repo) Fsck(ctx context.Context, o FsckOptions) (FsckReport, error) {
	progress := o.Progress.orNop()
	rep := FsckReport{Problems: []FsckProblem{}}
	add := func(obj, doc, format string, args ...any) {
		rep.Problems = append(rep.Problems, FsckProblem{Object: obj, Doc: doc, Problem: fmt.Sprintf(format, args...)})
	}
	snap := r.db.NewSnapshot()
	defer snap.Close()

	// Objects.
	f := &fsckState{deferred: map[objstore.ID]int{}, present: map[objstore.ID]bool{}}
	p := []byte(kv.PrefixObject)
	lower := p
	var prev []byte // where the last damaged block stopped the scan
	level, reported := 0, map[string]bool{}
	for {
		last, err := r.fsckObjects(ctx, snap, lower, &rep, add, f, progress)
		if err == nil {
			break
		}
		if !kv.IsCorruption(err) {
			return rep, err
		}
		// A damaged table file: say so (once per distinct error), and go
		// on after the damaged block, so that every object that can
		// still be read is checked (and the histories below name the
		// objects that cannot).
		if !reported[err.Error()] {
			reported[err.Error()] = true
			add("", "", "the store is damaged: %v", err)
		}
		rep.Damaged = true
		if last == nil {
			last = prev
		}
		if bytes.Equal(last, prev) {
			level++ // the same block again: skip further
		} else {
			level = 0
		}
		prev = append([]byte(nil), last...)
		if lower = skipPast(p, last, level); lower == nil {
			break
		}
	}

	// Documents.
	docs, err := r.ListDocs(ctx, "")
	if err != nil {
		if !kv.IsCorruption(err) {
			return rep, err
		}
		add("", "", "the document records are damaged: %v", err)
		rep.Damaged = true
		docs = nil
	}
	known := map[string]bool{}
	// Deleted documents keep their refs until gc purges them; their
	// objects are verified below with the others outside histories.
	deleted, err := r.ListDeleted(ctx, "")
	if err != nil {
		return rep, err
	}
	for _, dd := range deleted {
		known[dd.ID] = true
	}
	for _, di := range docs {
		if err := ctxErr(ctx); err != nil {
			return rep, err
		}
		known[di.ID] = true
		rep.Docs++
		r.fsckDoc(ctx, di.ID, &rep, add, f)
		progress("documents", int64(rep.Docs), int64(len(docs)))
	}
	// Refs that name documents without records.
	_, names, err := r.refs.List("docs/")
	if err != nil {
		return rep, err
	}
	for _, n := range names {
		doc, _, _ := strings.Cut(strings.TrimPrefix(n, "docs/"), "/") // docs/<id>/head, docs/<id>/published
		if !known[doc] {
			add("", doc, "ref %s has no document record (run folio reindex %s)", n, doc)
		}
	}

	// Deltas and compact transactions no document reached (history under
	// other refs, unreachable leftovers): shallowest first, so that each
	// one's base was read just before; transactions after their versions.
	rest := make([]objstore.ID, 0, len(f.deferred))
	for id := range f.deferred {
		rest = append(rest, id)
	}
	sort.Slice(rest, func(i, j int) bool {
		di, dj := f.deferred[rest[i]], f.deferred[rest[j]]
		if di < 0 || dj < 0 {
			return di > dj // transactions (-1) last
		}
		if di != dj {
			return di < dj
		}
		return bytes.Compare(rest[i][:], rest[j][:]) < 0
	})
	for i, id := range rest {
		if i%256 == 0 {
			if err := ctxErr(ctx); err != nil {
				return rep, err
			}
		}
		if _, err := r.objs.Verify(id); err != nil {
			add(id.String(), "", "%v", err)
		}
		progress("objects outside histories", int64(i+1), int64(len(rest)))
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Doc < rep.Problems[j].Doc })
	rep.OK = len(rep.Problems) == 0
	return rep, nil
}

// fsckObjects checks the objects from key lower on; it returns the last
// key it read and the iterator's error (a damaged table stops it there).
func (r *Repo) fsckObjects(ctx context.Context, snap *kv.Snapshot, lower []byte, rep *FsckReport,
	add func(obj, doc, format string, args ...any), f *fsckState, progress Progress) ([]byte, error) {
	p := []byte(kv.PrefixObject)
	it, err := snap.NewIter(&kv.IterOptions{LowerBound: lower, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	var last []byte
	for it.First(); it.Valid(); it.Next() {
		if rep.Objects%1024 == 0 {
			if err := ctxErr(ctx); err != nil {
				it.Close()
				return last, err
			}
		}
		last = append(last[:0], it.Key()...)
		rep.Objects++
		progress("objects", int64(rep.Objects), 0)
		var id objstore.ID
		if len(it.Key()) != len(p)+len(id) {
			add("", "", "malformed object key %x", it.Key())
			continue
		}
		copy(id[:], it.Key()[len(p):])
		if d := objstore.ReadDepth(it.Value()); d != 0 {
			f.deferred[id] = d // checked with its history, below
			continue
		}
		if _, err := r.objs.Verify(id); err != nil {
			add(id.String(), "", "%v", err)
		}
	}
	return last, it.Close()
}

// skipPast is the first key to try after a damaged block that holds the
// keys after last (nil: from the first key of prefix p): last with its
// byte level places from the end grown by one and the rest dropped, so
// that each failure in the same place skips 256 times further; nil when
// nothing is left to try.
func skipPast(p, last []byte, level int) []byte {
	if last == nil {
		last = append(append([]byte(nil), p...), make([]byte, len(objstore.ID{}))...)
	}
	for i := len(last) - 1 - level; i >= len(p); i-- {
		if last[i] < 0xff {
			k := append([]byte(nil), last[:i+1]...)
			k[i]++
			return k
		}
	}
	return nil
}

// fsckState is what Fsck carries from one document to the next.
type fsckState struct {
	deferred map[objstore.ID]int  // objects not yet checked: objstore.ReadDepth of each
	present  map[objstore.ID]bool // content objects looked up: whether they exist
}

// has looks up a content object once per fsck.
func (f *fsckState) has(r *Repo, id objstore.ID) bool {
	ok, seen := f.present[id]
	if !seen {
		var err error
		ok, err = r.objs.Has(id)
		ok = ok && err == nil
		f.present[id] = ok
	}
	return ok
}

func (r *Repo) fsckDoc(ctx context.Context, doc string, rep *FsckReport, add func(obj, doc, format string, args ...any), f *fsckState) {
	d, err := r.loadDoc(doc)
	if err != nil {
		add("", doc, "document record: %v", err)
		return
	}
	head, err := r.refs.Get(HeadRef(doc))
	if err != nil {
		add("", doc, "head ref: %v", err)
		return
	}
	if head != d.Head {
		add(head.String(), doc, "head ref %s differs from the document record's head %s", head.Short(), d.Head.Short())
	}
	entries, err := r.Log(ctx, doc, 0, 0)
	if err == nil {
		r.fsckPublished(doc, entries, add)
	}
	if err != nil {
		add("", doc, "log: %v", err)
		return
	}
	if uint64(len(entries)) != d.Seq {
		add("", doc, "log has %d entries, the document record says %d versions", len(entries), d.Seq)
	}
	// Oldest first: rebuild the expected block index as we go.
	expect := map[string]map[uint64]objstore.ID{}
	var prev *objstore.Version
	var prevID objstore.ID
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		rep.Versions++
		if rep.Versions%256 == 0 && ctxErr(ctx) != nil {
			return // Fsck reports the cancellation
		}
		v, err := r.objs.GetVersion(e.Hash) // a delta is rebuilt from prev, and checked against its id
		if err != nil {
			add(e.Hash.String(), doc, "version %s: %v", e.Label, err)
			delete(f.deferred, e.Hash)
			prev = nil
			continue
		}
		delete(f.deferred, e.Hash) // its references are checked below
		if v.Label != e.Label || v.Seq != e.Seq || v.Doc != doc {
			add(e.Hash.String(), doc, "version %s: object says %s seq %d of %s", e.Label, v.Label, v.Seq, v.Doc)
		}
		if v, err := kv.Get(r.db, vlabelKey(doc, e.Label)); err != nil || kv.ParseUint64(v) != e.Seq {
			add(e.Hash.String(), doc, "label index of %s is wrong", e.Label)
		}
		if prev != nil && (len(v.Parents) == 0 || v.Parents[0] != prevID) {
			add(e.Hash.String(), doc, "version %s does not name %s as its parent", e.Label, prev.Label)
		}
		for _, b := range v.Blocks {
			if !f.has(r, b.Content) {
				add(b.Content.String(), doc, "version %s block %s: content object missing", e.Label, b.ID)
			}
		}
		if fingerprintOf(v.Blocks) != v.Fingerprint {
			add(e.Hash.String(), doc, "version %s: fingerprint does not match its blocks", e.Label)
		}
		if _, deferred := f.deferred[v.Txn]; deferred {
			// Stored by reference to v, just read: cheap now.
			delete(f.deferred, v.Txn)
			if _, err := r.objs.Verify(v.Txn); err != nil {
				add(v.Txn.String(), doc, "version %s txn: %v", e.Label, err)
			}
		} else if _, err := r.objs.GetTxn(v.Txn); err != nil {
			add(v.Txn.String(), doc, "version %s txn: %v", e.Label, err)
		}
		for _, ev := range blockEvents(prev, v.Blocks, "") {
			if ev.Op == objstore.EventMove {
				continue
			}
			m := expect[ev.BlockID]
			if m == nil {
				m = map[uint64]objstore.ID{}
				expect[ev.BlockID] = m
			}
			m[v.Seq] = ev.After
		}
		prev, prevID = v, e.Hash
	}
	// The block index must hold exactly the expected entries.
	p := append(kv.TableKey("bidx", doc), 0)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		add("", doc, "block index: %v", err)
		return
	}
	defer it.Close()
	got := 0
	for it.First(); it.Valid(); it.Next() {
		rest := it.Key()[len(p):]
		i := bytes.IndexByte(rest, 0)
		if i < 0 || len(rest)-i-1 != 8 {
			add("", doc, "malformed block index key %q", it.Key())
			continue
		}
		block, seq := string(rest[:i]), kv.ParseUint64(rest)
		want, ok := expect[block][seq]
		var val objstore.ID
		switch v := it.Value(); {
		case len(v) == 1 && v[0] == bidxInVersion[0] && ok && !want.IsZero():
			val = want // in the version, which the walk above read
		case len(v) == len(val):
			copy(val[:], v)
		case len(v) != 0:
			ok = false
		}
		if !ok || want != val {
			add("", doc, "block index entry %s@%d does not match the versions", block, seq)
			continue
		}
		got++
	}
	n := 0
	for _, m := range expect {
		n += len(m)
	}
	if got != n {
		add("", doc, "block index has %d valid entries, the versions imply %d", got, n)
	}
	r.fsckEvents(doc, add)
	// Draft.
	dr, err := r.readDraftSnapshot(doc)
	if err != nil {
		add("", doc, "draft: %v", err)
		return
	}
	for _, b := range dr.Blocks {
		if !f.has(r, b.Content) {
			add(b.Content.String(), doc, "draft block %s: content object missing", b.ID)
		}
	}
	if fingerprintOf(draftEntries(dr)) != dr.Fingerprint {
		add("", doc, "draft fingerprint does not match its blocks")
	}
	if dr.Base != d.Head {
		add(dr.Base.String(), doc, "draft is based on %s, head is %s", dr.Base.Short(), d.Head.Short())
	}
}

// fsckPublished checks the published ref, when there is one: it must name
// a version of the document's own history (one of its log entries).
func (r *Repo) fsckPublished(doc string, entries []VersionInfo, add func(obj, doc, format string, args ...any)) {
	pub, err := r.refs.Get(PublishedRef(doc))
	if errors.Is(err, refs.ErrNotFound) {
		return
	}
	if err != nil {
		add("", doc, "published ref: %v", err)
		return
	}
	for _, e := range entries {
		if e.Hash == pub {
			return
		}
	}
	add(pub.String(), doc, "published ref %s names no version in the document's log", pub.Short())
}

// fsckEvents checks that every event of doc's stream stored by reference
// (eventref.go) resolves: what a reader replaying the stream would be given.
func (r *Repo) fsckEvents(doc string, add func(obj, doc, format string, args ...any)) {
	name := Stream(doc)
	first, err := stream.FirstRetained(r.db, name)
	if err != nil {
		add("", doc, "stream: %v", err)
		return
	}
	for after := first - 1; ; {
		evs, err := stream.Read(r.db, name, after, 256)
		if err != nil {
			add("", doc, "stream after %d: %v", after, err)
			return
		}
		if len(evs) == 0 {
			return
		}
		for i := range evs {
			if !evs[i].Ref {
				continue
			}
			var next *stream.Event
			if i+1 < len(evs) {
				next = &evs[i+1]
			}
			seq, typ := evs[i].Seq, evs[i].Type
			if err := r.resolveEvent(name, &evs[i], next); err != nil {
				add("", doc, "stream event %d (%s): %v", seq, typ, err)
			}
		}
		after = evs[len(evs)-1].Seq
	}
}
