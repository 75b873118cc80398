package bounded_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded"
	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/syncproto"
	"github.com/vmihailenco/msgpack/v5"
)

// Inner and Outer exercise the naming rules the walk mirrors: tags,
// fallback tags, "-", embedded structs (inlined) and embedded pointers,
// arrays, maps, pointers, custom decoders, bytes.
type Inner struct {
	A string   `msgpack:"a" json:"a"`
	B []string `json:"b"`
}

type Ptr struct {
	P []int64 `msgpack:"p" json:"p"`
}

type Outer struct {
	Inner
	*Ptr
	Name    string              `msgpack:"name" json:"name"`
	Skip    []Inner             `msgpack:"-" json:"-"`
	Blocks  []flowdoc.Block     `msgpack:"blocks" json:"blocks"`
	ByName  map[string][]string `msgpack:"by" json:"by"`
	Fixed   [4]Inner            `msgpack:"fixed" json:"fixed"`
	IDs     []objstore.ID       `msgpack:"ids" json:"ids"`
	Raw     []byte              `msgpack:"raw" json:"raw"`
	Deep    *Outer              `msgpack:"deep" json:"deep"`
	NoTag   []Inner
	private []Inner //lint:ignore U1000 an unexported field is never decoded; the cost walk must skip it
}

func sampleOuter() Outer {
	b := flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "héllo", Marks: []flowdoc.Mark{flowdoc.Bold}}}}
	o := Outer{Inner: Inner{A: "x", B: []string{"y", "z"}}, Ptr: &Ptr{P: []int64{1, -2, 300000}}, Name: "n",
		Blocks: []flowdoc.Block{b, {ID: "l", Type: flowdoc.List, Items: []flowdoc.ListItem{{}, {Items: []flowdoc.ListItem{{}}}}}},
		ByName: map[string][]string{"k": {"v"}, "e": nil}, IDs: []objstore.ID{{1}, {2}}, Raw: []byte{0, 1, 2},
		NoTag: []Inner{{A: "q"}}}
	o.Fixed[1] = Inner{A: "f"}
	d := o
	d.Deep = nil
	o.Deep = &d
	return o
}

func encode(t testing.TB, v any, tag string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if tag != "" {
		enc.SetCustomStructTag(tag)
	}
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUnmarshalMatchesMsgpack: for valid data, bounded.Unmarshal gives what
// msgpack.Unmarshal gives.
func TestUnmarshalMatchesMsgpack(t *testing.T) {
	for _, tag := range []string{"", "json"} {
		data := encode(t, sampleOuter(), tag)
		var want, got Outer
		dec := msgpack.NewDecoder(bytes.NewReader(data))
		dec.SetCustomStructTag(tag)
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if err := bounded.UnmarshalTag(data, &got, tag); err != nil {
			t.Fatalf("tag %q: %v", tag, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("tag %q:\n got %+v\nwant %+v", tag, got, want)
		}
	}
}

// TestValidateRefusesClaims: every declared length or count that the
// remaining bytes cannot hold is refused by name, before anything is
// allocated, as are deep nesting and trailing bytes.
func TestValidateRefusesClaims(t *testing.T) {
	cases := map[string]struct {
		data []byte
		want string
	}{
		"array32":      {[]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, "array of 4294967295 elements, only 0 bytes remain"},
		"array16":      {[]byte{0xdc, 0x00, 0x03, 0xc0, 0xc0}, "array of 3 elements, only 2 bytes remain"},
		"map32":        {[]byte{0xdf, 0x00, 0x00, 0x00, 0x02, 0xc0, 0xc0, 0xc0}, "map of 2 entries, only 3 bytes remain"},
		"str32":        {[]byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}, "string of 2147483647 bytes, only 1 remain"},
		"bin32":        {[]byte{0xc6, 0x00, 0x01, 0x00, 0x00}, "bin of 65536 bytes, only 0 remain"},
		"ext32":        {[]byte{0xc9, 0x00, 0x00, 0x00, 0x08, 0x01, 0x00}, "ext of 9 bytes, only 2 remain"},
		"fixstr":       {[]byte{0xa5, 'a', 'b'}, "string of 5 bytes, only 2 remain"},
		"truncated":    {[]byte{0xcd, 0x01}, "truncated"},
		"header":       {[]byte{0xda, 0x01}, "truncated header"},
		"0xc1":         {[]byte{0xc1}, "unknown type byte 0xc1"},
		"deep":         {append(bytes.Repeat([]byte{0x91}, bounded.MaxDepth+1), 0xc0), "nested more than 64 deep"},
		"trailing":     {[]byte{0xc0, 0xc0}, "1 bytes after the value"},
		"empty":        {nil, "truncated"},
		"hostile":      {boundedtest.Hostile("x")[0], "array of 4294967295 elements, only 6 bytes remain"},
		"inner claim":  {[]byte{0x92, 0xc0, 0x92, 0xc0}, "array of 2 elements, only 1 bytes remain"},
		"map key only": {[]byte{0x81, 0xa1, 'k'}, "truncated"},
	}
	bounded.Unmarshal([]byte{0x80}, new(Outer)) // fill the type caches
	for name, c := range cases {
		err := bounded.Validate(c.data)
		if !errors.Is(err, bounded.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
		var v Outer
		// TotalAlloc counts every goroutine's allocations (the runtime's
		// own included), so the bound leaves room for that noise; the
		// claims refused here are of gigabytes.
		if got := boundedtest.Allocated(func() { bounded.Unmarshal(c.data, &v) }); got > 64<<10 {
			t.Errorf("%s: Unmarshal allocated %d bytes", name, got)
		}
		if err := bounded.Check(c.data, (*Outer)(nil)); !errors.Is(err, bounded.ErrMalformed) {
			t.Errorf("%s: Check: %v", name, err)
		}
	}
	if err := bounded.Validate(append(bytes.Repeat([]byte{0x91}, bounded.MaxDepth), 0xc0)); err != nil {
		t.Errorf("nesting of exactly MaxDepth: %v", err)
	}
}

// TestInterfacesRefused: untrusted input is never decoded into an
// interface, wherever the interface hides in the type.
func TestInterfacesRefused(t *testing.T) {
	data := []byte{0x81, 0xa1, 'x', 0x01}
	for _, v := range []any{new(any), new(map[string]any), new([]any), new(struct{ X any }),
		new(struct{ X map[string][]any }), new(struct{ X *struct{ Y any } })} {
		err := bounded.Unmarshal(data, v)
		if err == nil || !strings.Contains(err.Error(), "interface") {
			t.Errorf("%T: %v, want a refusal naming the interface", v, err)
		}
		if err := bounded.UnmarshalJSON([]byte(`{"x":1}`), v); err == nil || !strings.Contains(err.Error(), "interface") {
			t.Errorf("JSON %T: %v, want a refusal naming the interface", v, err)
		}
	}
}

// TestAmplificationRefused: arrays of one-byte (msgpack) or three-byte
// (JSON) elements that each become a 160-byte block are refused before
// decoding, while a list of the same number of real blocks is accepted.
func TestAmplificationRefused(t *testing.T) {
	n := 50000
	mp := append([]byte{0x81, 0xa1, 'b', 0xdd, 0, 0, 0, 0}, bytes.Repeat([]byte{0x80}, n)...)
	mp[4], mp[5], mp[6], mp[7] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	var d flowdoc.Document
	err := bounded.Unmarshal(mp, &d)
	if !errors.Is(err, bounded.ErrMalformed) || !strings.Contains(err.Error(), "would allocate") {
		t.Fatalf("msgpack: %v", err)
	}
	if err := bounded.Check(mp, (*flowdoc.Document)(nil)); !errors.Is(err, bounded.ErrMalformed) {
		t.Fatalf("Check: %v", err)
	}
	js := append(append([]byte(`{"blocks":[`), bytes.Repeat([]byte("{},"), n)...), "{}]}"...)
	if err := bounded.UnmarshalJSON(js, &d); !errors.Is(err, bounded.ErrMalformed) || !strings.Contains(err.Error(), "would allocate") {
		t.Fatalf("JSON: %v", err)
	}
	// Names encoding/json matches case-insensitively or escaped count too.
	for _, key := range []string{`"BLOCKS"`, `"bloc\u212as"`, `"\u0062locks"`} {
		js := append(append([]byte(`{`+key+`:[`), bytes.Repeat([]byte("{},"), n)...), "{}]}"...)
		if err := bounded.UnmarshalJSON(js, &d); !errors.Is(err, bounded.ErrMalformed) {
			t.Errorf("JSON key %s: %v", key, err)
		}
	}
	// The same count of real blocks is fine.
	doc := flowdoc.Document{SchemaVersion: 1}
	for i := range n {
		doc.Blocks = append(doc.Blocks, flowdoc.Block{ID: "b" + string(rune('a'+i%26)), Type: flowdoc.Paragraph,
			RichText: []flowdoc.Run{{Text: "x"}}})
	}
	if err := bounded.Unmarshal(flowdoc.EncodeBody(doc), &flowdoc.Document{}); err != nil {
		t.Fatalf("real blocks: %v", err)
	}
	j, _ := json.Marshal(doc)
	if err := bounded.UnmarshalJSON(j, &flowdoc.Document{}); err != nil {
		t.Fatalf("real blocks, JSON: %v", err)
	}
	// So is the most compact valid content: a list of empty list items.
	list := flowdoc.Block{Type: flowdoc.List, Items: make([]flowdoc.ListItem, n)}
	if err := bounded.Unmarshal(flowdoc.EncodeContent(list), &flowdoc.Block{}); err != nil {
		t.Fatalf("empty list items: %v", err)
	}
	j, _ = json.Marshal(list)
	if err := bounded.UnmarshalJSON(j, &flowdoc.Block{}); err != nil {
		t.Fatalf("empty list items, JSON: %v", err)
	}
}

// mutations returns data and variants of it with bytes changed, cut and
// repeated, for checking the walk against the decoder on odd input.
func mutations(rng *rand.Rand, data []byte, n int) [][]byte {
	out := [][]byte{data}
	for range n {
		m := bytes.Clone(data)
		switch rng.IntN(4) {
		case 0:
			m[rng.IntN(len(m))] = byte(rng.IntN(256))
		case 1:
			m = m[:rng.IntN(len(m))]
		case 2:
			i := rng.IntN(len(m))
			m = append(m[:i:i], append(bytes.Repeat(m[i:i+1], 1+rng.IntN(300)), m[i:]...)...)
		case 3:
			i, j := rng.IntN(len(m)), rng.IntN(len(m))
			m[i], m[j] = m[j], m[i]
		}
		out = append(out, m)
	}
	return out
}

// TestCostCoversDecoding: whatever the walk lets through, the msgpack and
// JSON decoders allocate no more than the walk charged (plus a small
// constant for the decoder itself). This is what keeps the walk's mirror
// of the decoders' rules honest.
func TestCostCoversDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	type target struct {
		name string
		tag  string
		v    func() any
		data []byte
	}
	o := sampleOuter()
	save := &syncproto.Save{Envelope: syncproto.Envelope{Type: syncproto.TypeSave, ID: "1"}, Doc: "d", BaseSeq: 3,
		Changes: []syncproto.Change{{Op: "upsert", Block: &o.Blocks[0]}, {Op: "delete", BlockID: "x"}}, Body: &flowdoc.Document{Blocks: o.Blocks}}
	targets := []target{
		{"outer", "", func() any { return new(Outer) }, encode(t, o, "")},
		{"outer/json", "json", func() any { return new(Outer) }, encode(t, o, "json")},
		{"save", "json", func() any { return new(syncproto.Save) }, encode(t, save, "json")},
		{"block", "", func() any { return new(flowdoc.Block) }, flowdoc.EncodeContent(o.Blocks[1])},
	}
	const slack = 16 << 10
	for _, tg := range targets {
		tg.v() // warm
		inputs := mutations(rng, tg.data, 3000)
		inputs = append(inputs, boundedtest.Hostile("blocks")...)
		inputs = append(inputs, boundedtest.Hostile("b")...)
		for _, in := range inputs {
			cost, err := bounded.Cost(in, tg.v(), tg.tag)
			if err != nil || cost > 64<<20 {
				continue
			}
			dec := func() {
				d := msgpack.NewDecoder(bytes.NewReader(in))
				d.SetCustomStructTag(tg.tag)
				d.Decode(tg.v())
			}
			dec()
			if got := boundedtest.Allocated(dec); got > uint64(cost)+slack {
				t.Errorf("%s: %.64x (%d bytes): msgpack allocated %d bytes, the walk charged %d", tg.name, in, len(in), got, cost)
			}
		}
		// The same for JSON.
		j, err := json.Marshal(tg.v())
		if tg.name == "save" {
			j, err = json.Marshal(save)
		} else if tg.name != "block" {
			j, err = json.Marshal(o)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range mutations(rng, j, 3000) {
			cost, err := bounded.CostJSON(in, tg.v())
			if err != nil || cost > 64<<20 {
				continue
			}
			dec := func() { json.Unmarshal(in, tg.v()) }
			dec()
			if got := boundedtest.Allocated(dec); got > uint64(cost)+uint64(2*len(in))+slack {
				t.Errorf("%s: %.64q (%d bytes): encoding/json allocated %d bytes, the walk charged %d", tg.name, in, len(in), got, cost)
			}
		}
	}
}

// TestMapString: the id of a frame is found by scanning up to the entry
// that breaks, not by decoding the frame.
func TestMapString(t *testing.T) {
	good := encode(t, map[string]any{"id": "r1"}, "")
	cases := []struct {
		data []byte
		id   string
		ok   bool
	}{
		{good, "r1", true},
		{[]byte("\x83\xa2id\xa2r1\xa1x\xdd\xff\xff\xff\xff"), "r1", true},   // broken after the id
		{[]byte("\x82\xa1x\xdd\xff\xff\xff\xff\xa2id\xa2r1"), "", false},    // broken before it
		{[]byte("\x82\xa1x\x91\x01\xa2id\xa2r1"), "r1", true},               // skipped a valid array
		{[]byte("\x81\xa2id\x05"), "", false},                               // not a string
		{[]byte("\x81\xa2id\xd9\x41" + strings.Repeat("a", 65)), "", false}, // too long
		{[]byte("\x91\xa2id"), "", false},                                   // not a map
	}
	for _, c := range cases {
		id, ok := bounded.MapString(c.data, "id", 64)
		if id != c.id || ok != c.ok {
			t.Errorf("%x: %q %v, want %q %v", c.data, id, ok, c.id, c.ok)
		}
	}
}

// TestAppendJSON: msgpack data passed through to JSON reads as the same
// values encoding/json gives for the decoded data.
func TestAppendJSON(t *testing.T) {
	v := map[string]any{"s": "é\x00<", "i": -5, "u": uint64(1 << 63), "f": 0.5, "f32": float32(1.5), "b": true,
		"n": nil, "a": []any{1, "x", []byte{1, 2}}, "m": map[string]any{"k": int8(-1)}, "big": int64(-1 << 40)}
	data, err := kv.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := bounded.AppendJSON(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	// A bin is a hash: lowercase hex, as JSON writes hashes everywhere.
	v["a"] = []any{1, "x", "0102"}
	w, _ := json.Marshal(v)
	json.Unmarshal(w, &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s\nwant %s", out, w)
	}
	for _, bad := range [][]byte{{0x81, 0x01, 0x01}, {0xd4, 0x01, 0x00}, {0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, {0xdd, 0xff, 0xff, 0xff, 0xff}} {
		if _, err := bounded.AppendJSON(nil, bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}

// FuzzUnmarshal decodes arbitrary bytes into a type with every feature
// the walk mirrors, in msgpack and JSON, within the memory bound
// (TestFuzzMemory). What Validate accepts, msgpack skips to the end.
func FuzzUnmarshal(f *testing.F) { boundedtest.Fuzz(f, unmarshalTarget(f)) }

// TestFuzzMemory checks every corpus entry of FuzzUnmarshal against the
// memory bound.
func TestFuzzMemory(t *testing.T) { boundedtest.CheckMemory(t, unmarshalTarget(t)) }

func unmarshalTarget(tb testing.TB) boundedtest.Target {
	o := sampleOuter()
	j, _ := json.Marshal(o)
	seeds := [][]byte{encode(tb, o, ""), encode(tb, o, "json"), j}
	seeds = append(seeds, boundedtest.Hostile("blocks")...)
	seeds = append(seeds, boundedtest.Hostile("fixed")...)
	return boundedtest.Target{Name: "FuzzUnmarshal", Seeds: seeds,
		Decoders: []boundedtest.Decoder{
			boundedtest.Into[Outer]("msgpack", bounded.Unmarshal),
			{Name: "msgpack/json tag", Fn: func(d []byte) { bounded.UnmarshalTag(d, new(Outer), "json") }},
			boundedtest.Into[Outer]("json", bounded.UnmarshalJSON),
			{Name: "to json", Fn: func(d []byte) { bounded.AppendJSON(nil, d) }},
		},
		Check: func(t *testing.T, d []byte) {
			if bounded.Validate(d) == nil {
				r := bytes.NewReader(d)
				if err := msgpack.NewDecoder(r).Skip(); err != nil {
					t.Fatalf("Validate accepted what msgpack cannot skip: %v", err)
				}
				if r.Len() != 0 {
					t.Fatalf("Validate accepted trailing bytes")
				}
			}
			bounded.Unmarshal(d, new(Outer))
			bounded.UnmarshalTag(d, new(Outer), "json")
			bounded.UnmarshalJSON(d, new(Outer))
			if out, err := bounded.AppendJSON(nil, d); err == nil && !json.Valid(out) {
				t.Fatalf("AppendJSON wrote invalid JSON %q", out)
			}
		}}
}

// BenchmarkDecodeVersion compares a bounded decode of a 200-block version
// with msgpack's own (go test -run '^$' -bench DecodeVersion ./internal/bounded).
func BenchmarkDecodeVersion(b *testing.B) {
	v := objstore.Version{Doc: "d", Seq: 9, Label: "v1.r8", Kind: "checkpoint", Author: "author-a", Attrs: flowdoc.Attributes{Title: "t"}}
	for i := range 200 {
		v.Blocks = append(v.Blocks, objstore.BlockEntry{ID: "block-" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Content: objstore.ID{byte(i)}})
	}
	data, _, err := v.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("msgpack", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var out objstore.Version
			if err := msgpack.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bounded", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var out objstore.Version
			if err := bounded.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The strict decoders refuse a key no field takes, at any depth, which
// the others skip; the bounds apply to both.
func TestStrictRefusesUnknownKeys(t *testing.T) {
	type doc struct {
		Inner Inner `json:"inner"`
	}
	mp, err := msgpack.Marshal(map[string]any{"inner": map[string]any{"a": "x", "typo": 1}})
	if err != nil {
		t.Fatal(err)
	}
	js := []byte(`{"inner":{"a":"x","typo":1}}`)
	var d doc
	if err := bounded.UnmarshalTag(mp, &d, "json"); err != nil || d.Inner.A != "x" {
		t.Fatalf("lenient msgpack: %+v %v", d, err)
	}
	if err := bounded.UnmarshalJSON(js, &d); err != nil {
		t.Fatalf("lenient JSON: %v", err)
	}
	if err := bounded.UnmarshalTagStrict(mp, &doc{}, "json"); err == nil || !strings.Contains(err.Error(), `"typo"`) {
		t.Errorf("strict msgpack: %v", err)
	}
	if err := bounded.UnmarshalJSONStrict(js, &doc{}); err == nil || !strings.Contains(err.Error(), `"typo"`) {
		t.Errorf("strict JSON: %v", err)
	}
	if err := bounded.UnmarshalJSONStrict([]byte(`{"inner":{}} {}`), &doc{}); err == nil {
		t.Error("strict JSON accepted data after the value")
	}
	claim := []byte{0x81, 0xa5, 'i', 'n', 'n', 'e', 'r', 0xdf, 0xff, 0xff, 0xff, 0xff} // a map claiming 4G entries
	if err := bounded.UnmarshalTagStrict(claim, &doc{}, "json"); !errors.Is(err, bounded.ErrMalformed) {
		t.Errorf("strict msgpack of a hostile claim: %v", err)
	}
}

// TestScalars: Uint, Int and String read exactly what the msgpack
// library decodes, and refuse what does not fit.
func TestScalars(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<63 - 1, -1, -32, -33, -128, -129, -32768, -32769, -1 << 31, -1<<31 - 1, -1 << 63} {
		p, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := bounded.Int(p); !ok || got != v {
			t.Errorf("Int(%x) = %d, %v; want %d", p, got, ok, v)
		}
		got, ok := bounded.Uint(p)
		if v >= 0 && (!ok || got != uint64(v)) || v < 0 && ok {
			t.Errorf("Uint(%x) = %d, %v for %d", p, got, ok, v)
		}
	}
	p, _ := msgpack.Marshal(uint64(1 << 63))
	if _, ok := bounded.Int(p); ok {
		t.Error("Int took a uint64 over the int64 range")
	}
	if u, ok := bounded.Uint(p); !ok || u != 1<<63 {
		t.Errorf("Uint(%x) = %d, %v", p, u, ok)
	}
	s, _ := msgpack.Marshal("doc:d1")
	if got, ok := bounded.String(s); !ok || got != "doc:d1" {
		t.Errorf("String = %q, %v", got, ok)
	}
	if _, ok := bounded.String(append(s, 0)); ok {
		t.Error("String took a value with a byte after it")
	}
	var keys []string
	m, _ := msgpack.Marshal(map[string]any{"a": 1})
	if err := bounded.MapEntries(m, func(k, v []byte) bool { keys = append(keys, string(k)); return true }); err != nil || len(keys) != 1 {
		t.Errorf("MapEntries: %v %v", keys, err)
	}
	if err := bounded.MapEntries([]byte{0x81, 0xa1, 'a', 0xdd, 0xff, 0xff, 0xff, 0xff}, func(k, v []byte) bool { return true }); err == nil {
		t.Error("MapEntries took an array claiming 2^32-1 elements in 0 bytes")
	}
}
