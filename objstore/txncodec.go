package objstore

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
)

// codecTxnOf stores a transaction by reference to the version that sealed
// it (V, whose Txn field is this transaction) and V's first parent P: most
// of a checkpoint's transaction repeats them (the base version is P, the
// base fingerprint is P's, an event's before hash is the block's content in
// P and its after hash the content in V). See docs/objects.md.
const codecTxnOf byte = 3

// Flags of compactTxn.Flags: which fields are taken from V or P.
const (
	txnDocFromV    = 1 << iota // Doc == V.Doc
	txnKindFromV               // Kind == V.Kind
	txnReasonFromV             // Reason == V.Reason
	txnBaseIsP                 // BaseVersion == V.Parents[0]
	txnBaseFPFromP             // BaseFingerprint == P.Fingerprint
	txnTimeFromV               // Time == V.Time
)

// Where an event's block id comes from (compactEvent.Where).
const (
	blockLiteral = 0 // compactEvent.Block
	blockInV     = 1 // V.Blocks[Idx].ID
	blockInP     = 2 // P.Blocks[Idx].ID
)

var txnOps = []string{EventAdd, EventDelete, EventModify, EventMove, EventRestore}

// compactTxn is the payload of codecTxnOf after the 32-byte id of V,
// msgpack-encoded as an array in field order.
type compactTxn struct {
	//lint:ignore U1000 msgpack reads this field's tag (encode as an array)
	_msgpack struct{} `msgpack:",as_array"`
	Flags    uint64
	Doc      string
	Actor    string
	Kind     string
	Reason   string
	Base     []byte // 32 bytes, or nil for zero / from P
	BaseFP   []byte // 32 bytes, or nil for zero / from P
	Idem     string
	Sugg     string
	Time     int64
	Events   []compactEvent
}

type compactEvent struct {
	//lint:ignore U1000 msgpack reads this field's tag (encode as an array)
	_msgpack  struct{} `msgpack:",as_array"`
	Op        uint8    // 1 + index in txnOps, or 0 for OpLiteral
	OpLiteral string   // an op this codec does not know
	Where     uint8    // blockLiteral, blockInV or blockInP
	Idx       int
	Block     string
	BeforeInP bool   // Before is the block's content in P
	Before    []byte // 32 bytes, or nil for zero
	AfterInV  bool   // After is the block's content in V
	After     []byte // 32 bytes, or nil for zero
}

// blockFinder finds a block's position in a version by id: by scanning
// for the few events of a checkpoint, through a map once it is used often.
// Duplicate ids resolve to the first occurrence either way.
type blockFinder struct {
	v    *Version
	m    map[string]int
	uses int
}

func (f *blockFinder) find(id string) (int, bool) {
	if f.v == nil {
		return 0, false
	}
	f.uses++
	if f.m == nil && f.uses > 8 {
		f.m = make(map[string]int, len(f.v.Blocks))
		for i, b := range f.v.Blocks {
			if _, dup := f.m[b.ID]; !dup {
				f.m[b.ID] = i
			}
		}
	}
	if f.m != nil {
		i, ok := f.m[id]
		return i, ok
	}
	for i, b := range f.v.Blocks {
		if b.ID == id {
			return i, true
		}
	}
	return 0, false
}

func idBytes(id ID) []byte {
	if id.IsZero() {
		return nil
	}
	return bytes.Clone(id[:])
}

func idFrom(b []byte) (ID, error) {
	var id ID
	if b == nil {
		return id, nil
	}
	if len(b) != len(id) {
		return id, fmt.Errorf("%w: id of %d bytes in a compact txn", ErrCorrupt, len(b))
	}
	copy(id[:], b)
	return id, nil
}

// compactTxnOf expresses t in terms of v (its version) and p (v's first
// parent, nil when v has none).
func compactTxnOf(t *Txn, v, p *Version) compactTxn {
	c := compactTxn{Actor: t.Actor, Idem: t.IdempotencyKey, Sugg: t.SuggestionID}
	if t.Doc == v.Doc {
		c.Flags |= txnDocFromV
	} else {
		c.Doc = t.Doc
	}
	if t.Kind == v.Kind {
		c.Flags |= txnKindFromV
	} else {
		c.Kind = t.Kind
	}
	if t.Reason == v.Reason {
		c.Flags |= txnReasonFromV
	} else {
		c.Reason = t.Reason
	}
	if p != nil && t.BaseVersion == v.Parents[0] {
		c.Flags |= txnBaseIsP
	} else {
		c.Base = idBytes(t.BaseVersion)
	}
	if p != nil && t.BaseFingerprint == p.Fingerprint {
		c.Flags |= txnBaseFPFromP
	} else if !t.BaseFingerprint.IsZero() {
		c.BaseFP = bytes.Clone(t.BaseFingerprint[:])
	}
	if t.Time == v.Time {
		c.Flags |= txnTimeFromV
	} else {
		c.Time = t.Time
	}
	vi, pi := &blockFinder{v: v}, &blockFinder{v: p}
	for _, e := range t.Events {
		ce := compactEvent{}
		for i, op := range txnOps {
			if e.Op == op {
				ce.Op = uint8(i + 1)
			}
		}
		if ce.Op == 0 {
			ce.OpLiteral = e.Op
		}
		vIdx, inV := vi.find(e.BlockID)
		pIdx, inP := pi.find(e.BlockID)
		if inV {
			ce.Where, ce.Idx = blockInV, vIdx
		} else if inP {
			ce.Where, ce.Idx = blockInP, pIdx
		} else {
			ce.Block = e.BlockID
		}
		if inP && !e.Before.IsZero() && p.Blocks[pIdx].Content == e.Before {
			ce.BeforeInP = true
		} else {
			ce.Before = idBytes(e.Before)
		}
		if inV && !e.After.IsZero() && v.Blocks[vIdx].Content == e.After {
			ce.AfterInV = true
		} else {
			ce.After = idBytes(e.After)
		}
		c.Events = append(c.Events, ce)
	}
	return c
}

// expand is the inverse of compactTxnOf.
func (c *compactTxn) expand(v, p *Version) (*Txn, error) {
	t := &Txn{Doc: c.Doc, Actor: c.Actor, Kind: c.Kind, Reason: c.Reason, IdempotencyKey: c.Idem,
		SuggestionID: c.Sugg, Time: c.Time}
	needP := func() error {
		if p == nil {
			return fmt.Errorf("%w: compact txn refers to the parent of a version that has none", ErrCorrupt)
		}
		return nil
	}
	if c.Flags&txnDocFromV != 0 {
		t.Doc = v.Doc
	}
	if c.Flags&txnKindFromV != 0 {
		t.Kind = v.Kind
	}
	if c.Flags&txnReasonFromV != 0 {
		t.Reason = v.Reason
	}
	var err error
	if c.Flags&txnBaseIsP != 0 {
		if err := needP(); err != nil {
			return nil, err
		}
		t.BaseVersion = v.Parents[0]
	} else if t.BaseVersion, err = idFrom(c.Base); err != nil {
		return nil, err
	}
	if c.Flags&txnBaseFPFromP != 0 {
		if err := needP(); err != nil {
			return nil, err
		}
		t.BaseFingerprint = p.Fingerprint
	} else if c.BaseFP != nil {
		if len(c.BaseFP) != len(t.BaseFingerprint) {
			return nil, fmt.Errorf("%w: fingerprint of %d bytes in a compact txn", ErrCorrupt, len(c.BaseFP))
		}
		t.BaseFingerprint = flowdoc.Fingerprint(c.BaseFP)
	}
	if c.Flags&txnTimeFromV != 0 {
		t.Time = v.Time
	}
	vi, pi := &blockFinder{v: v}, &blockFinder{v: p}
	for _, ce := range c.Events {
		e := TxnEvent{Op: ce.OpLiteral}
		if ce.Op > 0 {
			if int(ce.Op) > len(txnOps) {
				return nil, fmt.Errorf("%w: compact txn op %d", ErrCorrupt, ce.Op)
			}
			e.Op = txnOps[ce.Op-1]
		}
		switch ce.Where {
		case blockLiteral:
			e.BlockID = ce.Block
		case blockInV:
			if ce.Idx < 0 || ce.Idx >= len(v.Blocks) {
				return nil, fmt.Errorf("%w: compact txn block index %d", ErrCorrupt, ce.Idx)
			}
			e.BlockID = v.Blocks[ce.Idx].ID
		case blockInP:
			if err := needP(); err != nil {
				return nil, err
			}
			if ce.Idx < 0 || ce.Idx >= len(p.Blocks) {
				return nil, fmt.Errorf("%w: compact txn block index %d", ErrCorrupt, ce.Idx)
			}
			e.BlockID = p.Blocks[ce.Idx].ID
		default:
			return nil, fmt.Errorf("%w: compact txn block source %d", ErrCorrupt, ce.Where)
		}
		if ce.BeforeInP {
			if err := needP(); err != nil {
				return nil, err
			}
			i, ok := pi.find(e.BlockID)
			if !ok {
				return nil, fmt.Errorf("%w: compact txn: block %s not in the base version", ErrCorrupt, e.BlockID)
			}
			e.Before = p.Blocks[i].Content
		} else if e.Before, err = idFrom(ce.Before); err != nil {
			return nil, err
		}
		if ce.AfterInV {
			i, ok := vi.find(e.BlockID)
			if !ok {
				return nil, fmt.Errorf("%w: compact txn: block %s not in its version", ErrCorrupt, e.BlockID)
			}
			e.After = v.Blocks[i].Content
		} else if e.After, err = idFrom(ce.After); err != nil {
			return nil, err
		}
		t.Events = append(t.Events, e)
	}
	return t, nil
}

// compactTxnInBatch re-stores transaction v.Txn, when b holds it whole, as
// a reference to version vid (just added to b). Anything unusual (the txn
// committed earlier, not decodable, not reproducible) leaves it whole.
func (s *Store) compactTxnInBatch(b *kv.Batch, vid ID, v *Version) {
	if v.Txn.IsZero() || b == nil || b.Count() > maxBatchScan {
		return
	}
	key := Key(v.Txn)
	if has, err := kv.Has(s.db, key); err != nil || has {
		return
	}
	src := newSource(s, b)
	defer src.close()
	raw, err := src.get(key)
	if err != nil || len(raw) < 2 || raw[0] > codecZstd || Kind(raw[1]) != KindTxn {
		return
	}
	_, data, err := DecodeStored(raw)
	if err != nil {
		return
	}
	t, err := DecodeTxn(data)
	if err != nil {
		return
	}
	var p *Version // nil when V has no parent or it cannot be read: then nothing refers to it
	if len(v.Parents) > 0 {
		if p, err = s.decodedVersion(v.Parents[0], src); err != nil {
			p = nil
		}
	}
	c := compactTxnOf(t, v, p)
	enc, err := kv.Marshal(&c)
	if err != nil {
		return
	}
	out := make([]byte, 0, 2+refLen+len(enc))
	out = append(out, codecTxnOf, byte(KindTxn))
	out = append(out, vid[:refLen]...)
	out = append(out, enc...)
	if len(out) >= len(raw) {
		return
	}
	// The stored form must give back exactly the canonical bytes.
	back, err := c.expand(v, p)
	if err != nil {
		return
	}
	if again, err := kv.Marshal(back); err != nil || !bytes.Equal(again, data) {
		return
	}
	_ = b.Set(key, out)
}

// rebuildTxn returns the canonical bytes of transaction id stored with
// codecTxnOf as value val, checked against id. Its version is the
// candidate for the stored prefix whose txn field is id.
func (s *Store) rebuildTxn(id ID, val []byte, src source) ([]byte, error) {
	if len(val) < 2+refLen {
		return nil, fmt.Errorf("%w: txn %s: compact form truncated", ErrCorrupt, id.Short())
	}
	var c compactTxn
	if err := kv.Unmarshal(val[2+refLen:], &c); err != nil {
		return nil, fmt.Errorf("%w: txn %s: %v", ErrCorrupt, id.Short(), err)
	}
	var out []byte
	failure := fmt.Errorf("%w: txn %s is stored against version %x…, which is missing", ErrCorrupt, id.Short(), val[2:2+refLen])
	err := src.eachCandidate([refLen]byte(val[2:2+refLen]), func(vid ID) (bool, error) {
		v, err := s.decodedVersion(vid, src)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
				return false, err
			}
			failure = fmt.Errorf("txn %s: %w", id.Short(), err)
			return false, nil
		}
		if v.Txn != id {
			return false, nil // another version with the same prefix
		}
		var p *Version
		if len(v.Parents) > 0 && (c.Flags&(txnBaseIsP|txnBaseFPFromP) != 0 || usesP(c.Events)) {
			if p, err = s.decodedVersion(v.Parents[0], src); err != nil {
				failure = fmt.Errorf("txn %s: base version: %w", id.Short(), err)
				return false, nil
			}
		}
		t, err := c.expand(v, p)
		if err != nil {
			failure = fmt.Errorf("txn %s: %w", id.Short(), err)
			return false, nil
		}
		data, err := kv.Marshal(t)
		if err != nil {
			return false, err
		}
		if Sum(KindTxn, data) != id {
			failure = fmt.Errorf("%w: txn %s rebuilt from its version does not hash to its id", ErrCorrupt, id.Short())
			return false, nil
		}
		out = data
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, failure
	}
	return out, nil
}

func usesP(es []compactEvent) bool {
	for _, e := range es {
		if e.Where == blockInP || e.BeforeInP {
			return true
		}
	}
	return false
}

// decodedVersion returns version id decoded, from the small cache of
// decoded versions when it is there. The result is shared: read it only.
func (s *Store) decodedVersion(id ID, src source) (*Version, error) {
	if v, ok := s.decoded.get(id); ok {
		return v, nil
	}
	k, data, err := s.getWith(id, src)
	if err != nil {
		return nil, err
	}
	if k != KindVersion {
		return nil, fmt.Errorf("%w: %s is a %s, not a version", ErrCorrupt, id.Short(), k)
	}
	v, err := DecodeVersion(data)
	if err != nil {
		return nil, err
	}
	s.decoded.add(id, v)
	return v, nil
}

// cloneVersion copies v deeply enough that changes to v's slices do not
// reach the copy.
func cloneVersion(v *Version) *Version {
	c := *v
	c.Parents = append([]ID(nil), v.Parents...)
	c.Blocks = append([]BlockEntry(nil), v.Blocks...)
	c.Attrs.Tags = append([]string(nil), v.Attrs.Tags...)
	return &c
}
