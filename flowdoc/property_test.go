package flowdoc

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

// TestApplyProperties applies random operation sequences to random
// documents: every success is a valid, sanitized document; every failure
// is an *OpError; replace_selection yields exactly the expected plain text;
// applying a sequence at once equals applying it op by op.
func TestApplyProperties(t *testing.T) {
	rounds := 400
	if testing.Short() {
		rounds = 60
	}
	var applied, failed, selections int
	for seed := 0; seed < rounds; seed++ {
		g := newDocGen(uint64(seed))
		d := g.doc(1 + g.r.IntN(12))
		if ps := Validate(d, DefaultLimits); len(ps) > 0 {
			t.Fatalf("seed %d: generator made an invalid document: %v", seed, ps)
		}
		cur := d
		var okOps []Op
		for step := 0; step < 8; step++ {
			op := g.op(cur)
			snapshot := CanonicalJSON(cur)
			next, err := Apply(cur, []Op{op}, DefaultLimits)
			if !bytes.Equal(CanonicalJSON(cur), snapshot) {
				t.Fatalf("seed %d step %d: Apply modified its input", seed, step)
			}
			if err != nil {
				var oe *OpError
				if !errors.As(err, &oe) || oe.Index != 0 || oe.Op != op.Op {
					t.Fatalf("seed %d step %d: error %T %v is not an *OpError for op 0", seed, step, err, err)
				}
				failed++
				continue
			}
			applied++
			if ps := Validate(next, DefaultLimits); len(ps) > 0 {
				t.Fatalf("seed %d step %d: %s produced an invalid document: %v", seed, step, op.Op, ps)
			}
			if !bytes.Equal(CanonicalJSON(Sanitize(next)), CanonicalJSON(next)) {
				t.Fatalf("seed %d step %d: result is not sanitized", seed, step)
			}
			if op.Op == ReplaceSelection {
				selections++
				l, i, _ := locate(&cur.Blocks, op.BlockID)
				old := []rune(PlainText((*l)[i].RichText))
				want := string(old[:op.Start]) + PlainText(op.RichText) + string(old[op.End:])
				nl, ni, ok := locate(&next.Blocks, op.BlockID)
				if !ok {
					t.Fatalf("seed %d step %d: block %s vanished", seed, step, op.BlockID)
				}
				if got := PlainText((*nl)[ni].RichText); got != want {
					t.Fatalf("seed %d step %d: plain text %q, want %q", seed, step, got, want)
				}
				if utf8.RuneCountInString(want) != textLen((*nl)[ni].RichText) {
					t.Fatalf("seed %d step %d: code point count mismatch", seed, step)
				}
			}
			if op.Op == ReplaceDocument {
				if ps := GuardComplex(cur, next); len(ps) > 0 {
					t.Fatalf("seed %d step %d: replace_document passed but the guard fails: %v", seed, step, ps)
				}
			}
			okOps = append(okOps, op)
			cur = next
		}
		all, err := Apply(d, okOps, DefaultLimits)
		if err != nil {
			t.Fatalf("seed %d: the sequence of successful ops failed at once: %v", seed, err)
		}
		if !bytes.Equal(CanonicalJSON(all), CanonicalJSON(cur)) {
			t.Fatalf("seed %d: Apply(seq) differs from applying op by op", seed)
		}
	}
	if applied == 0 || failed == 0 || selections == 0 {
		t.Fatalf("generator does not exercise both outcomes: applied %d, failed %d, selections %d", applied, failed, selections)
	}
	t.Logf("%d ops applied (%d selections), %d rejected", applied, selections, failed)
}

// TestSanitizeProperties: Sanitize is idempotent and keeps plain text on
// random rich text, including runs with unknown marks and empty runs.
func TestSanitizeProperties(t *testing.T) {
	for seed := 0; seed < 300; seed++ {
		g := newDocGen(uint64(seed))
		d := g.doc(4)
		// Dirty it: split runs, add empty runs and unknown or repeated marks.
		for i := range d.Blocks {
			var dirty []Run
			for _, r := range d.Blocks[i].RichText {
				if r.Equation == "" && len(r.Text) > 1 && g.r.IntN(2) == 0 {
					cut := byteOffset(r.Text, 1)
					a, b := cloneRun(r), cloneRun(r)
					a.Text, b.Text = r.Text[:cut], r.Text[cut:]
					b.Marks = append(b.Marks, "sparkle")
					b.Marks = append(b.Marks, b.Marks...)
					dirty = append(dirty, a, Run{Marks: []Mark{Bold}}, b)
					continue
				}
				dirty = append(dirty, r)
			}
			want := PlainText(d.Blocks[i].RichText)
			d.Blocks[i].RichText = dirty
			if PlainText(dirty) != want {
				t.Fatal("dirtying changed the text")
			}
		}
		s := Sanitize(d)
		if !bytes.Equal(CanonicalJSON(Sanitize(s)), CanonicalJSON(s)) {
			t.Fatalf("seed %d: Sanitize not idempotent", seed)
		}
		for i := range d.Blocks {
			if PlainText(s.Blocks[i].RichText) != PlainText(d.Blocks[i].RichText) {
				t.Fatalf("seed %d: Sanitize changed the text", seed)
			}
		}
		if ps := Validate(s, DefaultLimits); len(ps) > 0 {
			t.Fatalf("seed %d: sanitized document invalid: %v", seed, ps)
		}
	}
}
