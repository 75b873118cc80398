package flowdoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"

	"github.com/vmihailenco/msgpack/v5"
)

// Canonical encodings. Both normalize first (empty slices and all-zero
// attrs become absent) so that documents that mean the same encode to the
// same bytes. The msgpack encoding is what objects and fingerprints hash;
// JSON is the wire and export form.

// EncodeContent returns the canonical encoding of one block's content: the
// block without its own id (nested blocks keep theirs). Equal content gives
// equal bytes, which is how identical blocks deduplicate in storage.
func EncodeContent(b Block) []byte {
	n := normalizeBlock(b)
	n.ID = ""
	return mustMarshal(n)
}

// EncodeBody returns the canonical msgpack encoding of a document.
func EncodeBody(d Document) []byte {
	return mustMarshal(normalizeDoc(d))
}

// ContentHash is the id of a block's content object: SHA-256 over
// "folio/content\x00" and EncodeContent(b). It equals the object id the
// store gives the block's content.
func ContentHash(b Block) [32]byte { return sum("folio/content", EncodeContent(b)) }

// BlockHash pairs a block id with its content hash.
type BlockHash struct {
	ID   string
	Hash [32]byte
}

// FingerprintOf returns the body fingerprint of d.
func FingerprintOf(d Document) Fingerprint {
	hs := make([]BlockHash, len(d.Blocks))
	for i, b := range d.Blocks {
		hs[i] = BlockHash{ID: b.ID, Hash: ContentHash(b)}
	}
	return FingerprintOfHashes(hs)
}

// FingerprintOfHashes computes a body fingerprint from the ordered block
// ids and content hashes: SHA-256 over "folio/body\x00", then for each
// block its id length (one byte), id and 32-byte content hash. Because a
// content hash determines the content, this identifies the body exactly,
// and a store that holds content hashes can fingerprint a body without
// reading any block.
func FingerprintOfHashes(hs []BlockHash) Fingerprint {
	f := NewBodyHasher()
	for _, h := range hs {
		f.Add(h.ID, h.Hash)
	}
	return f.Sum()
}

// BodyHasher computes a body fingerprint (FingerprintOfHashes) one block
// at a time, without holding the list.
type BodyHasher struct {
	h   hash.Hash
	buf [1 + 255 + 32]byte
}

// NewBodyHasher returns a BodyHasher for an empty body.
func NewBodyHasher() *BodyHasher {
	f := &BodyHasher{h: sha256.New()}
	f.h.Write([]byte("folio/body\x00"))
	return f
}

// Add appends the next block of the body: its id and content hash.
func (f *BodyHasher) Add(id string, content [32]byte) {
	b := append(f.buf[:0], byte(len(id)))
	b = append(b, id...)
	b = append(b, content[:]...)
	f.h.Write(b)
}

// Sum returns the fingerprint of the blocks added.
func (f *BodyHasher) Sum() Fingerprint {
	var out Fingerprint
	f.h.Sum(out[:0])
	return out
}

// CanonicalJSON returns the canonical JSON form of d: normalized, fields in
// declaration order, no insignificant white space, no HTML escaping.
func CanonicalJSON(d Document) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalizeDoc(d)); err != nil {
		panic(fmt.Sprintf("flowdoc: encode json: %v", err)) // only plain data types: cannot fail
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Clone returns a deep copy of d.
func (d Document) Clone() Document {
	out := Document{SchemaVersion: d.SchemaVersion, Blocks: make([]Block, len(d.Blocks))}
	for i, b := range d.Blocks {
		out.Blocks[i] = b.Clone()
	}
	return out
}

// Clone returns a deep copy of b.
func (b Block) Clone() Block {
	c := b
	if b.Attrs != nil {
		a := *b.Attrs
		c.Attrs = &a
	}
	c.RichText = cloneRuns(b.RichText)
	c.Items = cloneItems(b.Items)
	if b.Rows != nil {
		c.Rows = make([]TableRow, len(b.Rows))
		for i, r := range b.Rows {
			cells := make([][]Run, len(r.Cells))
			for j, cell := range r.Cells {
				cells[j] = cloneRuns(cell)
			}
			c.Rows[i] = TableRow{Cells: cells}
		}
	}
	if b.Children != nil {
		c.Children = make([]Block, len(b.Children))
		for i, ch := range b.Children {
			c.Children[i] = ch.Clone()
		}
	}
	if b.Cols != nil {
		c.Cols = make([]Column, len(b.Cols))
		for i, col := range b.Cols {
			bs := make([]Block, len(col.Blocks))
			for j, ch := range col.Blocks {
				bs[j] = ch.Clone()
			}
			c.Cols[i] = Column{Blocks: bs}
		}
	}
	return c
}

func cloneRuns(rs []Run) []Run {
	if rs == nil {
		return nil
	}
	out := make([]Run, len(rs))
	for i, r := range rs {
		out[i] = r
		if r.Marks != nil {
			out[i].Marks = append([]Mark(nil), r.Marks...)
		}
	}
	return out
}

func cloneItems(items []ListItem) []ListItem {
	if items == nil {
		return nil
	}
	out := make([]ListItem, len(items))
	for i, it := range items {
		out[i] = ListItem{Task: it.Task, RichText: cloneRuns(it.RichText), Items: cloneItems(it.Items)}
		if it.Blocks != nil {
			out[i].Blocks = make([]Block, len(it.Blocks))
			for j, b := range it.Blocks {
				out[i].Blocks[j] = b.Clone()
			}
		}
	}
	return out
}

func normalizeDoc(d Document) Document {
	out := Document{SchemaVersion: d.SchemaVersion, Blocks: make([]Block, len(d.Blocks))}
	if out.SchemaVersion == 0 {
		out.SchemaVersion = SchemaVersion
	}
	for i, b := range d.Blocks {
		out.Blocks[i] = normalizeBlock(b)
	}
	return out
}

func normalizeBlock(b Block) Block {
	c := Block{ID: b.ID, Type: b.Type}
	if b.Attrs != nil && *b.Attrs != (Attrs{}) {
		a := *b.Attrs
		c.Attrs = &a
	}
	c.RichText = normalizeRuns(b.RichText)
	c.Items = normalizeItems(b.Items)
	for _, r := range b.Rows {
		row := TableRow{}
		for _, cell := range r.Cells {
			row.Cells = append(row.Cells, normalizeRuns(cell))
		}
		c.Rows = append(c.Rows, row)
	}
	for _, ch := range b.Children {
		c.Children = append(c.Children, normalizeBlock(ch))
	}
	for _, col := range b.Cols {
		nc := Column{}
		for _, ch := range col.Blocks {
			nc.Blocks = append(nc.Blocks, normalizeBlock(ch))
		}
		c.Cols = append(c.Cols, nc)
	}
	return c
}

func normalizeRuns(rs []Run) []Run {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Run, len(rs))
	for i, r := range rs {
		out[i] = r
		if len(r.Marks) == 0 {
			out[i].Marks = nil
		} else {
			out[i].Marks = append([]Mark(nil), r.Marks...)
		}
	}
	return out
}

func normalizeItems(items []ListItem) []ListItem {
	if len(items) == 0 {
		return nil
	}
	out := make([]ListItem, len(items))
	for i, it := range items {
		out[i] = ListItem{Task: it.Task, RichText: normalizeRuns(it.RichText), Items: normalizeItems(it.Items)}
		for _, b := range it.Blocks {
			out[i].Blocks = append(out[i].Blocks, normalizeBlock(b))
		}
	}
	return out
}

func mustMarshal(v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("flowdoc: encode: %v", err)) // only plain data types: cannot fail
	}
	return buf.Bytes()
}
