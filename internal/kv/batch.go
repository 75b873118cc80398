package kv

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble"
)

// Reader reads the store: the DB itself (the latest committed state), a
// Snapshot (one frozen state) or an indexed Batch (the state below plus
// the batch's own writes). Every implementation is a kv type; the engine
// behind them is not visible.
type Reader interface {
	// Get returns a copy of the value at key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// NewIter returns an iterator over the keys in [o.LowerBound,
	// o.UpperBound) (nil o: every key), in byte order. The caller closes
	// it before the Reader is closed.
	NewIter(o *IterOptions) (*Iter, error)

	pebble() pebble.Reader
}

var (
	_ Reader = (*DB)(nil)
	_ Reader = (*Snapshot)(nil)
	_ Reader = (*Batch)(nil)
)

// IterOptions bound an iterator: LowerBound inclusive, UpperBound
// exclusive; nil leaves that side open.
type IterOptions struct {
	LowerBound []byte
	UpperBound []byte
}

func (o *IterOptions) pebble() *pebble.IterOptions {
	if o == nil {
		return nil
	}
	return &pebble.IterOptions{LowerBound: o.LowerBound, UpperBound: o.UpperBound}
}

func newIter(r pebble.Reader, o *IterOptions) (*Iter, error) {
	it, err := r.NewIter(o.pebble())
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// Iter walks keys in byte order, either way. It is positioned by First,
// Last, SeekGE or SeekLT, each of which (like Next and Prev) reports
// whether it stands on a key. Key and Value are valid until the next move;
// keep a copy (bytes.Clone) to hold them longer. An Iter is not safe for
// concurrent use; Close it (its error is the iteration's).
type Iter struct{ it iterator }

// iterator is what an Iter walks: a Pebble iterator or an engine's.
type iterator interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Valid() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// First moves to the first key.
func (i *Iter) First() bool { return i.it.First() }

// Last moves to the last key.
func (i *Iter) Last() bool { return i.it.Last() }

// Next moves to the next key.
func (i *Iter) Next() bool { return i.it.Next() }

// Prev moves to the previous key.
func (i *Iter) Prev() bool { return i.it.Prev() }

// SeekGE moves to the first key >= key.
func (i *Iter) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

// SeekLT moves to the last key < key.
func (i *Iter) SeekLT(key []byte) bool { return i.it.SeekLT(key) }

// Valid reports whether the iterator stands on a key.
func (i *Iter) Valid() bool { return i.it.Valid() }

// Key is the current key.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value is the current value.
func (i *Iter) Value() []byte { return i.it.Value() }

// Error is the iteration's error so far.
func (i *Iter) Error() error { return i.it.Error() }

// Close releases the iterator and returns the iteration's error.
func (i *Iter) Close() error { return i.it.Close() }

// Snapshot is one frozen state of the store, for reads that must agree
// with each other (fsck, a rebuild, a collection's mark). Close it.
type Snapshot struct {
	s *pebble.Snapshot
	e EngineReader // on an Engine
}

// NewSnapshot freezes the store's current state. On an Engine a snapshot
// that cannot be taken fails its reads.
func (db *DB) NewSnapshot() *Snapshot {
	if db.e != nil {
		r, err := db.e.Snapshot()
		if err != nil {
			r = errReader{fmt.Errorf("kv: snapshot: %w", err)}
		}
		return &Snapshot{e: r}
	}
	return &Snapshot{s: db.p.NewSnapshot()}
}

// Get implements Reader.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if s.e != nil {
		return s.e.Get(key)
	}
	return get(s.s, key)
}

// NewIter implements Reader.
func (s *Snapshot) NewIter(o *IterOptions) (*Iter, error) {
	if s.e != nil {
		return newEngineIter(s.e, false, o), nil
	}
	return newIter(s.s, o)
}

func (s *Snapshot) pebble() pebble.Reader {
	if s.e != nil {
		return nil
	}
	return s.s
}

// Close releases the snapshot.
func (s *Snapshot) Close() error {
	if s.e != nil {
		return s.e.Close()
	}
	return s.s.Close()
}

// Batch is a set of writes committed atomically: all of them or none.
// Nothing is visible to others before Commit (or DB.Apply) returns nil;
// the writes apply in the order they were made (a later Set of a key
// wins, a DeleteRange removes what the batch set before it in its range).
//
// A batch made by NewIndexedBatch is also a Reader that reads its own
// writes over the store's latest state (a transaction reading what it
// wrote); one made by NewBatch is write-only, and its Get and NewIter fail
// with ErrNotIndexed. A Batch is not safe for concurrent use. Close it
// whether or not it was committed; committing does not close it.
type Batch struct {
	db     *DB
	b      *pebble.Batch
	unlock func()       // releases the locks taken by Lock; nil when none are held
	eb     *engineBatch // on an Engine (b is nil)
}

// ErrNotIndexed is returned by the reads of a batch made by NewBatch.
var ErrNotIndexed = errors.New("kv: read of a write-only batch (use NewIndexedBatch)")

// NewBatch returns an empty write-only batch.
func (db *DB) NewBatch() *Batch {
	if db.e != nil {
		return &Batch{db: db, eb: &engineBatch{}}
	}
	return &Batch{db: db, b: db.p.NewBatch()}
}

// NewIndexedBatch returns an empty batch that reads its own writes. On an
// Engine it is a transaction, begun at its first read or Lock.
func (db *DB) NewIndexedBatch() *Batch {
	if db.e != nil {
		return &Batch{db: db, eb: &engineBatch{indexed: true}}
	}
	return &Batch{db: db, b: db.p.NewIndexedBatch()}
}

// Set writes value at key.
func (b *Batch) Set(key, value []byte) error {
	if b.eb != nil {
		return b.engineWrite(Write{OpSet, key, value})
	}
	return b.b.Set(key, value, nil)
}

// Delete removes key.
func (b *Batch) Delete(key []byte) error {
	if b.eb != nil {
		return b.engineWrite(Write{OpDelete, key, nil})
	}
	return b.b.Delete(key, nil)
}

// DeleteRange removes every key in [start, end).
func (b *Batch) DeleteRange(start, end []byte) error {
	if b.eb != nil {
		return b.engineWrite(Write{OpDeleteRange, start, end})
	}
	return b.b.DeleteRange(start, end, nil)
}

// Commit applies the batch through the store's health gate; see DB.Apply
// for what a nil answer promises and the errors.
func (b *Batch) Commit(m WriteMode) error { return b.db.Apply(b, m) }

// Count is the number of writes in the batch.
func (b *Batch) Count() uint32 {
	if b.eb != nil {
		return uint32(len(b.eb.writes))
	}
	return b.b.Count()
}

// Len is the batch's encoded size in bytes (what ApplyReserved bounds).
func (b *Batch) Len() int {
	if b.eb != nil {
		return b.eb.size
	}
	return b.b.Len()
}

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.Count() == 0 }

// Reset empties the batch for reuse (on an Engine, rolling back its
// transaction and releasing its locks).
func (b *Batch) Reset() {
	if b.eb != nil {
		if b.eb.txn != nil {
			b.eb.txn.Close()
		}
		*b.eb = engineBatch{indexed: b.eb.indexed}
		return
	}
	b.b.Reset()
}

// Close releases the batch and the locks it holds.
func (b *Batch) Close() error {
	b.release()
	if b.eb != nil {
		if t := b.eb.txn; t != nil {
			b.eb.txn = nil
			return t.Close()
		}
		return nil
	}
	return b.b.Close()
}

// Lock takes the named locks for the batch, waiting for each: they are
// held until the batch is committed (Commit, DB.Apply) or closed, which
// is what a check-then-write needs (read under the lock, through an
// indexed batch, then commit). A name is any string; two batches holding
// the same name never overlap. The locks are the engine's: within one
// process for Pebble; an engine shared by several processes holds them
// across processes (a transaction's advisory locks). A batch takes its
// locks in one call, so that every batch takes them in the same order;
// a second call fails with ErrLocksHeld and takes nothing.
func (b *Batch) Lock(names ...string) error {
	if b.unlock != nil {
		return ErrLocksHeld
	}
	if b.eb != nil {
		t, err := b.engineTxn()
		if err != nil {
			return err
		}
		if err := t.Lock(names); err != nil {
			return err
		}
		b.unlock = func() {} // the transaction's end releases them
		return nil
	}
	b.unlock = b.db.locks.lock(names)
	return nil
}

// ErrLocksHeld is returned by a second Batch.Lock on one batch.
var ErrLocksHeld = errors.New("kv: the batch already holds its locks (take them in one Lock call)")

func (b *Batch) release() {
	if b.unlock != nil {
		b.unlock()
		b.unlock = nil
	}
}

// Get implements Reader for an indexed batch.
func (b *Batch) Get(key []byte) ([]byte, error) {
	if b.eb != nil {
		if !b.eb.indexed {
			return nil, ErrNotIndexed
		}
		t, err := b.engineTxn()
		if err != nil {
			return nil, err
		}
		return t.Get(key)
	}
	if !b.b.Indexed() {
		return nil, ErrNotIndexed
	}
	return get(b.b, key)
}

// NewIter implements Reader for an indexed batch.
func (b *Batch) NewIter(o *IterOptions) (*Iter, error) {
	if b.eb != nil {
		if !b.eb.indexed {
			return nil, ErrNotIndexed
		}
		t, err := b.engineTxn()
		if err != nil {
			return nil, err
		}
		return newEngineIter(t, false, o), nil
	}
	if !b.b.Indexed() {
		return nil, ErrNotIndexed
	}
	return newIter(b.b, o)
}

func (b *Batch) pebble() pebble.Reader {
	if b.eb != nil {
		return nil
	}
	if !b.b.Indexed() {
		return notIndexed{}
	}
	return b.b
}

// Op is the kind of one write in a batch, as Each reports it.
type Op uint8

// The kinds of writes.
const (
	OpSet         Op = iota + 1 // key set to value
	OpDelete                    // key removed
	OpDeleteRange               // keys in [key, value) removed
)

// Each calls fn with every write of the batch in the order they were made
// (a write-only batch can be read this way). key and value are valid only
// during the call.
func (b *Batch) Each(fn func(op Op, key, value []byte)) error {
	if b.eb != nil {
		for _, w := range b.eb.writes {
			fn(w.Op, w.Key, w.Value)
		}
		return nil
	}
	r := b.b.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return fmt.Errorf("kv: read batch: %w", err)
		}
		if !ok {
			return nil
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			fn(OpSet, k, v)
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete:
			fn(OpDelete, k, nil)
		case pebble.InternalKeyKindRangeDelete:
			fn(OpDeleteRange, k, v)
		default:
			return fmt.Errorf("kv: read batch: unexpected write kind %v", kind)
		}
	}
}

// get returns a copy of the value at key in r, or ErrNotFound.
func get(r pebble.Reader, key []byte) ([]byte, error) {
	v, c, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	c.Close()
	return out, nil
}

// notIndexed is the pebble.Reader of a write-only batch.
type notIndexed struct{}

func (notIndexed) Get([]byte) ([]byte, io.Closer, error) { return nil, nil, ErrNotIndexed }
func (notIndexed) NewIter(*pebble.IterOptions) (*pebble.Iterator, error) {
	return nil, ErrNotIndexed
}
func (notIndexed) Close() error { return nil }
