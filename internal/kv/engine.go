package kv

import (
	"bytes"
	"errors"
	"fmt"
)

// Engine is a store behind DB other than Pebble: a database server shared
// by several processes (package pgkv). OpenEngine wraps one in a DB, so
// that Folio's code sees the same DB, Batch, Snapshot and Iter whichever
// engine holds the keys. Pebble is not an Engine: it stays the reference,
// reached directly.
//
// What an Engine must do is what the conformance suite (package kvtest)
// checks: byte-order keys, atomic batches, read-your-writes transactions,
// named locks held across processes, frozen snapshots, durability on Sync.
type Engine interface {
	// Get returns the latest committed value at key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Apply commits writes atomically, in order; with sync it returns
	// only once they are durable.
	Apply(w []Write, sync bool) error
	// Begin starts a transaction: reads see the latest committed state
	// plus the transaction's own writes.
	Begin() (EngineTxn, error)
	// Snapshot freezes the latest committed state.
	Snapshot() (EngineReader, error)
	// Close releases the engine.
	Close() error
}

// EngineHealth is what an Engine may say about its database: its name
// and whether it can be used now. Unlike a failed disk, a database that
// failed may come back: Failure is nil again then, and the process goes
// on without a restart.
type EngineHealth interface {
	// Failure is an errs.Storage error while the engine cannot serve
	// (its database unreachable), nil while it can.
	Failure() error
	// Name is the engine's name (EnginePostgres).
	Name() string
}

// EngineReader is a frozen or transactional view of an Engine.
type EngineReader interface {
	// Get returns the value at key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Range returns up to limit pairs with lo <= key < hi (nil: open) in
	// byte order, or in reverse byte order when reverse.
	Range(lo, hi []byte, reverse bool, limit int) ([]Pair, error)
	// Close releases the view (a transaction not committed rolls back).
	Close() error
}

// EngineTxn is an Engine transaction (an indexed Batch, or one holding
// locks).
type EngineTxn interface {
	EngineReader
	// Write applies w inside the transaction.
	Write(w Write) error
	// Lock takes the named locks until the transaction ends.
	Lock(names []string) error
	// Commit commits; with sync it returns once the commit is durable.
	Commit(sync bool) error
}

// Write is one write of a batch: Op OpSet (Key to Value), OpDelete (Key)
// or OpDeleteRange ([Key, Value)).
type Write struct {
	Op         Op
	Key, Value []byte
}

// Pair is one key and its value.
type Pair struct{ Key, Value []byte }

// OpenEngine returns a DB over e; dir names the store in messages and
// holds the files kept beside it (indexes). Closing the DB closes e.
func OpenEngine(dir string, e Engine) *DB { return &DB{e: e, dir: dir} }

// engineBatch is the state of a Batch on an Engine: the writes made so far
// (Count, Each, a commit without a transaction) and the transaction, once
// a read or a lock needed one.
type engineBatch struct {
	indexed bool
	writes  []Write
	size    int
	txn     EngineTxn
}

func (b *Batch) engineWrite(w Write) error {
	w.Key = bytes.Clone(w.Key)
	w.Value = bytes.Clone(w.Value)
	if b.eb.txn != nil {
		if err := b.eb.txn.Write(w); err != nil {
			return err
		}
	}
	b.eb.writes = append(b.eb.writes, w)
	b.eb.size += len(w.Key) + len(w.Value) + 1
	return nil
}

// engineTxn returns the batch's transaction, starting it (and replaying
// the writes made before) on first use.
func (b *Batch) engineTxn() (EngineTxn, error) {
	if b.eb.txn != nil {
		return b.eb.txn, nil
	}
	t, err := b.db.e.Begin()
	if err != nil {
		return nil, err
	}
	for _, w := range b.eb.writes {
		if err := t.Write(w); err != nil {
			t.Close()
			return nil, err
		}
	}
	b.eb.txn = t
	return t, nil
}

func (db *DB) applyEngine(b *Batch, m WriteMode) error {
	if b.eb == nil {
		return errors.New("kv: apply of a batch made by another store")
	}
	if t := b.eb.txn; t != nil {
		b.eb.txn = nil
		defer t.Close()
		return t.Commit(bool(m))
	}
	if len(b.eb.writes) == 0 {
		return nil
	}
	return db.e.Apply(b.eb.writes, bool(m))
}

// engineIter is an Iter over an EngineReader, read a page at a time.
type engineIter struct {
	r        EngineReader
	own      bool // r is the iterator's own snapshot: closed with it
	lo, hi   []byte
	page     []Pair
	i        int
	reverse  bool // the page is in reverse order
	full     bool // the page was full: more may follow in its direction
	err      error
	pageSize int
}

const enginePage = 256

func newEngineIter(r EngineReader, own bool, o *IterOptions) *Iter {
	it := &engineIter{r: r, own: own, pageSize: enginePage}
	if o != nil {
		it.lo, it.hi = bytes.Clone(o.LowerBound), bytes.Clone(o.UpperBound)
	}
	return &Iter{it: it}
}

func (it *engineIter) load(lo, hi []byte, reverse bool) bool {
	if it.err != nil {
		return false
	}
	if it.lo != nil && (lo == nil || bytes.Compare(lo, it.lo) < 0) {
		lo = it.lo
	}
	if it.hi != nil && (hi == nil || bytes.Compare(hi, it.hi) > 0) {
		hi = it.hi
	}
	if lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0 {
		it.page, it.i = nil, 0
		return false
	}
	page, err := it.r.Range(lo, hi, reverse, it.pageSize)
	if err != nil {
		it.err = fmt.Errorf("kv: scan: %w", err)
		it.page = nil
		return false
	}
	it.page, it.i, it.reverse, it.full = page, 0, reverse, len(page) == it.pageSize
	return len(page) > 0
}

func (it *engineIter) First() bool            { return it.load(nil, nil, false) }
func (it *engineIter) Last() bool             { return it.load(nil, nil, true) }
func (it *engineIter) SeekGE(key []byte) bool { return it.load(bytes.Clone(key), nil, false) }
func (it *engineIter) SeekLT(key []byte) bool { return it.load(nil, bytes.Clone(key), true) }

func (it *engineIter) Valid() bool { return it.i < len(it.page) }

func (it *engineIter) Next() bool {
	if !it.Valid() {
		return false
	}
	cur := it.page[it.i].Key
	if !it.reverse {
		if it.i+1 < len(it.page) {
			it.i++
			return true
		}
		if !it.full {
			it.i = len(it.page)
			return false
		}
	}
	return it.load(append(bytes.Clone(cur), 0), nil, false)
}

func (it *engineIter) Prev() bool {
	if !it.Valid() {
		return false
	}
	cur := it.page[it.i].Key
	if it.reverse {
		if it.i+1 < len(it.page) {
			it.i++
			return true
		}
		if !it.full {
			it.i = len(it.page)
			return false
		}
	}
	return it.load(nil, bytes.Clone(cur), true)
}

func (it *engineIter) Key() []byte   { return it.page[it.i].Key }
func (it *engineIter) Value() []byte { return it.page[it.i].Value }
func (it *engineIter) Error() error  { return it.err }

func (it *engineIter) Close() error {
	err := it.err
	if it.own {
		if cerr := it.r.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// errReader is the EngineReader of a snapshot that could not be taken.
type errReader struct{ err error }

func (r errReader) Get([]byte) ([]byte, error)                      { return nil, r.err }
func (r errReader) Range([]byte, []byte, bool, int) ([]Pair, error) { return nil, r.err }
func (r errReader) Close() error                                    { return nil }
