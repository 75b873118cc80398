package repo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// The records this package keeps in Pebble, decoded from whatever bytes a
// damaged or tampered store holds: an error, never a crash or an
// allocation the record's size does not pay for.

func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := kv.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// draftBin wraps hand-packed draft blocks in a draft record.
func draftBin(packed []byte) []byte {
	rec := []byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xc6}
	rec = binary.BigEndian.AppendUint32(rec, uint32(len(packed)))
	return append(rec, packed...)
}

func recordsTarget(tb testing.TB) boundedtest.Target {
	blk := flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "x"}}}
	draft := draftRec{Seq: 7, Blocks: draftBlocks{
		{ID: "p1", Content: objstore.ID{1}, Seq: 3, Size: 40, Count: 1},
		{ID: "c1", Content: objstore.ID{2}, Seq: 7, Size: 120, Count: 3, Nested: []string{"c1a", "c1b"}}},
		Tombs: []tomb{{ID: "gone", Seq: 5}}, Attrs: flowdoc.Attributes{Title: "Notes", Tags: []string{"a"}}, Unsealed: true}
	seeds := [][]byte{
		mustMarshal(tb, &draft),
		mustMarshal(tb, &docRec{ID: "d1", Owner: "author-a", Title: "Notes", Seq: 3, Label: "v1.r2", Head: objstore.ID{9}}),
		mustMarshal(tb, &logRec{Label: "v1.r2", Kind: "checkpoint", Hash: objstore.ID{9}, Author: "author-a", Blocks: 2}),
		mustMarshal(tb, &DraftEvent{Seq: 8, Actor: "author-a", Blocks: []EventBlock{{ID: "p1", Block: &blk}, {ID: "p2"}}, Order: []string{"p1"}}),
		mustMarshal(tb, &VersionEvent{Label: "v1.r2", Seq: 3, Kind: "checkpoint", Hash: objstore.ID{9}}),
		mustMarshal(tb, &assetRec{Name: "chart.png", Uploader: "u1", Time: 1767225600000}),
		// Hand-packed blocks claiming more than they hold.
		draftBin([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}),                                                          // 2^32-1 blocks in 5 bytes
		draftBin(append(append([]byte{0x01, 0x01, 'a'}, make([]byte, 32)...), 1, 1, 1, 0xff, 0xff, 0xff, 0x7f)), // 2^28 nested ids
		draftBin(append(append([]byte{0x01, 0x01, 'a'}, make([]byte, 32)...), append([]byte{1, 1, 1, 0xe8, 0x07}, bytes.Repeat([]byte{0}, 1000)...)...)),
	}
	seeds = append(seeds, boundedtest.Hostile("blocks")...)
	seeds = append(seeds, boundedtest.Hostile("order")...)
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[draftRec]("draft", kv.Unmarshal),
		boundedtest.Into[docRec]("doc", kv.Unmarshal),
		boundedtest.Into[logRec]("vlog", kv.Unmarshal),
		boundedtest.Into[DraftEvent]("draft.updated", kv.Unmarshal),
		boundedtest.Into[VersionEvent]("version.created", kv.Unmarshal),
		boundedtest.Into[assetRec]("asset", kv.Unmarshal),
	}}
}

// FuzzRecords decodes arbitrary bytes as each record this package stores,
// the draft record with its hand-packed block list among them.
func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

// TestRecordsMemory checks every corpus entry of FuzzRecords against the
// memory bound of package bounded.
func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }

// TestDraftCodecRoundTripAndRefusals: draft blocks round-trip, and a block
// list whose counts exceed what its bytes can hold is refused by name.
func TestDraftCodecRoundTripAndRefusals(t *testing.T) {
	in := draftRec{Seq: 2, Blocks: draftBlocks{{ID: "a", Content: objstore.ID{1}, Seq: 1, Size: 10, Count: 2, Nested: []string{"b"}}}}
	var out draftRec
	if err := kv.Unmarshal(mustMarshal(t, &in), &out); err != nil || len(out.Blocks) != 1 || out.Blocks[0].Nested[0] != "b" {
		t.Fatalf("round trip: %+v %v", out, err)
	}
	for name, rec := range map[string][]byte{
		"block count": draftBin([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}),
		"nested ids":  draftBin(append(append([]byte{0x01, 0x01, 'a'}, make([]byte, 32)...), 1, 1, 1, 0xff, 0xff, 0xff, 0x7f)),
	} {
		var d draftRec
		err := kv.Unmarshal(rec, &d)
		if !errors.Is(err, errDraftCodec) || !bytes.Contains([]byte(err.Error()), []byte("cannot fit")) {
			t.Errorf("%s: %v, want a draft codec error saying it cannot fit", name, err)
		}
	}
}
