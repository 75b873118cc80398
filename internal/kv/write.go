package kv

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/foliodev/folio/internal/errs"
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
func (db *DB) Apply(b *Batch, m WriteMode) error {
	defer b.release()
	if db.e != nil {
		return db.applyEngine(b, m)
	}
	if err := db.h.writable(); err != nil {
		return err
	}
	// Pebble commits a copy: a commit caught in a failure may still be
	// running inside Pebble after Apply has answered, and must not share
	// a batch the caller is about to close and Pebble to recycle.
	c := db.p.NewBatch()
	if err := c.SetRepr(bytes.Clone(b.b.Repr())); err != nil {
		c.Close()
		return fmt.Errorf("kv: apply: %w", err)
	}
	err := db.h.do(func() error {
		err := db.p.Apply(c, m.options())
		c.Close()
		return err
	})
	return err
}

// ApplyReserved commits b like Apply, except that it may dip into the
// reserve ([storage] min_free) that Apply keeps free. It is for the few
// small writes a daemon must make to start at all on a disk that is below
// the reserve: the first admin user, the marker of the owner migration,
// putting tasks a crash interrupted back in the queue. Each of those is
// made once (the next start finds it done and writes nothing), so a
// daemon that restarts in a loop does not eat into the reserve again and
// again.
//
// What it may spend is bounded twice: b must be at most MaxReservedWrite
// bytes, and one open store spends at most ReservedBudget this way in all;
// and the disk must keep ReservedFloor free after the write (Pebble's own
// writes after a commit: the log record, a flush's sstable overhead), so a
// write here never runs the write-ahead log out of space.
//
// Errors: those of Apply; an errs.StorageFull error (nothing written) when
// b is over the bounds or the disk is below the floor — the caller then
// waits until Writable is nil, and says so.
func (db *DB) ApplyReserved(b *Batch, m WriteMode) error {
	defer b.release()
	if db.e != nil {
		return db.applyEngine(b, m)
	}
	err := db.h.writable()
	if err == nil {
		return db.Apply(b, m)
	}
	if !errors.Is(err, errs.StorageFull) || db.h.noSpace.Load() != nil {
		return err // failed, or a flush already ran out of space
	}
	n := int64(len(b.b.Repr()))
	if n > MaxReservedWrite {
		return err
	}
	if spent := db.h.reserved.Add(n); spent > ReservedBudget {
		db.h.reserved.Add(-n)
		return err
	}
	if u, uerr := db.h.fs.GetDiskUsage(db.h.path); uerr == nil && u.AvailBytes < uint64(ReservedFloor+2*n) {
		db.h.reserved.Add(-n)
		return err
	}
	c := db.p.NewBatch()
	if err := c.SetRepr(bytes.Clone(b.b.Repr())); err != nil {
		c.Close()
		db.h.reserved.Add(-n)
		return fmt.Errorf("kv: apply: %w", err)
	}
	return db.h.do(func() error {
		err := db.p.Apply(c, m.options())
		c.Close()
		return err
	})
}

// The bounds of ApplyReserved.
const (
	// MaxReservedWrite is the largest batch ApplyReserved commits.
	MaxReservedWrite = 256 << 10
	// ReservedBudget is what one open store may spend of the reserve.
	ReservedBudget = 4 << 20
	// ReservedFloor is the free space ApplyReserved leaves on the disk,
	// besides twice the batch.
	ReservedFloor = 8 << 20
)

// BelowReserve reports whether err is the refusal of a write because the
// disk is below the reserve or a background flush ran out of space
// (errs.StorageFull): a condition that clears by itself once space is
// freed, unlike a failed store.
func BelowReserve(err error) bool { return errors.Is(err, errs.StorageFull) }

// Set writes one key (see Apply).
func (db *DB) Set(key, value []byte, m WriteMode) error {
	b := db.NewBatch()
	defer b.Close()
	if err := b.Set(key, value); err != nil {
		return err
	}
	return db.Apply(b, m)
}

// Delete removes one key (see Apply).
func (db *DB) Delete(key []byte, m WriteMode) error {
	b := db.NewBatch()
	defer b.Close()
	if err := b.Delete(key); err != nil {
		return err
	}
	return db.Apply(b, m)
}

// DeleteRange removes the keys in [start, end) (see Apply).
func (db *DB) DeleteRange(start, end []byte, m WriteMode) error {
	b := db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(start, end); err != nil {
		return err
	}
	return db.Apply(b, m)
}

// Flush writes the memtable to an sstable and waits for it. It fails like
// Apply; while a flush keeps failing for lack of space it waits until
// space is freed.
func (db *DB) Flush() error {
	if db.e != nil {
		return nil
	}
	if err := db.h.writable(); err != nil {
		return err
	}
	return db.h.do(db.p.Flush)
}

// Compact compacts the keys in [start, end) (see pebble.DB.Compact); it
// fails like Apply.
func (db *DB) Compact(start, end []byte, parallelize bool) error {
	if db.e != nil {
		return nil
	}
	if err := db.h.writable(); err != nil {
		return err
	}
	return db.h.do(func() error { return db.p.Compact(start, end, parallelize) })
}

// Close closes the store. After a failure it returns the failure and
// leaves Pebble as it is: its state is unknown, some of its goroutines
// may be stuck in the failed operation, and every synced write is on disk
// already; the process is expected to exit.
func (db *DB) Close() error {
	if db.e != nil {
		return db.e.Close()
	}
	if err := db.h.failure(); err != nil {
		return err
	}
	err := db.h.do(db.p.Close)
	if db.closer != nil {
		db.closer.Close()
	}
	return err
}

// Failed is closed when the store fails for good (see Failure). It is
// never closed on an Engine: a database that fails may come back, and
// Failure says when it is failed.
func (db *DB) Failed() <-chan struct{} {
	if db.e != nil {
		return nil
	}
	return db.h.failed
}

// Failure returns the store's failure, an errs.Storage error whose cause
// (errors.Unwrap) is what failed, or nil while the store is healthy. A
// failed store accepts no more writes; the process must restart. On an
// Engine (EngineHealth) it is the engine's failure, which clears when
// the database is back.
func (db *DB) Failure() error {
	if db.e != nil {
		return db.engineFailure()
	}
	return db.h.failure()
}

// Writable returns nil when a write would be attempted now, and otherwise
// the error it would get: Failure, or an errs.StorageFull error while the
// disk is below the reserve or a background flush ran out of space.
func (db *DB) Writable() error {
	if db.e != nil {
		return db.engineFailure()
	}
	return db.h.writable()
}

func (db *DB) engineFailure() error {
	if h, ok := db.e.(EngineHealth); ok {
		return h.Failure()
	}
	return nil
}

// Engine names the engine holding the store: EnginePebble, EngineMemory
// or a registered engine's name.
func (db *DB) Engine() string {
	if db.e != nil {
		if h, ok := db.e.(EngineHealth); ok {
			return h.Name()
		}
		return "engine"
	}
	if db.mem {
		return EngineMemory
	}
	return EnginePebble
}
