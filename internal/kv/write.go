package kv

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble"
)

// Apply commits batch b atomically: with Sync it returns nil only once the
// batch is in the synced write-ahead log, so a nil answer may be
// acknowledged. The caller still owns b (and closes it).
//
// Errors: an errs.StorageFull error when the disk is below the reserve or
// a background flush ran out of space (nothing was written; retry once
// space is freed); an errs.Storage error when the store has failed, or
// fails while b is being committed (b is not acknowledged, though it may
// turn out to be durable after the restart).
func (db *DB) Apply(b *pebble.Batch, m WriteMode) error {
	if err := db.h.writable(); err != nil {
		return err
	}
	// Pebble commits a copy: a commit caught in a failure may still be
	// running inside Pebble after Apply has answered, and must not share
	// a batch the caller is about to close and Pebble to recycle.
	c := db.DB.NewBatch()
	if err := c.SetRepr(bytes.Clone(b.Repr())); err != nil {
		c.Close()
		return fmt.Errorf("kv: apply: %w", err)
	}
	err := db.h.do(func() error {
		err := db.DB.Apply(c, m.options())
		c.Close()
		return err
	})
	return err
}

// Set writes one key (see Apply).
func (db *DB) Set(key, value []byte, m WriteMode) error {
	b := db.DB.NewBatch()
	defer b.Close()
	if err := b.Set(key, value, nil); err != nil {
		return err
	}
	return db.Apply(b, m)
}

// Delete removes one key (see Apply).
func (db *DB) Delete(key []byte, m WriteMode) error {
	b := db.DB.NewBatch()
	defer b.Close()
	if err := b.Delete(key, nil); err != nil {
		return err
	}
	return db.Apply(b, m)
}

// DeleteRange removes the keys in [start, end) (see Apply).
func (db *DB) DeleteRange(start, end []byte, m WriteMode) error {
	b := db.DB.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(start, end, nil); err != nil {
		return err
	}
	return db.Apply(b, m)
}

// Flush writes the memtable to an sstable and waits for it. It fails like
// Apply; while a flush keeps failing for lack of space it waits until
// space is freed.
func (db *DB) Flush() error {
	if err := db.h.writable(); err != nil {
		return err
	}
	return db.h.do(db.DB.Flush)
}

// Compact compacts the keys in [start, end) (see pebble.DB.Compact); it
// fails like Apply.
func (db *DB) Compact(start, end []byte, parallelize bool) error {
	if err := db.h.writable(); err != nil {
		return err
	}
	return db.h.do(func() error { return db.DB.Compact(start, end, parallelize) })
}

// Close closes the store. After a failure it returns the failure and
// leaves Pebble as it is: its state is unknown, some of its goroutines
// may be stuck in the failed operation, and every synced write is on disk
// already; the process is expected to exit.
func (db *DB) Close() error {
	if err := db.h.failure(); err != nil {
		return err
	}
	err := db.h.do(db.DB.Close)
	if db.closer != nil {
		db.closer.Close()
	}
	return err
}

// Failed is closed when the store fails (see Failure).
func (db *DB) Failed() <-chan struct{} { return db.h.failed }

// Failure returns the store's failure, an errs.Storage error whose cause
// (errors.Unwrap) is what failed, or nil while the store is healthy. A
// failed store accepts no more writes; the process must restart.
func (db *DB) Failure() error { return db.h.failure() }

// Writable returns nil when a write would be attempted now, and otherwise
// the error it would get: Failure, or an errs.StorageFull error while the
// disk is below the reserve or a background flush ran out of space.
func (db *DB) Writable() error { return db.h.writable() }
