package flowdoc

import (
	"fmt"
	"testing"
)

// benchDoc is a document of n top-level blocks (a few nested ones more).
func benchDoc(n int) Document {
	return newDocGen(42).doc(n)
}

func BenchmarkValidateSanitize1000(b *testing.B) {
	d := benchDoc(1000)
	b.SetBytes(int64(len(CanonicalJSON(d))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := Sanitize(d)
		if ps := Validate(s, DefaultLimits); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}

func BenchmarkApply500(b *testing.B) {
	d := benchDoc(500)
	var sel, anchor string
	for _, bl := range d.Blocks {
		if bl.Type == Paragraph && textLen(bl.RichText) > 2 && sel == "" {
			sel = bl.ID
		}
	}
	anchor = d.Blocks[250].ID
	ops := []Op{
		{Op: ReplaceSelection, BlockID: sel, Start: 1, End: 2, RichText: []Run{{Text: "改善", Marks: []Mark{Bold}}}},
		{Op: InsertAfter, BlockID: anchor, Blocks: []Block{{Type: Paragraph, RichText: []Run{{Text: "A new paragraph."}}}}},
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Apply(d, ops, DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFingerprint200: the body fingerprint of a 200-block document,
// what every draft save computes.
func BenchmarkFingerprint200(b *testing.B) {
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%04d", i)
	}
	var h [32]byte
	b.ReportAllocs()
	for b.Loop() {
		f := NewBodyHasher()
		for i, id := range ids {
			h[0] = byte(i)
			f.Add(id, h)
		}
		f.Sum()
	}
}
