package syncproto

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/foliodev/folio/internal/errs"
)

// Idempotent saves.
//
// A draft.save may carry a key chosen by the client. The server remembers
// the ack of every keyed save it acknowledged, by document, user and key,
// so that the same save sent again (after its ack was lost with the
// connection) is answered with the original ack instead of being applied
// twice or, more likely, conflicting with itself. A retry that arrives
// while the first attempt is still running waits for it.
//
// Keys live in the server's memory, not in the store: a retry follows a
// lost ack by seconds (a reconnect), the memory is bounded
// (Config.SaveKeyTTL, Config.SaveKeyBytes, oldest forgotten first), and a
// save path that writes one more key per save would cost every save for
// the rare retry. After a restart the keys are gone; docs/protocol.md
// says what a client does then (a retry that conflicts with blocks equal
// to the ones it sent was applied).

// maxKeyLen bounds a save key.
const maxKeyLen = 64

// checkSaveKey reports a key that is not 1-64 bytes of visible ASCII.
func checkSaveKey(k string) error {
	if len(k) > maxKeyLen {
		return errs.E(errs.Invalid, "draft.save key is %d bytes; at most %d", len(k), maxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return errs.E(errs.Invalid, "draft.save key: byte %d is not visible ASCII (0x21-0x7e)", i)
		}
	}
	return nil
}

// keyedSave is one remembered save.
type keyedSave struct {
	id   string   // document, user and key
	sum  [32]byte // of the save's content: a key reused for another save is refused
	done chan struct{}

	// Set before done is closed; read after.
	ack  *Ack // nil: the attempt stored nothing, the key is free again
	at   time.Time
	size int
}

// saveKeys remembers keyed saves. Guarded by mu.
type saveKeys struct {
	ttl      time.Duration
	maxBytes int

	mu    sync.Mutex
	m     map[string]*keyedSave
	fifo  []*keyedSave // acknowledged ones, oldest first
	head  int          // index of the oldest in fifo
	bytes int
}

func newSaveKeys(ttl time.Duration, maxBytes int) *saveKeys {
	return &saveKeys{ttl: ttl, maxBytes: maxBytes, m: map[string]*keyedSave{}}
}

// saveSum is the digest of what a save asks for, whatever its codec.
func saveSum(m *Save) [32]byte {
	b, err := MsgpackCodec.Encode(&Save{Doc: m.Doc, BaseSeq: m.BaseSeq, Changes: m.Changes, Body: m.Body, Attrs: m.Attrs, Merge: m.Merge})
	if err != nil {
		// Not encodable means not comparable: a unique sum makes a
		// retry of it a new save, which is what it would be without key.
		return sha256.Sum256([]byte(err.Error() + time.Now().String()))
	}
	return sha256.Sum256(b)
}

// begin looks up id. When it is new, the caller owns the attempt and must
// call finish. Otherwise the save it names is returned: wait on done,
// then use its ack, or call begin again when it has none. A key used for
// another save is an invalid error.
func (k *saveKeys) begin(id string, sum [32]byte, now time.Time) (*keyedSave, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expireLocked(now)
	if e := k.m[id]; e != nil {
		if e.sum != sum {
			return nil, false, errs.E(errs.Invalid, "draft.save key was already used for a different save of this document; use a new key for every new save and the same one only to resend it unchanged")
		}
		return e, false, nil
	}
	e := &keyedSave{id: id, sum: sum, done: make(chan struct{})}
	k.m[id] = e
	return e, true, nil
}

// finish ends the attempt of e: with its ack it is remembered, without
// it forgotten.
func (k *saveKeys) finish(e *keyedSave, ack *Ack, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ack == nil {
		delete(k.m, e.id)
		close(e.done)
		return
	}
	a := *ack
	a.Envelope = Envelope{}
	e.ack, e.at = &a, now
	e.size = len(e.id) + len(a.Doc) + 160
	for _, c := range a.Changed {
		e.size += len(c) + 16
	}
	close(e.done)
	if k.head > 0 && len(k.fifo) == cap(k.fifo) {
		n := copy(k.fifo, k.fifo[k.head:])
		clear(k.fifo[n:])
		k.fifo, k.head = k.fifo[:n], 0
	}
	k.fifo = append(k.fifo, e)
	k.bytes += e.size
	k.expireLocked(now)
}

// expireLocked forgets the oldest acknowledged saves while they are older
// than the TTL or over the byte bound.
func (k *saveKeys) expireLocked(now time.Time) {
	for k.head < len(k.fifo) {
		e := k.fifo[k.head]
		if k.bytes <= k.maxBytes && now.Sub(e.at) < k.ttl {
			break
		}
		k.fifo[k.head] = nil
		k.head++
		k.bytes -= e.size
		if k.m[e.id] == e {
			delete(k.m, e.id)
		}
	}
	if k.head == len(k.fifo) {
		k.fifo, k.head = k.fifo[:0], 0
	}
}

// len returns how many acknowledged saves are remembered.
func (k *saveKeys) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.fifo) - k.head
}
