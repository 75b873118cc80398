package objstore

import (
	"errors"
	"fmt"

	"github.com/foliodev/folio/internal/kv"
)

// VisitFunc is called by Walk once per object with its canonical bytes,
// which it may keep. Returning an error stops the walk with that error.
type VisitFunc func(id ID, k Kind, data []byte) error

// Walk visits every object reachable from roots (versions reach their
// parents, block contents and transaction; transactions reach their base
// version and their events' contents) exactly once, except those reachable
// from stop: a pack built for a receiver that has the stop objects (its
// "haves") leaves out everything they already imply. Ids in stop that the
// store lacks are ignored; a missing object reachable from roots is
// ErrNotFound.
//
// Order: every object is visited after all objects it references, so a
// receiver that stores objects in visit order never holds an object whose
// references it lacks, and versions arrive parent first (which lets their
// deltas be used). Memory is proportional to the number of objects
// reached; stop costs a walk of its own closure.
func (s *Store) Walk(roots, stop []ID, fn VisitFunc) error {
	seen := map[ID]bool{}
	for _, id := range stop {
		if err := s.walk(id, seen, nil, true); err != nil {
			return err
		}
	}
	for _, id := range roots {
		if err := s.walk(id, seen, fn, false); err != nil {
			return err
		}
	}
	return nil
}

// Reachable returns the ids Walk(roots, stop, …) would visit, in its order.
func (s *Store) Reachable(roots, stop []ID) ([]ID, error) {
	var out []ID
	err := s.Walk(roots, stop, func(id ID, _ Kind, _ []byte) error {
		out = append(out, id)
		return nil
	})
	return out, err
}

// walk does an iterative post-order walk from root, marking ids in seen.
// lenient skips missing objects (for stop sets); fn may be nil.
//
// Memory stays proportional to what is reached, not to chain length times
// version size: a version's contents (leaves) are visited inline, its
// parents last, and a frame keeps only the references it has yet to
// follow when the walk descends from it.
func (s *Store) walk(root ID, seen map[ID]bool, fn VisitFunc, lenient bool) error {
	if seen[root] {
		return nil
	}
	type frame struct {
		id   ID
		refs []ID
		next int
	}
	var stack []frame
	// visit reads id; a leaf is emitted at once, anything else pushed.
	visit := func(id ID) error {
		seen[id] = true
		k, data, err := s.Get(id)
		if errors.Is(err, ErrNotFound) && lenient {
			return nil
		}
		if err != nil {
			return fmt.Errorf("walk: %w", err)
		}
		refs, err := walkOrder(k, data)
		if err != nil {
			return fmt.Errorf("walk: %s %s: %w", k, id.Short(), err)
		}
		if len(refs) == 0 {
			if fn != nil {
				return fn(id, k, data)
			}
			return nil
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			top.refs = append([]ID(nil), top.refs[top.next:]...)
			top.next = 0
		}
		stack = append(stack, frame{id: id, refs: refs})
		return nil
	}
	if err := visit(root); err != nil {
		return err
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.refs) {
			r := top.refs[top.next]
			top.next++
			if !seen[r] {
				if err := visit(r); err != nil {
					return err
				}
			}
			continue
		}
		id := top.id
		stack = stack[:len(stack)-1]
		if fn == nil {
			continue
		}
		// Read again rather than hold every object of a long chain in
		// memory; recent versions come from the cache.
		k, data, err := s.Get(id)
		if err != nil {
			return fmt.Errorf("walk: %w", err)
		}
		if err := fn(id, k, data); err != nil {
			return err
		}
	}
	return nil
}

// walkOrder is References with a version's parents moved last, so that a
// walk finishes a version's leaves before it descends the history.
func walkOrder(k Kind, data []byte) ([]ID, error) {
	refs, err := References(k, data)
	if err != nil || k != KindVersion {
		return refs, err
	}
	parents, err := versionParents(data)
	if err != nil {
		return nil, err
	}
	n := len(parents)
	return append(refs[n:], parents...), nil
}

// DefaultAncestorLimit is the bound IsAncestor walks within.
const DefaultAncestorLimit = 100_000

// IsAncestor reports whether version a is b or an ancestor of b, following
// parents from b breadth first through at most DefaultAncestorLimit
// versions. It returns ErrLimit when the bound is reached first, and
// ErrNotFound when a version on the way is missing.
func (s *Store) IsAncestor(a, b ID) (bool, error) {
	return s.IsAncestorWithin(a, b, DefaultAncestorLimit)
}

// IsAncestorWithin is IsAncestor with a bound of limit versions.
func (s *Store) IsAncestorWithin(a, b ID, limit int) (bool, error) {
	if limit <= 0 {
		limit = DefaultAncestorLimit
	}
	seen := map[ID]bool{b: true}
	queue := []ID{b}
	for n := 0; len(queue) > 0; n++ {
		id := queue[0]
		queue = queue[1:]
		if id == a {
			return true, nil
		}
		if n >= limit {
			return false, fmt.Errorf("%w: %s not found among %d ancestors of %s", ErrLimit, a.Short(), limit, b.Short())
		}
		k, data, err := s.Get(id)
		if err != nil {
			return false, err
		}
		if k != KindVersion {
			return false, fmt.Errorf("%w: %s is a %s, not a version", ErrCorrupt, id.Short(), k)
		}
		parents, err := versionParents(data)
		if err != nil {
			return false, err
		}
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// versionParents decodes only the parents of a version's canonical bytes.
func versionParents(data []byte) ([]ID, error) {
	var v struct {
		Parents []ID `msgpack:"parents,omitempty"`
	}
	if err := kv.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%w: decode version parents: %v", ErrCorrupt, err)
	}
	return v.Parents, nil
}

// StoredInfo describes how an object is stored, for ForEach.
type StoredInfo struct {
	Kind  Kind
	Codec byte // the codec byte, see docs/objects.md
	Size  int  // bytes of the stored value
	Base  ID   // the object this one is stored against (delta base or sealing version), or zero
	Depth int  // delta chain length for delta-coded versions, else 0
}

// ForEach calls fn for every object in the store in id order, without
// decoding or checking it (fsck and gc read or Verify what they need). It
// stops at the first error fn returns. Writes committed during the call
// may or may not be seen.
func (s *Store) ForEach(fn func(id ID, info StoredInfo) error) error {
	p := []byte(kv.PrefixObject)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		var id ID
		if len(k) != len(p)+len(id) {
			return fmt.Errorf("%w: object key %x has the wrong length", ErrCorrupt, k)
		}
		copy(id[:], k[len(p):])
		info, ref, err := parseStored(it.Value())
		if err == nil && info.Codec >= codecDelta {
			info.Base, err = s.resolveRef(id, info.Codec, ref)
			if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) {
				// What it is stored against is gone or damaged: nothing
				// to protect from Delete; Verify reports the object.
				info.Base, err = ID{}, nil
			}
		}
		if err != nil {
			return fmt.Errorf("object %s: %w", id.Short(), err)
		}
		if err := fn(id, info); err != nil {
			return err
		}
	}
	return it.Error()
}

// parseStored reads a stored value's header; ref is the prefix of the
// object it is stored against (codecs 2 and 3).
func parseStored(v []byte) (info StoredInfo, ref [refLen]byte, err error) {
	if len(v) < 2 {
		return info, ref, fmt.Errorf("%w: stored value too short", ErrCorrupt)
	}
	info = StoredInfo{Codec: v[0], Kind: Kind(v[1]), Size: len(v)}
	switch v[0] {
	case codecRaw, codecZstd:
	case codecDelta:
		h, err := parseDeltaHeader(v)
		if err != nil {
			return info, ref, err
		}
		ref, info.Depth = h.base, int(h.depth)
	case codecTxnOf:
		if len(v) < 2+refLen {
			return info, ref, fmt.Errorf("%w: compact txn truncated", ErrCorrupt)
		}
		ref = [refLen]byte(v[2 : 2+refLen])
	default:
		return info, ref, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, v[0])
	}
	return info, ref, nil
}

// resolveRef turns the reference prefix in object id's stored form into
// the full id of the object it is stored against: the only version with
// that prefix, or, should several share it, the first parent (a delta) or
// the version whose txn is id (a compact txn).
func (s *Store) resolveRef(id ID, codec byte, ref [refLen]byte) (ID, error) {
	src := newSource(s, nil)
	defer src.close()
	cands, err := src.withPrefix(ref[:])
	if err != nil {
		return ID{}, err
	}
	var versions []ID
	for _, c := range cands {
		if v, err := kv.Get(s.db, Key(c)); err == nil && len(v) >= 2 && Kind(v[1]) == KindVersion && c != id {
			versions = append(versions, c)
		}
	}
	if len(versions) == 1 {
		return versions[0], nil
	}
	if codec == codecDelta {
		_, data, err := s.getWith(id, src)
		if err != nil {
			return ID{}, err
		}
		if p, ok := firstParent(data); ok {
			return p, nil
		}
	} else {
		for _, c := range versions {
			if v, err := s.decodedVersion(c, src); err == nil && v.Txn == id {
				return c, nil
			}
		}
	}
	return ID{}, fmt.Errorf("%w: the object it is stored against (%x…) is missing", ErrCorrupt, ref[:])
}

// Delete adds the deletion of objects ids to b (gc uses it for objects
// that nothing reaches). The rule that keeps every remaining object
// readable: an object that another remaining object is stored against
// cannot be deleted alone. That is a version that is the delta base of a
// version not in ids, or the sealing version (or its first parent) of a
// transaction stored by reference and not in ids; Delete then adds nothing
// to b and returns ErrDeltaBase naming both. Since a delta's base is always
// its version's first parent and a compact transaction's version is the
// version that names it, deleting only unreachable objects never trips the
// rule.
//
// Delete scans every object's header once and reads no object, except a
// version stored whole that a remaining compact transaction is stored
// against (to learn its first parent); gc should call it once with the
// whole set. Runs of ids that are consecutive in the store's key order
// are deleted with one range deletion each. The caller must keep writers
// out until b commits (kv.DB.Exclusive): a key written meanwhile inside
// such a run would be deleted with it, and writers that may add versions
// on top of ids must not run either.
func (s *Store) Delete(b *kv.Batch, ids []ID) error {
	del := make(map[ID]bool, len(ids))
	for _, id := range ids {
		del[id] = true
	}
	type txnRef struct{ id, version ID }
	var txns []txnRef
	firstParents := map[ID]ID{} // versions stored as deltas: their base is their first parent
	var order []ID              // every object, in key order
	var dead []bool
	err := s.ForEach(func(id ID, info StoredInfo) error {
		order = append(order, id)
		dead = append(dead, del[id])
		if info.Base.IsZero() {
			return nil
		}
		if info.Codec == codecDelta {
			firstParents[id] = info.Base
		}
		if del[id] {
			return nil
		}
		if del[info.Base] {
			return fmt.Errorf("%w: %s %s is stored against %s", ErrDeltaBase, info.Kind, id.Short(), info.Base.Short())
		}
		if info.Codec == codecTxnOf {
			txns = append(txns, txnRef{id, info.Base})
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A compact transaction also reads its version's first parent.
	for _, t := range txns {
		p, ok := firstParents[t.version]
		if !ok {
			_, vdata, err := s.Get(t.version) // stored whole: one read
			if err != nil {
				return fmt.Errorf("txn %s: %w", t.id.Short(), err)
			}
			p, ok = firstParent(vdata)
		}
		if ok && del[p] {
			return fmt.Errorf("%w: txn %s is stored against the parent %s of version %s", ErrDeltaBase, t.id.Short(), p.Short(), t.version.Short())
		}
	}
	for i := 0; i < len(order); {
		if !dead[i] {
			i++
			continue
		}
		j := i
		for j < len(order) && dead[j] {
			j++
		}
		if j-i >= minRangeDelete {
			// [first dead, first object after the run): nothing else lives there.
			end := kv.PrefixEnd([]byte(kv.PrefixObject))
			if j < len(order) {
				end = Key(order[j])
			}
			if err := b.DeleteRange(Key(order[i]), end); err != nil {
				return err
			}
		} else {
			for k := i; k < j; k++ {
				if err := b.Delete(Key(order[k])); err != nil {
					return err
				}
			}
		}
		i = j
	}
	return nil
}

// minRangeDelete is the shortest run of dead objects deleted with one
// range deletion rather than a deletion each.
const minRangeDelete = 8
