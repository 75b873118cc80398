package source

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
)

// VersionID is the object id of an immutable document version (the same
// 32 bytes as objstore.ID; convert with source.VersionID(id)).
type VersionID [32]byte

// String is the 64-digit lowercase hex form.
func (v VersionID) String() string { return hex.EncodeToString(v[:]) }

// Short is the first 12 hex digits.
func (v VersionID) Short() string { return v.String()[:12] }

// IsZero reports whether v is the zero id.
func (v VersionID) IsZero() bool { return v == VersionID{} }

// ParseVersionID reads the 64-digit hex form.
func ParseVersionID(s string) (VersionID, error) {
	var v VersionID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(v) {
		return v, fmt.Errorf("source: version id %q is not 64 hex digits", s)
	}
	copy(v[:], b)
	return v, nil
}

// MarshalText gives JSON the hex form.
func (v VersionID) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads the hex form.
func (v *VersionID) UnmarshalText(b []byte) error {
	p, err := ParseVersionID(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Pin names one immutable version of a source article.
type Pin struct {
	Doc         string              `json:"doc" msgpack:"doc"`
	Version     VersionID           `json:"version" msgpack:"ver"`
	Label       string              `json:"label" msgpack:"label"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint" msgpack:"fp"`
	// Time is when the version was made (Unix milliseconds): what orders
	// facts that do not say when they happened.
	Time int64 `json:"time,omitempty" msgpack:"time,omitempty"`
}

// Same reports whether p and q name the same version with the same body.
func (p Pin) Same(q Pin) bool {
	return p.Doc == q.Doc && p.Version == q.Version && p.Fingerprint == q.Fingerprint
}

// String is doc@label (short version id).
func (p Pin) String() string { return p.Doc + "@" + p.Label + " (" + p.Version.Short() + ")" }

// Block is one block's plain text. Text blocks keep their rich text's
// plain form (flowdoc.PlainText, an inline equation is U+FFFC); lists
// give one Block per item (Type list, Item the item's index in document
// order); code keeps its text; other complex blocks are skipped.
type Block struct {
	ID    string            `json:"id" msgpack:"id"`
	Type  flowdoc.BlockType `json:"type" msgpack:"t"`
	Level int               `json:"level,omitempty" msgpack:"lv,omitempty"`
	Item  int               `json:"item,omitempty" msgpack:"it,omitempty"`
	Text  string            `json:"text" msgpack:"x"`
}

// Document is a pinned source reduced to text.
type Document struct {
	Pin      Pin                `json:"pin" msgpack:"pin"`
	Attrs    flowdoc.Attributes `json:"attrs" msgpack:"attrs"`
	Blocks   []Block            `json:"blocks" msgpack:"blocks"`
	Complex  map[string]int     `json:"complex,omitempty" msgpack:"complex,omitempty"` // counts of skipped block types
	TopLevel int                `json:"topLevel" msgpack:"top"`                        // top-level blocks in the body
}

// FromFlow reduces a FlowDocument version to its text.
func FromFlow(pin Pin, attrs flowdoc.Attributes, d flowdoc.Document) Document {
	out := Document{Pin: pin, Attrs: attrs, TopLevel: len(d.Blocks)}
	var walk func(bs []flowdoc.Block)
	walk = func(bs []flowdoc.Block) {
		for _, b := range bs {
			switch {
			case b.Type.IsText():
				lv := 0
				if b.Attrs != nil {
					lv = b.Attrs.Level
				}
				out.Blocks = append(out.Blocks, Block{ID: b.ID, Type: b.Type, Level: lv, Text: flowdoc.PlainText(b.RichText)})
			case b.Type == flowdoc.List:
				n := 0
				var items func(its []flowdoc.ListItem)
				items = func(its []flowdoc.ListItem) {
					for _, it := range its {
						out.Blocks = append(out.Blocks, Block{ID: b.ID, Type: flowdoc.List, Item: n, Text: flowdoc.PlainText(it.RichText)})
						n++
						items(it.Items)
					}
				}
				items(b.Items)
			case b.Type == flowdoc.Code:
				t := ""
				if b.Attrs != nil {
					t = b.Attrs.Text
				}
				out.Blocks = append(out.Blocks, Block{ID: b.ID, Type: flowdoc.Code, Text: t})
			case b.Type == flowdoc.Callout:
				out.Blocks = append(out.Blocks, Block{ID: b.ID, Type: flowdoc.Paragraph, Text: flowdoc.PlainText(b.RichText)})
			case b.Type == flowdoc.Details:
				out.Blocks = append(out.Blocks, Block{ID: b.ID, Type: flowdoc.Paragraph, Text: flowdoc.PlainText(b.RichText)})
				walk(b.Children)
			case b.Type == flowdoc.Columns:
				for _, c := range b.Cols {
					walk(c.Blocks)
				}
			default:
				if out.Complex == nil {
					out.Complex = map[string]int{}
				}
				out.Complex[string(b.Type)]++
			}
		}
	}
	walk(d.Blocks)
	return out
}

// Prose returns the blocks whose text is prose: paragraphs, headings,
// quotes and list items (code is not prose).
func (d Document) Prose() []Block {
	out := make([]Block, 0, len(d.Blocks))
	for _, b := range d.Blocks {
		if b.Type != flowdoc.Code && strings.TrimSpace(b.Text) != "" {
			out = append(out, b)
		}
	}
	return out
}

// Span is a half-open range [Start, End) of code points.
type Span struct {
	Start int `json:"start" msgpack:"s"`
	End   int `json:"end" msgpack:"e"`
}

// Len is the span's length in code points.
func (s Span) Len() int { return s.End - s.Start }

// Slice returns the text of span s of text (code points). A span outside
// text is clipped.
func Slice(text string, s Span) string {
	r := []rune(text)
	a, b := max(0, min(s.Start, len(r))), max(0, min(s.End, len(r)))
	if a >= b {
		return ""
	}
	return string(r[a:b])
}

// Evidence points at the text a claim was built from.
type Evidence struct {
	Doc     string    `json:"doc" msgpack:"doc"`
	Version VersionID `json:"version" msgpack:"ver"`
	Label   string    `json:"label" msgpack:"label"`
	Block   string    `json:"block" msgpack:"block"`
	Item    int       `json:"item,omitempty" msgpack:"item,omitempty"`
	Span    Span      `json:"span" msgpack:"span"`
	// Fingerprint is EvidenceFingerprint of the span's text.
	Fingerprint string `json:"fingerprint" msgpack:"fp"`
}

// EvidenceFingerprint is the first 16 hex digits of the SHA-256 of text
// (the span's text), enough to notice that a span changed.
func EvidenceFingerprint(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:8])
}

// NewEvidence makes the evidence of span s of block b of pinned source p.
func NewEvidence(p Pin, b Block, s Span) Evidence {
	return Evidence{Doc: p.Doc, Version: p.Version, Label: p.Label, Block: b.ID, Item: b.Item, Span: s,
		Fingerprint: EvidenceFingerprint(Slice(b.Text, s))}
}

// Verify reports whether e still describes the text of d (same version,
// span inside the block, fingerprint of the span's text equal).
func (e Evidence) Verify(d Document) bool {
	if d.Pin.Doc != e.Doc || d.Pin.Version != e.Version {
		return false
	}
	for _, b := range d.Blocks {
		if b.ID == e.Block && b.Item == e.Item {
			return utf8.RuneCountInString(b.Text) >= e.Span.End && EvidenceFingerprint(Slice(b.Text, e.Span)) == e.Fingerprint
		}
	}
	return false
}

// IsCJK reports whether r is a Han ideograph, kana or Hangul.
func IsCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r)
}

// closers may follow a sentence terminator and belong to the sentence.
const closers = "”’\"'」』）)]】》>"

// Sentences splits text into sentences: after 。！？!?；; and … (and a
// run of them), after '.' followed by a space or the end (so 3.5 and
// example.com stay whole), and at line breaks. Closing quotes and
// brackets after a terminator stay with its sentence. Spans exclude
// surrounding white space; empty sentences are dropped.
func Sentences(text string) []Span {
	rs := []rune(text)
	var out []Span
	start := 0
	emit := func(end int) {
		a, b := start, end
		for a < b && unicode.IsSpace(rs[a]) {
			a++
		}
		for b > a && unicode.IsSpace(rs[b-1]) {
			b--
		}
		if b > a {
			out = append(out, Span{a, b})
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		term := false
		switch r {
		case '。', '！', '？', '!', '?', '；', ';', '…':
			term = true
		case '.':
			term = i+1 == len(rs) || unicode.IsSpace(rs[i+1]) || strings.ContainsRune(closers, rs[i+1])
		case '\n':
			emit(i)
			continue
		}
		if !term {
			continue
		}
		j := i + 1
		for j < len(rs) && (strings.ContainsRune("。！？!?；;….", rs[j]) || strings.ContainsRune(closers, rs[j])) {
			j++
		}
		emit(j)
		i = j - 1
	}
	emit(len(rs))
	return out
}

// Clauses splits a sentence's text into clauses at commas (，, 、),
// colons and dashes, with the same span rules as Sentences.
func Clauses(text string) []Span {
	rs := []rune(text)
	var out []Span
	start := 0
	emit := func(end int) {
		a, b := start, end
		for a < b && unicode.IsSpace(rs[a]) {
			a++
		}
		for b > a && unicode.IsSpace(rs[b-1]) {
			b--
		}
		if b > a {
			out = append(out, Span{a, b})
		}
	}
	for i, r := range rs {
		if strings.ContainsRune("，,、：:—", r) {
			emit(i + 1)
			start = i + 1
		}
	}
	emit(len(rs))
	return out
}
