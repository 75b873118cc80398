package repo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/foliodev/folio/internal/kv"
)

// Draft storage.
//
// A draft is stored as a header and one key per block, so that a save
// writes what it changed, not the whole draft (layout 2):
//
//	t/draft/<doc>                  header: a draftRec without blocks and
//	                               tombstones, Layout 2, N block entries
//	t/dblk/<doc>\x00<order key>    one block of the draft (draftBlock
//	                               codec), scanned in body order
//	t/dtomb/<doc>\x00<block id>    a tombstone: uvarint draft seq of the
//	                               save that deleted the block
//
// Order keys are fractional: byte strings compared as Pebble compares
// keys, never empty and never ending in 0x00, so that between any two
// there is another (between). Editing a block rewrites its own key;
// inserting or moving one writes one new key between its neighbours'
// keys and deletes the old one; nothing else moves. A key that grew past
// maxOrderKey bytes (many inserts at one place) makes the save renumber
// every block, once.
//
// Layout 1 (stores written before) kept every block and tombstone inside
// the header record. Such a draft is read as it is; the first change of
// it writes all its blocks and tombstones as keys and a layout 2 header
// in the change's batch, so the migration is atomic and needs no step of
// its own. A header of a layout this code does not know is refused with
// an error that says so.
//
// Writers (under the document lock) keep the decoded draft in memory
// between changes (draftCache); readers outside the lock read a Pebble
// snapshot.

// draftLayout is the layout this code writes.
const draftLayout = 2

// maxOrderKey bounds an order key's length before a renumbering.
const maxOrderKey = 32

func dblkPrefix(doc string) []byte          { return append(kv.TableKey("dblk", doc), 0) }
func dblkKey(doc string, key []byte) []byte { return append(dblkPrefix(doc), key...) }
func dtombPrefix(doc string) []byte         { return append(kv.TableKey("dtomb", doc), 0) }
func dtombKey(doc, id string) []byte        { return kv.TableKey("dtomb", doc, id) }

// between returns an order key k with a < k < b; a nil a is below every
// key and a nil b above every key. a and b are valid keys (never ending
// in 0x00) with a < b.
func between(a, b []byte) []byte {
	var out []byte
	for i := 0; ; i++ {
		da := 0
		if i < len(a) {
			da = int(a[i])
		}
		db := 256
		if b != nil {
			db = 0
			if i < len(b) {
				db = int(b[i])
			}
		}
		if da == db {
			out = append(out, byte(da))
			continue
		}
		// da < db: the keys part at byte i.
		if db-da > 1 {
			return append(out, byte((da+db)/2))
		}
		if b != nil && i+1 < len(b) {
			// b continues past i: b[:i+1] is below b and above a.
			return append(out, byte(db))
		}
		// Adjacent digits: keep a's digit and go above a's rest.
		out = append(out, byte(da))
		var rest []byte
		if i+1 < len(a) {
			rest = a[i+1:]
		}
		return append(out, between(rest, nil)...)
	}
}

// spread returns k increasing order keys between a and b (nil: unbounded),
// each about log256(k)+1 bytes longer than the longer of a and b.
func spread(a, b []byte, k int) [][]byte {
	out := make([][]byte, 0, k)
	var fill func(a, b []byte, k int)
	fill = func(a, b []byte, k int) {
		if k == 0 {
			return
		}
		m := between(a, b)
		fill(a, m, k/2)
		out = append(out, m)
		fill(m, b, k-k/2-1)
	}
	fill(a, b, k)
	return out
}

// assignKeys gives every block of blocks without an order key, or whose
// key breaks the order, a key that puts it in its place, keeping the keys
// of a longest run of blocks already in order. It renumbers every block
// when a new key would be longer than maxOrderKey.
func assignKeys(blocks []draftBlock) {
	var at []int // indexes of blocks that have a key
	var keys []int
	for i := range blocks {
		if blocks[i].key != nil {
			at = append(at, i)
		}
	}
	// Rank the existing keys so that lis can compare them as ints.
	ranked := make([]int, len(at))
	copy(ranked, at)
	sort.Slice(ranked, func(x, y int) bool { return string(blocks[ranked[x]].key) < string(blocks[ranked[y]].key) })
	rank := make(map[int]int, len(at))
	for r, i := range ranked {
		rank[i] = r
	}
	keys = make([]int, len(at))
	for j, i := range at {
		keys[j] = rank[i]
	}
	keep := lis(keys)
	for j, i := range at {
		if !keep[j] {
			blocks[i].key = nil
		}
	}
	var prev []byte
	for i := 0; i < len(blocks); {
		if blocks[i].key != nil {
			prev = blocks[i].key
			i++
			continue
		}
		j := i
		for j < len(blocks) && blocks[j].key == nil {
			j++
		}
		var next []byte
		if j < len(blocks) {
			next = blocks[j].key
		}
		for n, k := range spread(prev, next, j-i) {
			if len(k) > maxOrderKey {
				renumber(blocks)
				return
			}
			blocks[i+n].key = k
		}
		prev, i = blocks[j-1].key, j
	}
}

// renumber gives every block a fresh, short order key.
func renumber(blocks []draftBlock) {
	for i, k := range spread(nil, nil, len(blocks)) {
		blocks[i].key = k
	}
}

// appendTomb encodes a tombstone's value.
func appendTomb(buf []byte, seq uint64) []byte { return binary.AppendUvarint(buf, seq) }

// header returns the record stored at draftKey: dr without its blocks and
// tombstones.
func (dr *draftRec) header() *draftRec {
	h := *dr
	h.Blocks, h.Tombs = nil, nil
	h.Layout, h.N = draftLayout, len(dr.Blocks)
	return &h
}

// putDraftAll adds to b every key of draft dr: the header, each block
// (with a fresh order key) and each tombstone. Keys of a draft stored
// before (layout 2) must have been deleted in b.
func putDraftAll(b *kv.Batch, doc string, dr *draftRec) error {
	renumber(dr.Blocks)
	var buf []byte
	for i := range dr.Blocks {
		buf = appendDraftBlock(buf[:0], &dr.Blocks[i])
		if err := b.Set(dblkKey(doc, dr.Blocks[i].key), buf); err != nil {
			return err
		}
	}
	for _, t := range dr.Tombs {
		if err := b.Set(dtombKey(doc, t.ID), appendTomb(nil, t.Seq)); err != nil {
			return err
		}
	}
	dr.unstored = false
	return setRec(b, draftKey(doc), dr.header())
}

// putDraftHeader adds dr's header to b; a draft whose blocks are not yet
// stored as keys (new, or layout 1) is written whole.
func putDraftHeader(b *kv.Batch, doc string, dr *draftRec) error {
	if dr.unstored {
		return putDraftAll(b, doc, dr)
	}
	return setRec(b, draftKey(doc), dr.header())
}

// putDraftDiff adds to b what turns the stored draft (blocks old and
// tombstones oldTombs, as loaded) into dr: the header, the blocks that
// changed, moved or came, the deletes of the keys that went, and the
// tombstones that changed. Its work is one pass over both block lists;
// the keys it writes are those of the change.
func putDraftDiff(b *kv.Batch, doc string, old []draftBlock, oldTombs []tomb, dr *draftRec) error {
	if dr.unstored {
		return putDraftAll(b, doc, dr)
	}
	assignKeys(dr.Blocks)
	before := make(map[string]*draftBlock, len(old))
	for i := range old {
		before[old[i].ID] = &old[i]
	}
	now := make(map[string][]byte, len(dr.Blocks))
	var buf []byte
	for i := range dr.Blocks {
		nb := &dr.Blocks[i]
		now[nb.ID] = nb.key
		if ob := before[nb.ID]; ob != nil && string(ob.key) == string(nb.key) && sameEntry(ob, nb) {
			continue
		}
		buf = appendDraftBlock(buf[:0], nb)
		if err := b.Set(dblkKey(doc, nb.key), buf); err != nil {
			return err
		}
	}
	for i := range old {
		// A key given up (the block went or moved) is deleted, unless a
		// block of dr took it (a set in this batch already replaced it).
		if k, ok := now[old[i].ID]; ok && string(k) == string(old[i].key) {
			continue
		}
		if keyTaken(dr.Blocks, old[i].key) {
			continue
		}
		if err := b.Delete(dblkKey(doc, old[i].key)); err != nil {
			return err
		}
	}
	was := make(map[string]uint64, len(oldTombs))
	for _, t := range oldTombs {
		was[t.ID] = t.Seq
	}
	is := make(map[string]bool, len(dr.Tombs))
	for _, t := range dr.Tombs {
		is[t.ID] = true
		if s, ok := was[t.ID]; ok && s == t.Seq {
			continue
		}
		if err := b.Set(dtombKey(doc, t.ID), appendTomb(nil, t.Seq)); err != nil {
			return err
		}
	}
	for _, t := range oldTombs {
		if !is[t.ID] {
			if err := b.Delete(dtombKey(doc, t.ID)); err != nil {
				return err
			}
		}
	}
	return setRec(b, draftKey(doc), dr.header())
}

// keyTaken reports whether a block of blocks has order key k. Keys are
// increasing along blocks, so it is a binary search.
func keyTaken(blocks []draftBlock, k []byte) bool {
	i := sort.Search(len(blocks), func(i int) bool { return string(blocks[i].key) >= string(k) })
	return i < len(blocks) && string(blocks[i].key) == string(k)
}

// sameEntry reports whether two entries of one block store the same bytes.
func sameEntry(a, b *draftBlock) bool {
	if a.Content != b.Content || a.Seq != b.Seq || a.Size != b.Size || a.Count != b.Count || len(a.Nested) != len(b.Nested) {
		return false
	}
	for i := range a.Nested {
		if a.Nested[i] != b.Nested[i] {
			return false
		}
	}
	return true
}

// readDraft reads document doc's draft from rd (the store under the
// document lock, or a snapshot).
func readDraft(rd kv.Reader, doc string) (*draftRec, error) {
	var dr draftRec
	ok, err := getRec(rd, draftKey(doc), &dr)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("document %s has no draft record: run folio fsck", doc)
	}
	switch dr.Layout {
	case 0:
		dr.unstored = true // layout 1: blocks and tombstones are in the record
		return &dr, nil
	case draftLayout:
	default:
		return nil, fmt.Errorf("draft of %s has layout %d; this folio knows layouts 1 and %d: run a newer folio", doc, dr.Layout, draftLayout)
	}
	if len(dr.Blocks) > 0 || len(dr.Tombs) > 0 {
		return nil, fmt.Errorf("draft of %s: a layout %d record holds blocks: run folio fsck", doc, draftLayout)
	}
	p := dblkPrefix(doc)
	it, err := rd.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	if dr.N > 0 {
		dr.Blocks = make([]draftBlock, 0, min(dr.N, 1<<16))
	}
	for it.First(); it.Valid(); it.Next() {
		var blk draftBlock
		if n, err := decodeDraftBlock(it.Value(), &blk); err != nil || n != len(it.Value()) {
			it.Close()
			return nil, fmt.Errorf("draft of %s: block entry %x: %w", doc, it.Key(), errors.Join(err, errDraftCodec))
		}
		blk.key = append([]byte(nil), it.Key()[len(p):]...)
		dr.Blocks = append(dr.Blocks, blk)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	if len(dr.Blocks) != dr.N {
		return nil, fmt.Errorf("draft of %s has %d block entries, its header says %d: run folio fsck", doc, len(dr.Blocks), dr.N)
	}
	p = dtombPrefix(doc)
	if it, err = rd.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)}); err != nil {
		return nil, err
	}
	for it.First(); it.Valid(); it.Next() {
		seq, n := binary.Uvarint(it.Value())
		if n <= 0 || n != len(it.Value()) {
			it.Close()
			return nil, fmt.Errorf("draft of %s: tombstone %x: %w", doc, it.Key(), errDraftCodec)
		}
		dr.Tombs = append(dr.Tombs, tomb{ID: string(it.Key()[len(p):]), Seq: seq})
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	sort.SliceStable(dr.Tombs, func(i, j int) bool { return dr.Tombs[i].Seq < dr.Tombs[j].Seq })
	return &dr, nil
}

// draftCache keeps the drafts writers loaded, decoded, between their
// changes. A writer takes a draft out (take) under the document lock and
// gives it back (keep) only after its change committed, so a change that
// failed half-way leaves nothing behind: the next writer reads the store.
// It holds at most max blocks; past that it is emptied.
type draftCache struct {
	mu     sync.Mutex // guards drafts and blocks
	drafts map[string]*draftRec
	blocks int
	max    int
}

func (c *draftCache) take(doc string) *draftRec {
	c.mu.Lock()
	defer c.mu.Unlock()
	dr := c.drafts[doc]
	if dr != nil {
		delete(c.drafts, doc)
		c.blocks -= len(dr.Blocks)
	}
	return dr
}

func (c *draftCache) keep(doc string, dr *draftRec) {
	if dr.unstored {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.drafts[doc]; old != nil {
		c.blocks -= len(old.Blocks)
	}
	if c.blocks+len(dr.Blocks) > c.max {
		clear(c.drafts)
		c.blocks = 0
	}
	c.drafts[doc] = dr
	c.blocks += len(dr.Blocks)
}

// forget drops doc's draft (its records are rewritten outside a change).
func (c *draftCache) forget(doc string) { c.take(doc) }
