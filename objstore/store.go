package objstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/klauspost/compress/zstd"
)

var (
	// ErrNotFound is returned when an object is not in the store.
	ErrNotFound = errors.New("objstore: object not found")
	// ErrCorrupt is returned when stored bytes do not decode or do not hash to their id.
	ErrCorrupt error = errs.E(errs.Corrupt, "objstore: object corrupt")
	// ErrDangling is returned by Verify when an object references one the store lacks.
	ErrDangling error = errs.E(errs.Corrupt, "objstore: object references a missing object")
	// ErrDeltaBase is returned by Delete when an object to delete is needed
	// to read another stored object that is not deleted with it (the delta
	// base of a version, the version a transaction is stored against).
	ErrDeltaBase = errors.New("objstore: object is needed to read another stored object")
	// ErrLimit is returned by IsAncestor when the walk reaches its bound.
	ErrLimit = errors.New("objstore: walk limit reached")
	// ErrTooLarge is returned by Put for an object over MaxObject.
	ErrTooLarge = errs.E(errs.TooLarge, "objstore: object larger than %d bytes", MaxObject)
)

// Storage codecs: the first byte of a stored value. See docs/objects.md.
const (
	codecRaw   byte = 0 // kind byte + canonical bytes
	codecZstd  byte = 1 // kind byte + zstd(canonical bytes)
	codecDelta byte = 2 // kind byte + delta against the first parent
	// codecTxnOf (3), a transaction by reference to its version, is in txncodec.go.
)

// MaxObject bounds an object's canonical bytes. Put refuses bigger ones,
// and a reader never rebuilds (decompresses, applies a delta to) more than
// this, whatever a stored value claims. A version of 20,000 blocks takes
// about 1 MB; one block's content is at most its document's size limit
// (doc_max_bytes, 16 MiB by default).
const MaxObject = 32 << 20

// minCompress is the smallest payload worth trying zstd on. A smaller
// object is stored raw: Pebble compresses the table blocks it lies in,
// and a block of many small objects shrinks more as a whole than each of
// them on its own (msgpack keys and words recur from one object to the
// next, a zstd frame carries its own header and tables). Paragraphs of
// Folio's docs as content objects, in hash order, stored and then
// compressed in 32 KiB Snappy blocks: 221 KB with zstd from 128 bytes,
// 211 KB from 512, 206 KB from 1,024, 209 KB from 4,096; and the
// 1,000-checkpoint history of bench/git_vs_folio.sh is 3% smaller from
// 1,024 than from 128, for less CPU per save (no zstd call per block).
const minCompress = 1024

// maxChain bounds how many deltas a read follows: far above any interval a
// writer uses, it only stops a damaged store from looping.
const maxChain = 4096

// maxBatchScan is the largest batch (in records) searched for a parent put
// in the same batch; a version whose parent is in a bigger batch is stored
// whole rather than scanning it for every put.
const maxBatchScan = 4096

// Options tune a Store.
type Options struct {
	// DeltaInterval bounds delta chains: every DeltaInterval-th version
	// along a chain of first parents is stored whole, the others as deltas
	// against their first parent, so a read applies fewer than
	// DeltaInterval deltas. 0 means DefaultDeltaInterval; 1 stores every
	// version whole; values above 4096 are lowered to 4096.
	DeltaInterval int
	// CacheBytes bounds the cache of rebuilt versions; 0 means 16 MiB, a
	// negative value disables it.
	CacheBytes int
}

// DefaultDeltaInterval is the delta interval used when Options leave it 0,
// about the chain depth of `git gc --aggressive` (250). For a 200-block
// document a whole version costs about 9 KB and a delta about 215 bytes: at
// 256 the whole ones add ~35 bytes per version, and the worst read (255
// deltas, each applied and hash-checked, nothing cached) takes 2-3 ms;
// recent versions come from the cache after one delta.
const DefaultDeltaInterval = 256

// Store reads and writes objects. It is safe for concurrent use.
type Store struct {
	db       *kv.DB
	interval int
	cache    *versionCache // canonical bytes of recent versions
	decoded  decodedCache  // a few recent versions, decoded
}

// New returns a Store on db with default options.
func New(db *kv.DB) *Store { return NewWithOptions(db, Options{}) }

// NewWithOptions returns a Store on db.
func NewWithOptions(db *kv.DB, o Options) *Store {
	if o.DeltaInterval <= 0 {
		o.DeltaInterval = DefaultDeltaInterval
	}
	o.DeltaInterval = min(o.DeltaInterval, maxChain)
	if o.CacheBytes == 0 {
		o.CacheBytes = 16 << 20
	}
	return &Store{db: db, interval: o.DeltaInterval, cache: newVersionCache(o.CacheBytes)}
}

// Key returns the Pebble key of object id.
func Key(id ID) []byte {
	k := make([]byte, 0, len(kv.PrefixObject)+len(id))
	k = append(k, kv.PrefixObject...)
	return append(k, id[:]...)
}

// Put adds object (k, data) to batch b unless the store already has it,
// and returns its id. data must be canonical bytes. The object becomes
// visible when b commits.
//
// How it is stored never changes its id or what Get returns: a version is
// stored as a delta against its first parent when that parent is in the
// store or earlier in b and the parent's delta chain is shorter than the
// delta interval, and whole otherwise; a transaction put earlier in b is
// re-stored by reference to the version that names it, when that version
// is put. Content and anything else is stored whole, zstd when it pays.
func (s *Store) Put(b *kv.Batch, k Kind, data []byte) (ID, error) {
	return s.put(b, k, data, nil)
}

// Encoded is an object hashed and encoded for storage ahead of its Put,
// so that a writer can do that work (proportional to the object's size)
// before it takes any lock. Only objects stored whole (not versions, which
// may be stored as deltas, nor transactions) can be Encoded.
type Encoded struct {
	ID     ID
	kind   Kind
	stored []byte
}

// Encode hashes data, canonical bytes of kind k, and encodes its stored
// form. k must not be KindVersion or KindTxn.
func Encode(k Kind, data []byte) Encoded {
	return Encoded{ID: Sum(k, data), kind: k, stored: EncodeStored(k, data)}
}

// PutEncoded is Put of an object made by Encode: it adds the object to b
// unless the store already has it.
func (s *Store) PutEncoded(b *kv.Batch, e Encoded) error {
	if e.kind == KindVersion || e.kind == KindTxn || e.stored == nil {
		return fmt.Errorf("objstore: PutEncoded of a %s object", e.kind)
	}
	s.db.Touch(Key(e.ID)) // a collection in progress must keep it (see kv.DB.WritePass)
	has, err := s.Has(e.ID)
	if err != nil || has {
		return err
	}
	return b.Set(Key(e.ID), e.stored)
}

// PutVersion encodes v and adds it to b; it returns the version's id. See
// Put for how it is stored; put v's transaction first, in the same batch,
// so that it can be stored compactly.
func (s *Store) PutVersion(b *kv.Batch, v *Version) (ID, error) {
	data, _, err := v.Encode()
	if err != nil {
		return ID{}, err
	}
	return s.put(b, KindVersion, data, v)
}

// put is Put; v is the decoded version when k is KindVersion and the
// caller has it.
func (s *Store) put(b *kv.Batch, k Kind, data []byte, v *Version) (ID, error) {
	id := Sum(k, data)
	if len(data) > MaxObject {
		return id, fmt.Errorf("%w: %s %s is %d bytes", ErrTooLarge, k, id.Short(), len(data))
	}
	s.db.Touch(Key(id)) // a collection in progress must keep it (see kv.DB.WritePass)
	has, err := s.Has(id)
	if err != nil {
		return id, err
	}
	if has {
		return id, nil
	}
	if k != KindVersion {
		return id, b.Set(Key(id), EncodeStored(k, data))
	}
	s.cache.add(id, bytes.Clone(data))
	stored, ok := s.encodeDelta(b, data, v)
	if !ok {
		stored = EncodeStored(k, data)
	}
	if err := b.Set(Key(id), stored); err != nil {
		return id, err
	}
	if v == nil {
		if v, err = DecodeVersion(data); err != nil {
			return id, nil // stored whole and intact; just not decodable here
		}
	} else {
		v = cloneVersion(v)
	}
	s.decoded.add(id, v)
	s.compactTxnInBatch(b, id, v)
	return id, nil
}

// PutTxn encodes t and adds it to b; it returns the transaction's id.
func (s *Store) PutTxn(b *kv.Batch, t *Txn) (ID, error) {
	data, _, err := t.Encode()
	if err != nil {
		return ID{}, err
	}
	return s.Put(b, KindTxn, data)
}

// encodeDelta returns the delta-coded stored form of version data (v, when
// not nil, is data decoded), or
// false when it must be stored whole (no parent, parent unavailable, chain
// at its bound, or a delta that would not be smaller).
func (s *Store) encodeDelta(b *kv.Batch, data []byte, v *Version) ([]byte, bool) {
	if s.interval <= 1 {
		return nil, false
	}
	var parent ID
	if v != nil {
		if len(v.Parents) == 0 {
			return nil, false
		}
		parent = v.Parents[0]
	} else {
		var ok bool
		if parent, ok = firstParent(data); !ok {
			return nil, false
		}
	}
	src := newSource(s, b)
	defer src.close()
	pv, err := src.get(Key(parent))
	if err != nil || len(pv) < 2 || Kind(pv[1]) != KindVersion {
		return nil, false
	}
	depth := uint64(0)
	if pv[0] == codecDelta {
		h, err := parseDeltaHeader(pv)
		if err != nil {
			return nil, false
		}
		depth = h.depth
	}
	if depth+1 >= uint64(s.interval) {
		return nil, false
	}
	base, err := s.rebuild(parent, pv, src, 0)
	if err != nil {
		return nil, false
	}
	ops, err := makeDelta(base, parent, data)
	if err != nil {
		return nil, false
	}
	out := make([]byte, 0, 2+binary.MaxVarintLen64*2+refLen+len(ops))
	out = append(out, codecDelta, byte(KindVersion))
	out = binary.AppendUvarint(out, depth+1)
	out = append(out, parent[:refLen]...)
	out = binary.AppendUvarint(out, uint64(len(data)))
	out = append(out, ops...)
	if len(out) >= len(data) {
		return nil, false
	}
	// Check the round trip here rather than find a bad delta on a read.
	if got, err := applyDelta(base, parent, ops, len(data)); err != nil || !bytes.Equal(got, data) {
		return nil, false
	}
	return out, true
}

// Has reports whether the store has object id.
func (s *Store) Has(id ID) (bool, error) { return kv.Has(s.db, Key(id)) }

// Get returns the kind and canonical bytes of object id, or ErrNotFound.
// Objects stored whole are returned as stored, unchecked (Verify checks
// them); an object rebuilt from a delta or a reference is checked against
// its id on the way, and a mismatch is ErrCorrupt. The caller may modify
// the bytes.
func (s *Store) Get(id ID) (Kind, []byte, error) {
	src := newSource(s, nil)
	defer src.close()
	k, data, err := s.getWith(id, src)
	if err != nil {
		return 0, nil, err
	}
	if k == KindVersion {
		data = bytes.Clone(data) // the cache's copy must stay intact
	}
	return k, data, nil
}

// getWith is Get reading through get. A version's bytes may be shared with
// the cache and must not be modified.
func (s *Store) getWith(id ID, src source) (Kind, []byte, error) {
	v, err := src.get(Key(id))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil, fmt.Errorf("%w: %s", ErrNotFound, id.Short())
	}
	if err != nil {
		return 0, nil, err
	}
	if len(v) >= 2 {
		switch v[0] {
		case codecDelta:
			data, err := s.rebuild(id, v, src, 0)
			if err != nil {
				return 0, nil, err
			}
			return Kind(v[1]), data, nil
		case codecTxnOf:
			data, err := s.rebuildTxn(id, v, src)
			if err != nil {
				return 0, nil, err
			}
			return KindTxn, data, nil
		}
	}
	k, data, err := DecodeStored(v)
	if err != nil {
		return 0, nil, fmt.Errorf("object %s: %w", id.Short(), err)
	}
	return k, data, nil
}

// deltaHeader is the fixed part of a delta-coded value.
type deltaHeader struct {
	depth uint64       // deltas between this version and a whole one, >= 1
	base  [refLen]byte // prefix of the first parent's id, which the delta applies to
	size  int          // length of the rebuilt canonical bytes
	ops   []byte
}

func parseDeltaHeader(v []byte) (deltaHeader, error) {
	var h deltaHeader
	if len(v) < 2 || v[0] != codecDelta {
		return h, fmt.Errorf("%w: not a delta", ErrCorrupt)
	}
	p := v[2:]
	d, n := binary.Uvarint(p)
	if n <= 0 || d == 0 {
		return h, fmt.Errorf("%w: delta depth", ErrCorrupt)
	}
	p = p[n:]
	if len(p) < refLen {
		return h, fmt.Errorf("%w: delta base truncated", ErrCorrupt)
	}
	copy(h.base[:], p)
	p = p[refLen:]
	size, n := binary.Uvarint(p)
	if n <= 0 || size > MaxObject {
		return h, fmt.Errorf("%w: delta size %d out of range (at most %d)", ErrCorrupt, size, MaxObject)
	}
	h.depth, h.size, h.ops = d, int(size), p[n:]
	return h, nil
}

// rebuild returns the canonical bytes of version id whose stored value is
// v, following its delta chain through src (at most maxChain deep). The
// base is the candidate for the header's prefix with which the rebuilt
// bytes hash to id; every version rebuilt on the way is checked the same
// way and cached. The result must not be modified.
func (s *Store) rebuild(id ID, v []byte, src source, depth int) ([]byte, error) {
	if data, ok := s.cache.get(id); ok {
		return data, nil
	}
	if len(v) < 2 || v[0] != codecDelta {
		k, data, err := DecodeStored(v)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", id.Short(), err)
		}
		if k != KindVersion || Sum(k, data) != id {
			return nil, fmt.Errorf("%w: delta base %s does not hash to its id", ErrCorrupt, id.Short())
		}
		s.cache.add(id, data)
		return data, nil
	}
	if Kind(v[1]) != KindVersion {
		return nil, fmt.Errorf("%w: object %s: delta of kind %s", ErrCorrupt, id.Short(), Kind(v[1]))
	}
	h, err := parseDeltaHeader(v)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", id.Short(), err)
	}
	if depth >= maxChain {
		return nil, fmt.Errorf("%w: object %s: delta chain longer than %d", ErrCorrupt, id.Short(), maxChain)
	}
	var out []byte
	failure := fmt.Errorf("%w: delta base %x… of %s is missing", ErrCorrupt, h.base[:], id.Short())
	err = src.eachCandidate(h.base, func(c ID) (bool, error) {
		if c == id {
			return false, nil
		}
		base, ok := s.cache.get(c)
		if !ok {
			bv, err := src.get(Key(c))
			if errors.Is(err, kv.ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if len(bv) < 2 || Kind(bv[1]) != KindVersion {
				return false, nil // another kind of object that shares the prefix
			}
			if base, err = s.rebuild(c, bv, src, depth+1); err != nil {
				failure = err
				return false, nil
			}
		}
		o, err := applyDelta(base, c, h.ops, h.size)
		if err != nil {
			failure = fmt.Errorf("object %s: %w", id.Short(), err)
			return false, nil
		}
		if Sum(KindVersion, o) != id {
			failure = fmt.Errorf("%w: version %s rebuilt from its delta does not hash to its id", ErrCorrupt, id.Short())
			return false, nil
		}
		out = o
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, failure
	}
	s.cache.add(id, out)
	return out, nil
}

// Verify reads object id, checks that it hashes to id, that it decodes as
// its kind and that every object it references is in the store. It
// returns ErrNotFound, ErrCorrupt or ErrDangling (naming the missing ids).
func (s *Store) Verify(id ID) (Kind, error) {
	k, data, err := s.Get(id)
	if err != nil {
		return 0, err
	}
	if Sum(k, data) != id {
		return k, fmt.Errorf("%w: %s does not hash to its id", ErrCorrupt, id.Short())
	}
	refs, err := References(k, data)
	if err == nil && k == KindContent {
		err = CheckContent(data)
	}
	if err == nil && k == KindAsset {
		err = CheckAsset(data)
	}
	if err != nil {
		return k, fmt.Errorf("%w: %s %s: %v", ErrCorrupt, k, id.Short(), err)
	}
	var missing []string
	for _, r := range refs {
		has, err := s.Has(r)
		if err != nil {
			return k, err
		}
		if !has {
			missing = append(missing, r.Short())
		}
	}
	if len(missing) > 0 {
		return k, fmt.Errorf("%w: %s %s references %v", ErrDangling, k, id.Short(), missing)
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
		decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxObject))
	})
	return encoder, decoder
}

// EncodeStored returns the whole (not delta-coded) stored form of an
// object: codec byte, kind byte, payload; zstd when it is smaller.
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

// ReadDepth says what reading a stored value involves, so that a reader of
// many objects (fsck) can order its reads to read each once: 0 for an
// object stored whole, readable on its own; the chain depth (>= 1) for a
// version stored as a delta, readable cheaply once its first parent was
// read; -1 for a transaction stored by reference to its version, readable
// cheaply once that version (and its first parent) were. A malformed
// value is 0: reading it reports the problem.
func ReadDepth(stored []byte) int {
	if len(stored) < 2 {
		return 0
	}
	switch stored[0] {
	case codecDelta:
		h, err := parseDeltaHeader(stored)
		if err != nil {
			return 0
		}
		return int(min(h.depth, maxChain))
	case codecTxnOf:
		return -1
	}
	return 0
}

// DecodeStored is the inverse of EncodeStored. It cannot decode codecs 2
// and 3 (a version delta, a transaction by reference), which need the
// object they are stored against: Store.Get reads every codec.
//
// A zstd payload decodes to at most MaxObject bytes; the size its frame
// header claims is checked against that before anything is allocated, and
// the decoder allocates no more than the compressed bytes can actually
// expand to (zstd's own bound, each block of up to 128 KiB taking at least
// 4 bytes).
func DecodeStored(v []byte) (Kind, []byte, error) {
	if len(v) < 2 {
		return 0, nil, fmt.Errorf("%w: stored value too short", ErrCorrupt)
	}
	k := Kind(v[1])
	switch v[0] {
	case codecRaw:
		return k, v[2:], nil
	case codecZstd:
		var h zstd.Header
		if err := h.Decode(v[2:]); err != nil {
			return 0, nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		if h.HasFCS && h.FrameContentSize > MaxObject {
			return 0, nil, fmt.Errorf("%w: zstd frame claims %d bytes, more than an object's %d", ErrCorrupt, h.FrameContentSize, MaxObject)
		}
		_, dec := codecs()
		data, err := dec.DecodeAll(v[2:], nil)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		return k, data, nil
	case codecDelta, codecTxnOf:
		return 0, nil, fmt.Errorf("%w: a value stored with codec %d needs the object it is stored against (use Store.Get)", ErrCorrupt, v[0])
	}
	return 0, nil, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, v[0])
}
