package pack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
)

// FuzzReader feeds arbitrary bytes to the pack reader: it must never
// panic, and whatever it accepts must be a pack whose every entry hashes
// to its id (the reader checks) and which re-encodes to the same bytes.
func FuzzReader(f *testing.F) {
	var small bytes.Buffer
	w, err := pack.NewWriter(&small, pack.Header{Count: pack.Streamed, Refs: []pack.Ref{{Name: "docs/a/head", ID: objstore.Sum(objstore.KindVersion, []byte{0x80})}}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"x", "hello", ""} {
		data := []byte(s)
		if err := w.Add(objstore.Sum(objstore.KindContent, data), objstore.KindContent, data); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(small.Bytes())
	f.Add([]byte(pack.Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
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
		if _, err := pack.Verify(context.Background(), bytes.NewReader(again.Bytes())); err != nil {
			t.Fatalf("re-encoded pack does not verify: %v", err)
		}
	})
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
