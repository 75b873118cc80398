package flowdoc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// SchemaVersion is the FlowDocument schema this package reads and writes.
const SchemaVersion = 1

// Document is a FlowDocument body: an ordered list of blocks.
type Document struct {
	SchemaVersion int     `json:"schemaVersion" msgpack:"v"`
	Blocks        []Block `json:"blocks" msgpack:"b,omitempty"`
}

// BlockType names a kind of block.
type BlockType string

// The block types. Text blocks (paragraph, heading, quote) carry only rich
// text; every other type is a complex block that a whole-document candidate
// must keep unchanged (see GuardComplex).
const (
	Paragraph BlockType = "paragraph"
	Heading   BlockType = "heading"
	Quote     BlockType = "quote"
	List      BlockType = "list"
	Code      BlockType = "code"
	Equation  BlockType = "equation"
	Media     BlockType = "media"
	Table     BlockType = "table"
	Callout   BlockType = "callout"
	Details   BlockType = "details"
	Columns   BlockType = "columns"
	Bookmark  BlockType = "bookmark"
	File      BlockType = "file"
	Embed     BlockType = "embed"
	Divider   BlockType = "divider"
)

// BlockTypes lists every block type in a stable order.
var BlockTypes = []BlockType{Paragraph, Heading, Quote, List, Code, Equation, Media,
	Table, Callout, Details, Columns, Bookmark, File, Embed, Divider}

// IsText reports whether t is a text block (paragraph, heading, quote).
func (t BlockType) IsText() bool { return t == Paragraph || t == Heading || t == Quote }

// Block is one block of a document. Which fields are used depends on Type:
//
//	paragraph, quote   RichText
//	heading            Attrs.Level (1..MaxHeadingLevel), RichText
//	list               Attrs.Ordered, Attrs.Start (first number, unset: 1), Attrs.Loose, Items (nested; each item may hold Blocks)
//	code               Attrs.Language, Attrs.Text
//	equation           Attrs.Latex
//	media              Attrs.Kind (image|video), Attrs.Src, Attrs.Alt, Attrs.Caption
//	table              Attrs.Header (first row is a header), Rows
//	callout            Attrs.Icon, RichText
//	details            RichText (the summary), Children
//	columns            Cols (each a list of blocks)
//	bookmark           Attrs.URL, Attrs.Title, Attrs.Description
//	file               Attrs.Src, Attrs.Name, Attrs.Size
//	embed              Attrs.URL, Attrs.Provider
//	divider            nothing (a thematic break between sections)
//
// The msgpack tags are the canonical (storage) names; JSON is the wire form.
type Block struct {
	ID       string     `json:"id" msgpack:"id,omitempty"`
	Type     BlockType  `json:"type" msgpack:"t"`
	Attrs    *Attrs     `json:"attrs,omitempty" msgpack:"a,omitempty"`
	RichText []Run      `json:"richText,omitempty" msgpack:"r,omitempty"`
	Items    []ListItem `json:"items,omitempty" msgpack:"i,omitempty"`
	Rows     []TableRow `json:"rows,omitempty" msgpack:"w,omitempty"`
	Children []Block    `json:"children,omitempty" msgpack:"c,omitempty"`
	Cols     []Column   `json:"columns,omitempty" msgpack:"k,omitempty"`
}

// Attrs are the typed attributes of a block; unused fields stay zero.
type Attrs struct {
	Level       int    `json:"level,omitempty" msgpack:"level,omitempty"`
	Ordered     bool   `json:"ordered,omitempty" msgpack:"ordered,omitempty"`
	Start       int    `json:"start,omitempty" msgpack:"start,omitempty"`
	Loose       bool   `json:"loose,omitempty" msgpack:"loose,omitempty"` // list: items spaced as paragraphs
	Language    string `json:"language,omitempty" msgpack:"language,omitempty"`
	Text        string `json:"text,omitempty" msgpack:"text,omitempty"`
	Latex       string `json:"latex,omitempty" msgpack:"latex,omitempty"`
	Kind        string `json:"kind,omitempty" msgpack:"kind,omitempty"`
	Src         string `json:"src,omitempty" msgpack:"src,omitempty"`
	Alt         string `json:"alt,omitempty" msgpack:"alt,omitempty"`
	Caption     string `json:"caption,omitempty" msgpack:"caption,omitempty"`
	Header      bool   `json:"header,omitempty" msgpack:"header,omitempty"`
	Icon        string `json:"icon,omitempty" msgpack:"icon,omitempty"`
	URL         string `json:"url,omitempty" msgpack:"url,omitempty"`
	Title       string `json:"title,omitempty" msgpack:"title,omitempty"`
	Description string `json:"description,omitempty" msgpack:"description,omitempty"`
	Name        string `json:"name,omitempty" msgpack:"name,omitempty"`
	Size        int64  `json:"size,omitempty" msgpack:"size,omitempty"`
	Provider    string `json:"provider,omitempty" msgpack:"provider,omitempty"`
}

// Task states of a list item.
const (
	TaskOpen = "open"
	TaskDone = "done"
)

// ListItem is one item of a list block: a task state, rich text (its first paragraph),
// the blocks that follow it in the item (further paragraphs, code, quotes,
// a list of another kind …) and nested items, shown in that order.
type ListItem struct {
	Task     string     `json:"task,omitempty" msgpack:"t,omitempty"` // "open" or "done": a task-list item's checkbox
	RichText []Run      `json:"richText" msgpack:"r,omitempty"`
	Blocks   []Block    `json:"blocks,omitempty" msgpack:"b,omitempty"`
	Items    []ListItem `json:"items,omitempty" msgpack:"i,omitempty"`
}

// Nested returns every list of blocks nested directly in b, so that a walk
// over a document's blocks reaches all of them: the children of details,
// the blocks of each column and of each list item (nested items
// included).
func (b *Block) Nested() []*[]Block {
	var out []*[]Block
	if b.Children != nil {
		out = append(out, &b.Children)
	}
	for i := range b.Cols {
		out = append(out, &b.Cols[i].Blocks)
	}
	var items func([]ListItem)
	items = func(its []ListItem) {
		for i := range its {
			if its[i].Blocks != nil {
				out = append(out, &its[i].Blocks)
			}
			items(its[i].Items)
		}
	}
	items(b.Items)
	return out
}

// TableRow is one row of a table: one rich-text value per cell.
type TableRow struct {
	Cells [][]Run `json:"cells" msgpack:"c,omitempty"`
}

// Column is one column of a columns block.
type Column struct {
	Blocks []Block `json:"blocks" msgpack:"b,omitempty"`
}

// Mark is an inline style of a run.
type Mark string

// The marks, in canonical order.
const (
	Bold      Mark = "bold"
	Italic    Mark = "italic"
	Underline Mark = "underline"
	Strike    Mark = "strike"
	CodeMark  Mark = "code"
)

// Marks lists the known marks in canonical order.
var Marks = []Mark{Bold, Italic, Underline, Strike, CodeMark}

// Run is a span of rich text. A run is either text (Text, with optional
// Marks, Link and the link's Title) or an inline equation (Equation holds
// LaTeX, Text empty).
type Run struct {
	Text     string `json:"text,omitempty" msgpack:"t,omitempty"`
	Marks    []Mark `json:"marks,omitempty" msgpack:"m,omitempty"`
	Link     string `json:"link,omitempty" msgpack:"l,omitempty"`
	Title    string `json:"title,omitempty" msgpack:"lt,omitempty"` // the link's title (a tooltip); only with Link
	Equation string `json:"equation,omitempty" msgpack:"e,omitempty"`
}

// Attributes are an article's attributes, versioned with its body.
type Attributes struct {
	Title      string   `json:"title" msgpack:"title"`
	Summary    string   `json:"summary,omitempty" msgpack:"summary,omitempty"`
	Slug       string   `json:"slug,omitempty" msgpack:"slug,omitempty"`
	Category   string   `json:"category,omitempty" msgpack:"category,omitempty"`
	Tags       []string `json:"tags,omitempty" msgpack:"tags,omitempty"`
	Status     string   `json:"status,omitempty" msgpack:"status,omitempty"`         // draft | published
	Visibility string   `json:"visibility,omitempty" msgpack:"visibility,omitempty"` // public | private | password
}

// Fingerprint identifies a body: its ordered block ids and their content
// hashes (see FingerprintOfHashes).
type Fingerprint [32]byte

// String is the lowercase hex form.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// Short is the first 12 hex digits.
func (f Fingerprint) Short() string { return f.String()[:12] }

// IsZero reports whether f is unset.
func (f Fingerprint) IsZero() bool { return f == Fingerprint{} }

// ParseFingerprint reads the hex form.
func ParseFingerprint(s string) (Fingerprint, error) {
	var f Fingerprint
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(f) {
		return f, fmt.Errorf("flowdoc: fingerprint %q is not 64 hex digits", s)
	}
	copy(f[:], b)
	return f, nil
}

// MarshalText implements encoding.TextMarshaler (hex).
func (f Fingerprint) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex).
func (f *Fingerprint) UnmarshalText(b []byte) error {
	g, err := ParseFingerprint(string(b))
	if err != nil {
		return err
	}
	*f = g
	return nil
}

func sum(domain string, data []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write([]byte{0})
	h.Write(data)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// EncodeMsgpack stores a fingerprint as 32 raw bytes (msgpack bin), as
// object ids are: it is hashed into every version and carried in events.
func (f Fingerprint) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeBytes(f[:]) }

// DecodeMsgpack reads the form EncodeMsgpack writes.
func (f *Fingerprint) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	if len(b) != len(f) {
		return fmt.Errorf("flowdoc: fingerprint of %d bytes, want %d", len(b), len(f))
	}
	copy(f[:], b)
	return nil
}
