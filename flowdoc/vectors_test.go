package flowdoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The -update flag rewrites golden output in ../testdata/flowdoc. Other
// golden tests of this package may declare the same flag as a package
// variable; those register before any init runs, so registering it here
// only when it is missing never collides.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata")
	}
}

// updating reports whether -update was given.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// vectorDir holds the test vectors shared with client implementations.
var vectorDir = filepath.Join("..", "testdata", "flowdoc")

type blockVectors struct {
	Comment string          `json:"comment"`
	Valid   []validVector   `json:"valid"`
	Invalid []invalidVector `json:"invalid"`
}

type validVector struct {
	Name string          `json:"name"`
	Doc  json.RawMessage `json:"doc"`
}

type invalidVector struct {
	Name     string          `json:"name"`
	JSON     string          `json:"json,omitempty"` // input that is not a JSON document literal
	Doc      json.RawMessage `json:"doc,omitempty"`
	Limits   *vectorLimits   `json:"limits,omitempty"`
	Problems []string        `json:"problems"`
}

type vectorLimits struct {
	MaxBlocks int `json:"maxBlocks,omitempty"`
	MaxBytes  int `json:"maxBytes,omitempty"`
}

type opVectors struct {
	Comment string                     `json:"comment"`
	Docs    map[string]json.RawMessage `json:"docs"`
	Vectors []opVector                 `json:"vectors"`
}

type opVector struct {
	Name       string            `json:"name"`
	Doc        string            `json:"doc"`
	Ops        json.RawMessage   `json:"ops"`
	ExpectText map[string]string `json:"expectText,omitempty"`
	Result     json.RawMessage   `json:"result,omitempty"`
	Error      string            `json:"error,omitempty"`
}

func readVectors(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func writeVectors(t testing.TB, name string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vectorDir, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func problemStrings(err error) []string {
	var out []string
	switch e := err.(type) {
	case *ValidationError:
		for _, p := range e.Problems {
			out = append(out, p.String())
		}
	case *ComplexError:
		for _, p := range e.Problems {
			out = append(out, p.String())
		}
	}
	return out
}

// TestBlockVectors checks every valid vector normalizes cleanly and
// round-trips, and every invalid vector reports exactly its problems.
func TestBlockVectors(t *testing.T) {
	var vs blockVectors
	readVectors(t, "blocks.json", &vs)
	for _, v := range vs.Valid {
		t.Run("valid/"+v.Name, func(t *testing.T) {
			d, err := Parse(v.Doc)
			if err != nil {
				t.Fatal(err)
			}
			n, err := Normalize(d, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(CanonicalJSON(n))
			if err != nil {
				t.Fatalf("canonical JSON does not parse: %v", err)
			}
			if !bytes.Equal(CanonicalJSON(back), CanonicalJSON(n)) || FingerprintOf(back) != FingerprintOf(n) {
				t.Fatalf("round trip changed the document:\n%s\n%s", CanonicalJSON(n), CanonicalJSON(back))
			}
		})
	}
	for i := range vs.Invalid {
		v := &vs.Invalid[i]
		t.Run("invalid/"+v.Name, func(t *testing.T) {
			input := []byte(v.JSON)
			if v.JSON == "" {
				input = v.Doc
			}
			l := DefaultLimits
			if v.Limits != nil {
				l = Limits{MaxBlocks: v.Limits.MaxBlocks, MaxBytes: v.Limits.MaxBytes}
			}
			var got []string
			d, err := Parse(input)
			if err != nil {
				got = problemStrings(err)
				if got == nil {
					t.Fatalf("Parse error is not a *ValidationError: %v", err)
				}
			} else {
				for _, p := range Validate(d, l) {
					got = append(got, p.String())
				}
				// Normalize sees the same problems minus those Sanitize
				// legitimately removes (unknown marks, empty runs).
				if _, err := Normalize(d, l); err == nil && !allSanitizable(got) {
					t.Fatalf("Normalize accepted a document Validate rejects: %v", got)
				}
			}
			if len(got) == 0 {
				t.Fatal("no problems reported for an invalid vector")
			}
			if updating() {
				v.Problems = got
				return
			}
			if !sameStrings(got, v.Problems) {
				t.Fatalf("problems differ\n got: %q\nwant: %q", got, v.Problems)
			}
		})
	}
	if updating() {
		writeVectors(t, "blocks.json", vs)
	}
}

func allSanitizable(problems []string) bool {
	for _, p := range problems {
		if !bytes.Contains([]byte(p), []byte("unknown mark")) && !bytes.Contains([]byte(p), []byte("a run needs text")) {
			return false
		}
	}
	return true
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOpVectors runs the shared operation vectors: expectText (written by
// hand) must match the plain text of the result, and result/error are
// golden output.
func TestOpVectors(t *testing.T) {
	var vs opVectors
	readVectors(t, "ops.json", &vs)
	for i := range vs.Vectors {
		v := &vs.Vectors[i]
		t.Run(v.Name, func(t *testing.T) {
			d, err := Parse(vs.Docs[v.Doc])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Normalize(d, DefaultLimits); err != nil {
				t.Fatalf("base document %q is invalid: %v", v.Doc, err)
			}
			var ops []Op
			dec := json.NewDecoder(bytes.NewReader(v.Ops))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ops); err != nil {
				t.Fatal(err)
			}
			before := CanonicalJSON(d)
			got, err := Apply(d, ops, DefaultLimits)
			if !bytes.Equal(CanonicalJSON(d), before) {
				t.Fatal("Apply modified its input")
			}
			var result json.RawMessage
			var errText string
			if err != nil {
				errText = err.Error()
				if v.ExpectText != nil {
					t.Fatalf("unexpected error: %v", err)
				}
			} else {
				result = CanonicalJSON(got)
				for id, want := range v.ExpectText {
					list, j, ok := locate(&got.Blocks, id)
					if !ok {
						t.Fatalf("block %q missing from the result", id)
					}
					if pt := PlainText((*list)[j].RichText); pt != want {
						t.Fatalf("plain text of %q = %q, want %q", id, pt, want)
					}
				}
			}
			if updating() {
				v.Result, v.Error = result, errText
				return
			}
			if errText != v.Error {
				t.Fatalf("error = %q, want %q", errText, v.Error)
			}
			if !bytes.Equal(compactedJSON(t, result), compactedJSON(t, v.Result)) {
				t.Fatalf("result differs\n got: %s\nwant: %s", result, v.Result)
			}
		})
	}
	if updating() {
		writeVectors(t, "ops.json", vs)
	}
}

func compactedJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	if len(b) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFingerprintBytes: the body fingerprint is SHA-256 over
// "folio/body\x00" and, for each block in order, one byte of the id's
// length, the id and the 32-byte content id (docs/objects.md), whatever
// the number of blocks (the hasher buffers its input).
func TestFingerprintBytes(t *testing.T) {
	for _, n := range []int{0, 1, 2, 107, 108, 109, 200, 1000} {
		hs := make([]BlockHash, n)
		ref := sha256.New()
		ref.Write([]byte("folio/body\x00"))
		for i := range hs {
			hs[i].ID = fmt.Sprintf("b%0*d", 1+i%60, i)
			for j := range hs[i].Hash {
				hs[i].Hash[j] = byte(i*31 + j)
			}
			ref.Write([]byte{byte(len(hs[i].ID))})
			ref.Write([]byte(hs[i].ID))
			ref.Write(hs[i].Hash[:])
		}
		var want Fingerprint
		ref.Sum(want[:0])
		if got := FingerprintOfHashes(hs); got != want {
			t.Fatalf("%d blocks: fingerprint %x, want %x", n, got, want)
		}
	}
}
