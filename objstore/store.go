package objstore

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/foliodev/folio/internal/kv"
	"github.com/klauspost/compress/zstd"
)

var (
	// ErrNotFound is returned when an object is not in the store.
	ErrNotFound = errors.New("objstore: object not found")
	// ErrCorrupt is returned when stored bytes do not decode or do not hash to their id.
	ErrCorrupt = errors.New("objstore: object corrupt")
)

// Storage codecs: the first byte of a stored value.
const (
	codecRaw  byte = 0 // kind byte + canonical bytes
	codecZstd byte = 1 // kind byte + zstd(canonical bytes)
)

// minCompress is the smallest payload worth trying zstd on.
const minCompress = 128

// Store reads and writes objects. It is safe for concurrent use.
type Store struct {
	db *kv.DB
}

// New returns a Store on db.
func New(db *kv.DB) *Store { return &Store{db: db} }

// Key returns the Pebble key of object id.
func Key(id ID) []byte {
	k := make([]byte, 0, len(kv.PrefixObject)+len(id))
	k = append(k, kv.PrefixObject...)
	return append(k, id[:]...)
}

// Put adds object (k, data) to batch b unless the store already has it,
// and returns its id. data must be canonical bytes.
func (s *Store) Put(b *pebble.Batch, k Kind, data []byte) (ID, error) {
	id := Sum(k, data)
	has, err := s.Has(id)
	if err != nil {
		return id, err
	}
	if has {
		return id, nil
	}
	return id, b.Set(Key(id), EncodeStored(k, data), nil)
}

// PutVersion encodes v and adds it to b; it returns the version's id.
func (s *Store) PutVersion(b *pebble.Batch, v *Version) (ID, error) {
	data, _, err := v.Encode()
	if err != nil {
		return ID{}, err
	}
	return s.Put(b, KindVersion, data)
}

// PutTxn encodes t and adds it to b; it returns the transaction's id.
func (s *Store) PutTxn(b *pebble.Batch, t *Txn) (ID, error) {
	data, _, err := t.Encode()
	if err != nil {
		return ID{}, err
	}
	return s.Put(b, KindTxn, data)
}

// Has reports whether the store has object id.
func (s *Store) Has(id ID) (bool, error) { return kv.Has(s.db, Key(id)) }

// Get returns the kind and canonical bytes of object id, or ErrNotFound.
// It does not verify the hash; Verify does.
func (s *Store) Get(id ID) (Kind, []byte, error) {
	v, err := kv.Get(s.db, Key(id))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil, fmt.Errorf("%w: %s", ErrNotFound, id.Short())
	}
	if err != nil {
		return 0, nil, err
	}
	k, data, err := DecodeStored(v)
	if err != nil {
		return 0, nil, fmt.Errorf("object %s: %w", id.Short(), err)
	}
	return k, data, nil
}

// Verify reads object id and checks that it hashes to id.
func (s *Store) Verify(id ID) (Kind, error) {
	k, data, err := s.Get(id)
	if err != nil {
		return 0, err
	}
	if Sum(k, data) != id {
		return k, fmt.Errorf("%w: %s does not hash to its id", ErrCorrupt, id.Short())
	}
	return k, nil
}

// GetVersion reads and decodes version id.
func (s *Store) GetVersion(id ID) (*Version, error) {
	k, data, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if k != KindVersion {
		return nil, fmt.Errorf("%w: %s is a %s, not a version", ErrCorrupt, id.Short(), k)
	}
	return DecodeVersion(data)
}

// GetTxn reads and decodes transaction id.
func (s *Store) GetTxn(id ID) (*Txn, error) {
	k, data, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if k != KindTxn {
		return nil, fmt.Errorf("%w: %s is a %s, not a txn", ErrCorrupt, id.Short(), k)
	}
	return DecodeTxn(data)
}

// GetContent reads a content object's canonical bytes.
func (s *Store) GetContent(id ID) ([]byte, error) {
	k, data, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if k != KindContent {
		return nil, fmt.Errorf("%w: %s is a %s, not content", ErrCorrupt, id.Short(), k)
	}
	return data, nil
}

var (
	encOnce sync.Once
	encoder *zstd.Encoder
	decoder *zstd.Decoder
)

func codecs() (*zstd.Encoder, *zstd.Decoder) {
	encOnce.Do(func() {
		encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
	})
	return encoder, decoder
}

// EncodeStored returns the stored form of an object: codec byte, kind
// byte, payload; zstd when it is smaller.
func EncodeStored(k Kind, data []byte) []byte {
	if len(data) >= minCompress {
		enc, _ := codecs()
		z := enc.EncodeAll(data, make([]byte, 2, 2+len(data)))
		if len(z) < len(data)+2 {
			z[0], z[1] = codecZstd, byte(k)
			return z
		}
	}
	out := make([]byte, 2, 2+len(data))
	out[0], out[1] = codecRaw, byte(k)
	return append(out, data...)
}

// DecodeStored is the inverse of EncodeStored.
func DecodeStored(v []byte) (Kind, []byte, error) {
	if len(v) < 2 {
		return 0, nil, fmt.Errorf("%w: stored value too short", ErrCorrupt)
	}
	k := Kind(v[1])
	switch v[0] {
	case codecRaw:
		return k, v[2:], nil
	case codecZstd:
		_, dec := codecs()
		data, err := dec.DecodeAll(v[2:], nil)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		return k, data, nil
	}
	return 0, nil, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, v[0])
}
