// Package boundedtest holds decoders to their memory bound in tests.
//
// A package that decodes outside input lists its decoders as Targets. Each
// Target is a fuzz target (Fuzz) and, through CheckMemory, the subject of
// a test that decodes every entry of its corpus — the seeds and the files
// under testdata/fuzz/<Name> that `go test -fuzz` saved — with a low
// memory limit, measuring what each decode allocates (the runtime's
// cumulative allocation count around the call) and failing when it
// exceeds PerByte × len(input) + Base. A decoder that trusts a length it
// reads makes the test fail, or the process die of it.
package boundedtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// The bound CheckMemory holds every decode to: what package bounded
// allows a msgpack or JSON decode (128 bytes per input byte plus 64 KiB),
// with room in the constant for what a decoder does besides (wrapping
// errors, an index of the decoded value) and for the first use of a type,
// which fills the codecs' caches.
const (
	PerByte = 128
	Base    = 256 << 10
)

// Target is a fuzz target over decoders of outside input.
type Target struct {
	// Name is the fuzz target's name, which names its corpus directory
	// testdata/fuzz/<Name>.
	Name string
	// Seeds are added to the fuzz corpus and checked by CheckMemory.
	Seeds [][]byte
	// Decoders each decode one input once (errors are fine, panics are
	// not); CheckMemory measures each on its own.
	Decoders []Decoder
	// Check, when set, is what the fuzz target runs on each input: the
	// decoders and whatever properties their results must have. Without
	// it the fuzz target runs every decoder.
	Check func(t *testing.T, data []byte)
	// Expands, when set, returns how many bytes an input legitimately
	// expands to (a compressed payload); CheckMemory allows twice that on
	// top of the bound.
	Expands func(data []byte) int
	// Overhead is what the decoder allocates whatever its input (a reader's
	// buffers), allowed on top of Base.
	Overhead int
	// Prepare, when set, runs before each decoder on the same input and is
	// not measured (for example, it stores the input where the decoder
	// reads it).
	Prepare func(data []byte)
}

// Decoder is one decode of an input.
type Decoder struct {
	Name string
	Fn   func(data []byte)
}

// Fuzz runs tg as the fuzz target f.
func Fuzz(f *testing.F, tg Target) {
	for _, s := range tg.Seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if tg.Check != nil {
			tg.Check(t, data)
			return
		}
		for _, d := range tg.Decoders {
			if tg.Prepare != nil {
				tg.Prepare(data)
			}
			d.Fn(data)
		}
	})
}

// Corpus returns tg's seeds and the inputs saved under
// testdata/fuzz/<Name> (relative to the test's package directory), each
// with a name for messages.
func Corpus(t testing.TB, tg Target) (names []string, inputs [][]byte) {
	t.Helper()
	for i, s := range tg.Seeds {
		names = append(names, tg.Name+"/seed#"+strconv.Itoa(i))
		inputs = append(inputs, s)
	}
	dir := filepath.Join("testdata", "fuzz", tg.Name)
	files, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, fi := range files {
		if fi.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, fi.Name()))
		if err != nil {
			t.Fatal(err)
		}
		in, err := parseCorpusFile(raw)
		if err != nil {
			t.Fatalf("%s/%s: %v", dir, fi.Name(), err)
		}
		names = append(names, tg.Name+"/"+fi.Name())
		inputs = append(inputs, in)
	}
	return names, inputs
}

// parseCorpusFile reads a one-argument corpus file of `go test -fuzz`
// ("go test fuzz v1" then []byte("...") or string("...")).
func parseCorpusFile(raw []byte) ([]byte, error) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() || sc.Text() != "go test fuzz v1" {
		return nil, fmt.Errorf("not a fuzz corpus file")
	}
	if !sc.Scan() {
		return nil, fmt.Errorf("no value")
	}
	line := strings.TrimSpace(sc.Text())
	for _, p := range []string{"[]byte(", "string("} {
		if strings.HasPrefix(line, p) && strings.HasSuffix(line, ")") {
			s, err := strconv.Unquote(line[len(p) : len(line)-1])
			if err != nil {
				return nil, err
			}
			return []byte(s), nil
		}
	}
	return nil, fmt.Errorf("unsupported value %.40q", line)
}

// CheckMemory decodes every corpus entry of every target under a 256 MiB
// soft memory limit and fails for each decode that allocated more than
// PerByte × len(input) + Base bytes (plus twice the expansion of a
// compressed input). Each decoder runs once on its first input before
// anything is measured, so that caches filled on first use are not
// charged to an input. With -v it logs the largest allocation per target.
func CheckMemory(t *testing.T, targets ...Target) {
	t.Helper()
	old := debug.SetMemoryLimit(256 << 20)
	defer debug.SetMemoryLimit(old)
	for _, tg := range targets {
		names, inputs := Corpus(t, tg)
		if len(inputs) == 0 {
			t.Errorf("%s: empty corpus", tg.Name)
			continue
		}
		for _, d := range tg.Decoders {
			if tg.Prepare != nil {
				tg.Prepare(inputs[0])
			}
			d.Fn(inputs[0])
			worst, worstName, worstGot := 0.0, "", uint64(0)
			for i, in := range inputs {
				if tg.Prepare != nil {
					tg.Prepare(in)
				}
				got := Allocated(func() { d.Fn(in) })
				limit := uint64(PerByte*len(in) + Base + tg.Overhead)
				if tg.Expands != nil {
					limit += 2 * uint64(tg.Expands(in))
				}
				if got > limit {
					t.Errorf("%s %s (%d bytes): decoding allocated %d bytes, more than %d", d.Name, names[i], len(in), got, limit)
				}
				if r := float64(got) / float64(limit); r > worst {
					worst, worstName, worstGot = r, names[i], got
				}
			}
			t.Logf("%s %s: %d inputs; closest to the bound: %s, %d bytes allocated (%.0f%% of its bound)",
				tg.Name, d.Name, len(inputs), worstName, worstGot, 100*worst)
		}
	}
}

// Allocated returns the bytes of heap memory allocated while fn ran (the
// growth of runtime.MemStats.TotalAlloc, which counts every allocation,
// freed or not).
func Allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
