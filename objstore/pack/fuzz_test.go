package pack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
)

// FuzzReader feeds arbitrary bytes to the pack reader: it must never
// panic, and whatever it accepts must be a pack whose every entry hashes
// to its id (the reader checks) and which re-encodes to the same bytes;
// Verify, which also decodes every entry, agrees on the copy.
func FuzzReader(f *testing.F) { boundedtest.Fuzz(f, readerTarget(f)) }

// TestReaderMemory reads every corpus entry of FuzzReader and checks what
// it allocates against the bound (a chunk may expand as zstd allows).
func TestReaderMemory(t *testing.T) { boundedtest.CheckMemory(t, readerTarget(t)) }

// packOf writes a pack of the given objects (kind, canonical bytes) with
// one head ref pointing at the last one.
func packOf(tb testing.TB, objs ...[]byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	last := objstore.Sum(objstore.KindVersion, []byte{0x80})
	w, err := pack.NewWriter(&buf, pack.Header{Count: pack.Streamed, Refs: []pack.Ref{{Name: "docs/a/head", ID: last}}})
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(objs); i += 2 {
		k := objstore.Kind(objs[i][0])
		if err := w.Add(objstore.Sum(k, objs[i+1]), k, objs[i+1]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// craftedVersion is 13 bytes that claim a version with 2^32-1 blocks:
// {"blocks": array32 0xffffffff}. Decoded without bounds it asks for
// 192 GiB.
var craftedVersion = []byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}

func readerTarget(tb testing.TB) boundedtest.Target {
	content := func(s string) []byte {
		return flowdoc.EncodeContent(flowdoc.Block{Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: s}}})
	}
	c, v, t := []byte{byte(objstore.KindContent)}, []byte{byte(objstore.KindVersion)}, []byte{byte(objstore.KindTxn)}
	seeds := [][]byte{
		packOf(tb, c, content("x"), c, content("hello"), c, content("")),
		packOf(tb, v, craftedVersion),
		packOf(tb, t, []byte{0x81, 0xa6, 'e', 'v', 'e', 'n', 't', 's', 0xdc, 0xff, 0xff}),
		packOf(tb, c, []byte{0x81, 0xa1, 'r', 0xdd, 0x7f, 0xff, 0xff, 0xff}),
		packOf(tb, c, []byte("not msgpack")),
		[]byte(pack.Magic),
		{},
		// A chunk header claiming 64 MiB of compressed data, then nothing.
		append(append([]byte(pack.Magic), 0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0),
			'C', 0, 0, 0, 1, 0x04, 0, 0, 0, 0x04, 0, 0, 0),
	}
	read := func(data []byte) {
		r, err := pack.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		defer r.Close()
		for {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	}
	verify := func(data []byte) { pack.Verify(context.Background(), bytes.NewReader(data)) }
	return boundedtest.Target{Name: "FuzzReader", Seeds: seeds,
		Decoders: []boundedtest.Decoder{{Name: "read", Fn: read}, {Name: "verify", Fn: verify}},
		// zstd may expand a chunk up to 32768 times (one byte of an RLE
		// block), at most to a chunk's 64 MiB.
		Expands: func(data []byte) int { return min(32768*len(data), pack.MaxChunk) },
		// A reader buffers 256 KiB of its input and keeps a zstd decoder.
		Overhead: 512 << 10,
		Check: func(t *testing.T, data []byte) {
			r, err := pack.NewReader(bytes.NewReader(data))
			if err != nil {
				if !errors.Is(err, pack.ErrFormat) {
					t.Fatalf("header error is not ErrFormat: %v", err)
				}
				return
			}
			defer r.Close()
			var again bytes.Buffer
			w, err := pack.NewWriter(&again, r.Header())
			if err != nil {
				t.Fatalf("accepted header does not re-encode: %v", err)
			}
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if !errors.Is(err, pack.ErrFormat) {
						t.Fatalf("entry error is not ErrFormat: %v", err)
					}
					return
				}
				if err := w.Add(e.ID, e.Kind, e.Data); err != nil {
					t.Fatalf("accepted entry does not re-encode: %v", err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, err1 := pack.Verify(context.Background(), bytes.NewReader(data))
			_, err2 := pack.Verify(context.Background(), bytes.NewReader(again.Bytes()))
			if (err1 == nil) != (err2 == nil) || (err1 != nil && !errors.Is(err1, pack.ErrFormat)) {
				t.Fatalf("Verify: %v on the pack, %v on its copy", err1, err2)
			}
		}}
}

// FuzzReadHaves: a have-file parser never panics, and every id it returns
// round-trips through its hex form.
func FuzzReadHaves(f *testing.F) {
	id := objstore.Sum(objstore.KindVersion, []byte("v"))
	f.Add(id.String() + " docs/a/head\n# note\n\n" + id.String() + "\n")
	f.Add("xyz\n")
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := pack.ReadHaves(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, id := range ids {
			if back, err := objstore.ParseID(id.String()); err != nil || back != id {
				t.Fatalf("id %s does not round-trip", id)
			}
		}
	})
}
