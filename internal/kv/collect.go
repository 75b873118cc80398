package kv

import "sync"

// collector coordinates a garbage collection with the writers of a store.
//
// The danger it removes: a writer finds an object already stored (and so
// does not write it) while a collection, which saw that object as
// unreachable, is about to delete it. Writers therefore hold a write pass
// from their first lookup to their batch's commit; while a collection is
// marking, every object key a writer looks up or writes is recorded; the
// collection deletes only under the exclusive lock, after dropping every
// recorded key from its candidates.
type collector struct {
	pass    sync.RWMutex // held shared by writers, exclusively by a collection's critical steps
	mu      sync.Mutex   // guards touched
	touched map[string]struct{}
}

// WritePass is held by a writer from its first object lookup to the commit
// of its batch; release it with the returned func. Passes are shared, but
// must not be nested: a writer holding one must not ask for another.
func (db *DB) WritePass() func() {
	db.gc.pass.RLock()
	return db.gc.pass.RUnlock
}

// Exclusive waits until no writer holds a pass and keeps new ones out
// until the returned func is called.
func (db *DB) Exclusive() func() {
	db.gc.pass.Lock()
	return db.gc.pass.Unlock
}

// Touch records key when a collection is marking (see StartTouching).
func (db *DB) Touch(key []byte) {
	db.gc.mu.Lock()
	if db.gc.touched != nil {
		db.gc.touched[string(key)] = struct{}{}
	}
	db.gc.mu.Unlock()
}

// StartTouching begins recording the keys writers Touch. Call it under
// Exclusive, together with taking the snapshot the collection marks from.
func (db *DB) StartTouching() {
	db.gc.mu.Lock()
	db.gc.touched = map[string]struct{}{}
	db.gc.mu.Unlock()
}

// StopTouching ends recording and returns the keys touched since
// StartTouching. Call it under Exclusive.
func (db *DB) StopTouching() map[string]struct{} {
	db.gc.mu.Lock()
	t := db.gc.touched
	db.gc.touched = nil
	db.gc.mu.Unlock()
	return t
}
