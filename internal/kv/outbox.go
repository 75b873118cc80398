package kv

import (
	"fmt"
	"sync"
)

// outboxSeq allocates outbox sequence numbers: one per process, shared by
// every writer of the store, so that no two entries written in this
// process share a key.
type outboxSeq struct {
	mu     sync.Mutex
	loaded bool
	last   uint64 // guarded by mu; valid once loaded
}

// OutboxKey returns a new key x/<8-byte big-endian seq>: larger than every
// outbox key in the store when it was first called, and than every key it
// returned before. A writer puts its entry in the same batch as the facts
// the entry is about; docs/objects.md describes the entries.
func (db *DB) OutboxKey() ([]byte, error) {
	s := &db.outbox
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		p := []byte(PrefixOutbox)
		it, err := db.NewIter(&IterOptions{LowerBound: p, UpperBound: PrefixEnd(p)})
		if err != nil {
			return nil, fmt.Errorf("kv: outbox: %w", err)
		}
		if it.Last() && len(it.Key()) == len(p)+8 {
			s.last = ParseUint64(it.Key())
		}
		err = it.Close()
		if err != nil {
			return nil, fmt.Errorf("kv: outbox: %w", err)
		}
		s.loaded = true
	}
	s.last++
	return Uint64([]byte(PrefixOutbox), s.last), nil
}
