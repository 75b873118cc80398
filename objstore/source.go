package objstore

import (
	"bytes"
	"errors"

	"github.com/foliodev/folio/internal/kv"
)

// refLen is how many leading bytes of an id a stored form uses to name
// the object it is stored against (a delta's base, a compact
// transaction's version). The reader finds the objects with that prefix
// and keeps the one with which the rebuilt bytes hash to the id being
// read, so a shared prefix costs a retry, never a wrong answer.
const refLen = 8

// maxCandidates bounds how many objects sharing a reference prefix a read
// tries.
const maxCandidates = 16

// source reads stored values from the store and, when b is set, from the
// records of batch b not yet committed (last write wins), so that a
// version can be stored against a parent put earlier in the same batch.
//
// A source made by newSource keeps one iterator for its prefix searches
// (a delta chain makes one per link); close releases it.
type source struct {
	s  *Store
	b  *kv.Batch
	it *iterHolder
}

type iterHolder struct{ it *kv.Iter }

func newSource(s *Store, b *kv.Batch) source { return source{s: s, b: b, it: &iterHolder{}} }

func (src source) close() {
	if src.it != nil && src.it.it != nil {
		src.it.it.Close()
		src.it.it = nil
	}
}

func (src source) useBatch() bool { return src.b != nil && src.b.Count() <= maxBatchScan }

// get returns the stored value at key, or kv.ErrNotFound.
func (src source) get(key []byte) ([]byte, error) {
	v, err := kv.Get(src.s.db, key)
	if !errors.Is(err, kv.ErrNotFound) || !src.useBatch() {
		return v, err
	}
	var found []byte
	err = src.b.Each(func(op kv.Op, k, val []byte) {
		if bytes.Equal(k, key) {
			found = nil
			if op == kv.OpSet {
				found = bytes.Clone(val)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, kv.ErrNotFound
	}
	return found, nil
}

// withPrefix returns the ids of stored objects whose id starts with p:
// those in the store first, then those only in the batch.
func (src source) withPrefix(p []byte) ([]ID, error) {
	lo := append([]byte(kv.PrefixObject), p...)
	it := src.it.it
	if it == nil {
		all := []byte(kv.PrefixObject)
		var err error
		if it, err = src.s.db.NewIter(&kv.IterOptions{LowerBound: all, UpperBound: kv.PrefixEnd(all)}); err != nil {
			return nil, err
		}
		src.it.it = it
	}
	var out []ID
	for ok := it.SeekGE(lo); ok && bytes.HasPrefix(it.Key(), lo) && len(out) < maxCandidates; ok = it.Next() {
		if k := it.Key(); len(k) == len(kv.PrefixObject)+len(ID{}) {
			out = append(out, ID(k[len(kv.PrefixObject):]))
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if !src.useBatch() {
		return out, nil
	}
	inBatch := map[ID]bool{}
	err := src.b.Each(func(op kv.Op, k, _ []byte) {
		if len(k) == len(kv.PrefixObject)+len(ID{}) && bytes.HasPrefix(k, lo) {
			inBatch[ID(k[len(kv.PrefixObject):])] = op == kv.OpSet
		}
	})
	if err != nil {
		return nil, err
	}
	for id, set := range inBatch {
		if set && len(out) < maxCandidates && !containsID(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

func containsID(ids []ID, id ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// eachCandidate calls try with each id that reference prefix p may name
// until try reports done: first an id in the version cache (usually the
// right one, found without touching the store), then the store's and the
// batch's.
func (src source) eachCandidate(p [refLen]byte, try func(ID) (done bool, err error)) error {
	first, cached := src.s.cache.byPrefix(p)
	if cached {
		if done, err := try(first); done || err != nil {
			return err
		}
	}
	ids, err := src.withPrefix(p[:])
	if err != nil {
		return err
	}
	for _, id := range ids {
		if cached && id == first {
			continue
		}
		if done, err := try(id); done || err != nil {
			return err
		}
	}
	return nil
}

func refOf(id ID) (p [refLen]byte) {
	copy(p[:], id[:])
	return p
}
