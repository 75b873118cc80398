package flowdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// seedDocs returns every document of the shared vectors, valid and
// invalid, plus a few random ones.
func seedDocs(f *testing.F) [][]byte {
	var bv blockVectors
	readVectors(f, "blocks.json", &bv)
	var out [][]byte
	for _, v := range bv.Valid {
		out = append(out, v.Doc)
	}
	for _, v := range bv.Invalid {
		if v.JSON != "" {
			out = append(out, []byte(v.JSON))
		} else {
			out = append(out, v.Doc)
		}
	}
	var ov opVectors
	readVectors(f, "ops.json", &ov)
	for _, d := range ov.Docs {
		out = append(out, d)
	}
	for seed := uint64(0); seed < 4; seed++ {
		out = append(out, CanonicalJSON(newDocGen(seed).doc(6)))
	}
	return out
}

// FuzzParseValidate: Parse and Validate never panic; Parse fails only with
// a *ValidationError; Sanitize is idempotent; a valid sanitized document
// round-trips through CanonicalJSON and Parse unchanged.
func FuzzParseValidate(f *testing.F) {
	for _, d := range seedDocs(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("Parse error %T %v is not a *ValidationError with problems", err, err)
			}
			return
		}
		for _, p := range Validate(d, DefaultLimits) {
			if p.Path == "" || p.Rule == "" {
				t.Fatalf("problem without path or rule: %+v", p)
			}
		}
		s := Sanitize(d)
		canon := CanonicalJSON(s)
		if !bytes.Equal(CanonicalJSON(Sanitize(s)), canon) {
			t.Fatalf("Sanitize is not idempotent on %s", data)
		}
		if len(Validate(s, DefaultLimits)) > 0 {
			return
		}
		back, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical JSON of a valid document does not parse: %v\n%s", err, canon)
		}
		if !bytes.Equal(CanonicalJSON(back), canon) || FingerprintOf(back) != FingerprintOf(s) {
			t.Fatalf("round trip changed the document:\n%s\n%s", canon, CanonicalJSON(back))
		}
		if ps := Validate(back, DefaultLimits); len(ps) > 0 {
			t.Fatalf("round trip made a valid document invalid: %v", ps)
		}
	})
}

// FuzzApply: Apply never panics, never modifies its input, and returns
// either a valid sanitized document or an *OpError.
func FuzzApply(f *testing.F) {
	var ov opVectors
	readVectors(f, "ops.json", &ov)
	for _, v := range ov.Vectors {
		f.Add([]byte(ov.Docs[v.Doc]), []byte(v.Ops))
	}
	for seed := uint64(0); seed < 8; seed++ {
		g := newDocGen(seed)
		d := g.doc(5)
		ops := []Op{g.op(d), g.op(d)}
		b, _ := json.Marshal(ops)
		f.Add(CanonicalJSON(d), b)
	}
	f.Fuzz(func(t *testing.T, docJSON, opsJSON []byte) {
		d, err := Parse(docJSON)
		if err != nil {
			return
		}
		var ops []Op
		if json.Unmarshal(opsJSON, &ops) != nil {
			return
		}
		l := Limits{MaxBlocks: 500, MaxBytes: 1 << 20}
		before := CanonicalJSON(d)
		got, err := Apply(d, ops, l)
		if !bytes.Equal(CanonicalJSON(d), before) {
			t.Fatal("Apply modified its input")
		}
		if err != nil {
			var oe *OpError
			var ve *ValidationError
			if !errors.As(err, &oe) && !(len(ops) == 0 && errors.As(err, &ve)) {
				t.Fatalf("error %T %v is not an *OpError", err, err)
			}
			return
		}
		if ps := Validate(got, l); len(ps) > 0 {
			t.Fatalf("Apply returned an invalid document: %v", ps)
		}
		if !bytes.Equal(CanonicalJSON(Sanitize(got)), CanonicalJSON(got)) {
			t.Fatal("Apply returned an unsanitized document")
		}
		_ = TargetBlocks(d, ops)
	})
}

// FuzzApplyGenerated drives Apply with random documents and operation
// sequences built from the fuzzer's seed, which reaches far more valid
// operations than mutating JSON bytes does.
func FuzzApplyGenerated(f *testing.F) {
	for seed := uint64(0); seed < 16; seed++ {
		f.Add(seed, uint8(seed))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		g := newDocGen(seed)
		d := g.doc(1 + int(n%16))
		for step := 0; step < 6; step++ {
			ops := []Op{g.op(d), g.op(d)}
			got, err := Apply(d, ops, DefaultLimits)
			if err != nil {
				var oe *OpError
				if !errors.As(err, &oe) {
					t.Fatalf("error %T %v is not an *OpError", err, err)
				}
				continue
			}
			if ps := Validate(got, DefaultLimits); len(ps) > 0 {
				t.Fatalf("Apply returned an invalid document: %v", ps)
			}
			d = got
		}
	})
}
