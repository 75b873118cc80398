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
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

// The bound CheckMemory holds every decode to: what package bounded
// allows a msgpack or JSON decode (192 bytes per input byte plus 64 KiB),
// with room in the constant for what a decoder does besides (wrapping
// errors, an index of the decoded value) and for the first use of a type,
// which fills the codecs' caches.
const (
	PerByte = 192
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

// Into is a Decoder that decodes an input into a new T with unmarshal
// (kv.Unmarshal, for instance).
func Into[T any](name string, unmarshal func([]byte, any) error) Decoder {
	return Decoder{Name: name, Fn: func(data []byte) {
		var v T
		unmarshal(data, &v)
	}}
}

// Hostile returns msgpack inputs built to make a decoder allocate what
// they claim: each length-carrying type announcing 2^32-1 (or 2^16-1)
// elements or bytes that are not there, in a map under key (so that they
// reach a field of that name), deep nesting, and arrays of one-byte
// elements that each decode into a whole struct. The first is the 14-byte
// WebSocket frame that used to kill the daemon.
func Hostile(key string) [][]byte {
	k := append([]byte{0xa0 | byte(len(key))}, key...)
	in := func(v ...byte) []byte { return append(append([]byte{0x81}, k...), v...) }
	return [][]byte{
		{0x82, 0xa1, 0x78, 0xdd, 0xff, 0xff, 0xff, 0xff, 0xa4, 0x74, 0x79, 0x70, 0x65, 0x05},
		in(0xdd, 0xff, 0xff, 0xff, 0xff),
		in(0xdc, 0xff, 0xff),
		in(0xdf, 0xff, 0xff, 0xff, 0xff),
		in(0xde, 0xff, 0xff),
		in(0xdb, 0xff, 0xff, 0xff, 0xff),
		in(0xc6, 0xff, 0xff, 0xff, 0xff),
		in(0xc9, 0xff, 0xff, 0xff, 0xff, 0x01),
		in(0x91, 0xdd, 0xff, 0xff, 0xff, 0xff),
		in(append([]byte{0xdc, 0x10, 0x00}, bytes.Repeat([]byte{0x80}, 4096)...)...),
		in(append([]byte{0xdc, 0x10, 0x00}, bytes.Repeat([]byte{0xc0}, 4096)...)...),
		in(append([]byte{0xdc, 0x10, 0x00}, bytes.Repeat([]byte{0x90}, 4096)...)...),
		in(append(bytes.Repeat([]byte{0x91}, 5000), 0xc0)...),
		{0xdd, 0xff, 0xff, 0xff, 0xff},
		{},
	}
}

// Fuzz runs tg as the fuzz target f: every decoder on every input, each
// held to the bound as CheckMemory holds it (measured more cheaply, so
// with a span's worth of slack per size class), then Check.
func Fuzz(f *testing.F, tg Target) {
	for _, s := range tg.Seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range tg.Decoders {
			if tg.Prepare != nil {
				tg.Prepare(data)
			}
			if got, limit := allocatedApprox(func() { d.Fn(data) }), tg.limit(data)+spanSlack; got > limit {
				t.Fatalf("%s: decoding %d bytes allocated about %d bytes, more than %d", d.Name, len(data), got, limit)
			}
		}
		if tg.Check != nil {
			tg.Check(t, data)
		}
	})
}

// limit is the most a decoder of tg may allocate for in.
func (tg Target) limit(in []byte) uint64 {
	limit := uint64(PerByte*len(in) + Base + tg.Overhead)
	if tg.Expands != nil {
		limit += 2 * uint64(tg.Expands(in))
	}
	return limit
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
				got, limit := Allocated(func() { d.Fn(in) }), tg.limit(in)
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

// spanSlack is how far allocatedApprox may overcount: small objects are
// counted a span at a time, up to a span per size class.
const spanSlack = 1 << 20

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// allocatedApprox is Allocated without stopping the world, for fuzzing:
// a large allocation (the kind a trusted length makes) is counted exactly,
// small ones a span at a time.
func allocatedApprox(fn func()) uint64 {
	metrics.Read(allocSample)
	before := allocSample[0].Value.Uint64()
	fn()
	metrics.Read(allocSample)
	return allocSample[0].Value.Uint64() - before
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
