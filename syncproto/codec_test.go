package syncproto_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/syncproto"
	"github.com/vmihailenco/msgpack/v5"
)

var update = flag.Bool("update", false, "rewrite testdata/messages.golden")

func ptr[T any](v T) *T { return &v }

// sampleMessages holds one message of every type, as in docs/protocol.md.
func sampleMessages() []syncproto.Message {
	b := para("p1", "Hello, 世界 👋")
	body := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b}}
	fp := flowdoc.FingerprintOf(body)
	v := syncproto.VersionInfo{Doc: "d1", Label: "v1.r1", Seq: 2, Kind: "checkpoint", Reason: "idle", Author: "alice", Time: 1767225600000,
		Fingerprint: fp, Blocks: 1}
	v.Hash[0], v.Hash[31] = 0x9a, 0x41
	// One version object per kind a reply carries (docs/protocol.md
	// "Versions"): a recovery, a leave checkpoint, a publish checkpoint,
	// a restore.
	recovered := v
	recovered.Kind, recovered.Reason, recovered.Author = "recovery", "recovery", "alice"
	left := v
	left.Label, left.Seq, left.Reason = "v1.r2", 3, "leave"
	left.Hash[31] = 0x42
	published := v
	published.Label, published.Seq, published.Reason, published.Message = "v1.r3", 4, "publish", "before publishing"
	published.Hash[31] = 0x43
	restored := v
	restored.Label, restored.Seq, restored.Kind, restored.Reason, restored.RestoredFrom = "v2.r0", 5, "restore", "", "v1.r0"
	restored.Hash[31] = 0x44
	return []syncproto.Message{
		&syncproto.Hello{Envelope: syncproto.Envelope{ID: "1"}, Token: "tok", Client: "editor/1.4"},
		&syncproto.Welcome{Envelope: syncproto.Envelope{ID: "1"}, User: "alice", Session: "s1", Protocol: syncproto.SubprotocolJSON,
			Limits: syncproto.DefaultLimits()},
		&syncproto.Open{Envelope: syncproto.Envelope{ID: "2"}, Doc: "d1"},
		&syncproto.Snapshot{Envelope: syncproto.Envelope{ID: "2"}, Doc: "d1", Seq: 41,
			Body: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b}}, Attrs: flowdoc.Attributes{Title: "Notes"},
			Fingerprint: fp, Head: "v1.r1", Stream: "doc:d1", Cursor: 97, Recovered: &recovered},
		&syncproto.Leave{Envelope: syncproto.Envelope{ID: "3"}, Doc: "d1"},
		&syncproto.Left{Envelope: syncproto.Envelope{ID: "3"}, Doc: "d1", Version: &left},
		&syncproto.Save{Envelope: syncproto.Envelope{ID: "4"}, Doc: "d1", BaseSeq: 41, Key: "e3f9a1-17", Changes: []syncproto.Change{
			{Op: "upsert", Block: &b, After: ptr("p0")}, {Op: "delete", BlockID: "p7"}, {Op: "move", BlockID: "p3", After: ptr("")}}},
		&syncproto.Save{Envelope: syncproto.Envelope{ID: "5"}, Doc: "d1", BaseSeq: 42,
			Body: &flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b}}, Attrs: &flowdoc.Attributes{Title: "Notes", Tags: []string{"go"}}},
		&syncproto.Ack{Envelope: syncproto.Envelope{ID: "4"}, Doc: "d1", Seq: 42, Fingerprint: fp, Unsealed: true, Changed: []string{"p1"}},
		&syncproto.Conflict{Envelope: syncproto.Envelope{ID: "4"}, Doc: "d1", Seq: 43, Check: folio.CheckBlocks, BaseSeq: 41,
			Reason: "blocks changed since baseSeq",
			Blocks: []folio.ConflictBlock{{ID: "p1", Block: &b, Seq: 43}, {ID: "p7", Seq: 42}}},
		&syncproto.Checkpoint{Envelope: syncproto.Envelope{ID: "6"}, Doc: "d1", Reason: "publish", Message: "before publishing"},
		&syncproto.CheckpointDone{Envelope: syncproto.Envelope{ID: "6"}, Doc: "d1", Created: true, Version: published},
		&syncproto.Restore{Envelope: syncproto.Envelope{ID: "7"}, Doc: "d1", Label: "v1.r0"},
		&syncproto.RestoreDone{Envelope: syncproto.Envelope{ID: "7"}, Doc: "d1", Version: restored},
		&syncproto.Subscribe{Envelope: syncproto.Envelope{ID: "8"}, Stream: "run:r9", After: ptr(uint64(12))},
		&syncproto.Subscribed{Envelope: syncproto.Envelope{ID: "8"}, Stream: "run:r9", Cursor: 12, Last: 15},
		&syncproto.Unsubscribe{Envelope: syncproto.Envelope{ID: "9"}, Stream: "run:r9"},
		&syncproto.Unsubscribed{Envelope: syncproto.Envelope{ID: "9"}, Stream: "run:r9"},
		&syncproto.Resync{Envelope: syncproto.Envelope{ID: "8"}, Stream: "doc:d1", After: 3, First: 40, Last: 97},
		&syncproto.Ping{Envelope: syncproto.Envelope{ID: "10"}},
		&syncproto.Pong{Envelope: syncproto.Envelope{ID: "10"}, Time: 1767225600000},
		&syncproto.Error{Envelope: syncproto.Envelope{ID: "5"}, Code: syncproto.CodeInvalid, Kind: "invalid", Message: "invalid document: blocks[0].attrs.level: heading level must be 1..4",
			Problems: []flowdoc.Problem{{Path: "blocks[0].attrs.level", Rule: "heading level must be 1..4"}}},
	}
}

// sampleEvents holds one event of each document type.
func sampleEvents() []syncproto.Message {
	b := para("p1", "Hello, 世界 👋")
	body := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b}}
	v := syncproto.VersionCreated{Doc: "d1", Label: "v1.r2", Seq: 3, Kind: "checkpoint", Reason: "idle", Author: "alice", Time: 1767225630000,
		Fingerprint: flowdoc.FingerprintOf(body)}
	v.Hash[0], v.Hash[31] = 0x3c, 0x07
	return []syncproto.Message{
		&syncproto.Event{Envelope: syncproto.Envelope{Type: syncproto.TypeDraftUpdated}, Stream: "doc:d1", Cursor: 98, Time: 1767225601200,
			Data: &syncproto.DraftUpdated{Doc: "d1", Seq: 42, Session: "s7", Actor: "alice", Fingerprint: flowdoc.FingerprintOf(body),
				Unsealed: true, Blocks: []syncproto.EventBlock{{ID: "p1", Block: &b}, {ID: "p2"}}, Order: []string{"p1", "p3"}}},
		&syncproto.Event{Envelope: syncproto.Envelope{Type: syncproto.TypeVersionCreated}, Stream: "doc:d1", Cursor: 99, Time: 1767225630000, Data: &v},
		&syncproto.Event{Envelope: syncproto.Envelope{Type: syncproto.TypeOwnerChanged}, Stream: "doc:d1", Cursor: 100, Time: 1767225660000,
			Data: &syncproto.OwnerChanged{Doc: "d1", From: "u4vd2r7qkw3m5yfxa", To: "u7tq2c5w3bnyk6mjd", ToName: "author-b", Actor: "admin", Time: 1767225660000}},
	}
}

// TestCodecRoundTrip: every message decodes to itself in both codecs.
func TestCodecRoundTrip(t *testing.T) {
	for _, codec := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
		for _, m := range append(sampleMessages(), assistSamples()...) {
			m.Env().Type = syncproto.TypeOf(m)
			p, err := codec.Encode(m)
			if err != nil {
				t.Fatalf("%s encode %s: %v", codec.Name(), m.Env().Type, err)
			}
			got, err := codec.Decode(p, false)
			if err != nil {
				t.Fatalf("%s decode %s: %v", codec.Name(), m.Env().Type, err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("%s %s:\n got %+v\nwant %+v", codec.Name(), m.Env().Type, got, m)
			}
		}
	}
}

// TestEventDataBothCodecs: event data decodes alike from both codecs.
func TestEventDataBothCodecs(t *testing.T) {
	b := para("p1", "x")
	du := &syncproto.DraftUpdated{Doc: "d1", Seq: 5, Session: "s2", Actor: "bob", Unsealed: true,
		Blocks: []syncproto.EventBlock{{ID: "p1", Block: &b}, {ID: "p2"}}, Order: []string{"p1"}}
	for _, codec := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
		ev := &syncproto.Event{Envelope: syncproto.Envelope{Type: syncproto.TypeDraftUpdated}, Stream: "doc:d1", Cursor: 9, Time: 1, Data: du}
		p, err := codec.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := codec.Decode(p, false); err == nil {
			t.Fatalf("%s: the server accepted an event type from a client", codec.Name())
		}
		m, err := codec.Decode(p, true)
		if err != nil {
			t.Fatal(err)
		}
		got := m.(*syncproto.Event)
		var back syncproto.DraftUpdated
		if err := got.DecodeData(&back); err != nil || !reflect.DeepEqual(&back, du) || got.Cursor != 9 {
			t.Fatalf("%s: %+v %v", codec.Name(), back, err)
		}
	}
}

// TestGoldenJSON pins the JSON wire form of every message (the examples
// of docs/protocol.md are taken from testdata/messages.golden).
func TestGoldenJSON(t *testing.T) {
	var out []byte
	for _, m := range append(append(append(sampleMessages(), sampleEvents()...), assistSamples()...), assistEvents()...) {
		m.Env().Type = syncproto.TypeOf(m)
		p, err := syncproto.JSONCodec.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(p) {
			t.Fatalf("invalid JSON for %s", m.Env().Type)
		}
		out = append(append(out, p...), '\n')
	}
	golden := filepath.Join("testdata", "messages.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenJSON -update)", err)
	}
	if string(want) != string(out) {
		t.Fatalf("JSON wire form changed; if intended, run with -update and update docs/protocol.md\n got:\n%s\nwant:\n%s", out, want)
	}
}

// FuzzDecode: whatever a client or server sends, both codecs answer
// with a message or a *DecodeError with a code, within the memory bound
// (TestDecodeMemory checks the corpus against it); what decodes
// re-encodes, and an event's data decodes into the event types.
func FuzzDecode(f *testing.F) { boundedtest.Fuzz(f, decodeTarget()) }

// hostileFrame is an unauthenticated client's whole attack: a map whose
// "x" is an array claiming 2^32-1 elements, then a bad "type". Before
// decoding was bounded, the id peek's make() of that length killed the
// daemon.
var hostileFrame = []byte{0x82, 0xa1, 0x78, 0xdd, 0xff, 0xff, 0xff, 0xff, 0xa4, 0x74, 0x79, 0x70, 0x65, 0x05}

func decodeTarget() boundedtest.Target {
	var seeds [][]byte
	for _, m := range append(append(append(sampleMessages(), sampleEvents()...), assistSamples()...), assistEvents()...) {
		m.Env().Type = syncproto.TypeOf(m)
		for _, c := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
			p, _ := c.Encode(m)
			seeds = append(seeds, p)
		}
	}
	seeds = append(seeds,
		[]byte(`{"type":"draft.save","id":"x","doc":"d","changes":[{"op":"upsert","block":{"id":"a","type":"heading","attrs":{"level":9}}}]}`),
		[]byte{0xde, 0xff, 0xff},
		[]byte{0xdd, 0xff, 0xff, 0xff, 0xff},
		hostileFrame,
		// The same claim in each length-carrying type, after a good id.
		[]byte("\x83\xa2id\xa11\xa4type\xaadraft.save\xa7changes\xdd\xff\xff\xff\xff"),
		[]byte("\x83\xa2id\xa11\xa4type\xaadraft.save\xa3doc\xdb\xff\xff\xff\xff"),
		[]byte("\x83\xa2id\xa11\xa4type\xaadraft.save\xa3doc\xc6\xff\xff\xff\xff"),
		[]byte("\x83\xa2id\xa11\xa4type\xaadraft.save\xa3doc\xc9\xff\xff\xff\xff\x01"),
		[]byte("\x83\xa2id\xa11\xa4type\xaadraft.save\xa3doc\xdf\xff\xff\xff\xff"),
		// Arrays of one-byte elements that each become a whole struct.
		append([]byte("\x83\xa2id\xa11\xa4type\xaadraft.save\xa7changes\xdc\x10\x00"), bytes.Repeat([]byte{0x80}, 4096)...),
		append(append([]byte(`{"type":"draft.save","id":"1","body":{"blocks":[`), bytes.Repeat([]byte("{},"), 4096)...), "{}]}}"...),
		// Nesting deeper than any message.
		append(bytes.Repeat([]byte{0x91}, 10000), 0xc0),
		[]byte(strings.Repeat("[", 10000)+strings.Repeat("]", 10000)),
		// The 13-byte version object that claims 2^32-1 blocks.
		[]byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff},
	)
	seeds = append(seeds, boundedtest.Hostile("changes")...)
	seeds = append(seeds, boundedtest.Hostile("data")...)
	var decoders []boundedtest.Decoder
	for _, c := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
		decoders = append(decoders,
			boundedtest.Decoder{Name: c.Name() + " request", Fn: func(p []byte) { c.Decode(p, false) }},
			boundedtest.Decoder{Name: c.Name() + " event data", Fn: func(p []byte) {
				if m, err := c.Decode(p, true); err == nil {
					if ev, ok := m.(*syncproto.Event); ok {
						var du syncproto.DraftUpdated
						ev.DecodeData(&du)
					}
				}
			}})
	}
	return boundedtest.Target{Name: "FuzzDecode", Seeds: seeds, Decoders: decoders, Check: func(t *testing.T, p []byte) {
		for _, c := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
			for _, events := range []bool{false, true} {
				m, err := c.Decode(p, events)
				if err != nil {
					var de *syncproto.DecodeError
					if !asDecodeError(err, &de) || de.Code == "" || len(de.ID) > 64 {
						t.Fatalf("%s: error %v is not a DecodeError with a code", c.Name(), err)
					}
					continue
				}
				if ev, ok := m.(*syncproto.Event); ok {
					var du syncproto.DraftUpdated
					var vc syncproto.VersionCreated
					ev.DecodeData(&du)
					ev.DecodeData(&vc)
				}
				// What decodes re-encodes and decodes to the same type.
				q, err := c.Encode(m)
				if err != nil {
					continue // e.g. NaN floats inside event data
				}
				m2, err := c.Decode(q, events)
				if err != nil {
					t.Fatalf("%s: re-encoded %s does not decode: %v", c.Name(), m.Env().Type, err)
				}
				if m2.Env().Type != m.Env().Type || m2.Env().ID != m.Env().ID {
					t.Fatalf("%s: envelope changed: %+v -> %+v", c.Name(), m.Env(), m2.Env())
				}
			}
		}
	}}
}

// A JSON frame that breaks after a readable top-level "id" — truncated,
// nested over the limit, a bad literal, a duplicate member — is answered
// with that id, as a MessagePack frame is; one broken before its "id"
// has none.
func TestJSONDecodeErrorsCarryTheID(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	for name, frame := range map[string]string{
		"truncated":     `{"type":"draft.save","id":"7","doc":"d1","baseSeq":1,"changes":[{"op":"upsert"`,
		"too deep":      `{"type":"draft.save","id":"7","doc":"d1","x":` + deep + `}`,
		"bad literal":   `{"type":"draft.save","id":"7","doc":"d1","baseSeq":tru}`,
		"id first":      `{"id":"7","type":"draft.save","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":nul}]}`,
		"duplicate key": `{"type":"draft.save","id":"7","doc":"d1","doc":"d2"}`,
		"wrong case":    `{"type":"draft.save","id":"7","doc":"d1","baseSeq":1,"Changes":[]}`,
	} {
		_, err := syncproto.JSONCodec.Decode([]byte(frame), false)
		var de *syncproto.DecodeError
		if !errors.As(err, &de) || de.ID != "7" {
			t.Errorf("%s: %v, id %q; want the error to carry id 7", name, err, de.ID)
		}
	}
	for name, frame := range map[string]string{
		"broken before the id": `{"type":"draft.save","doc":tru,"id":"7"}`,
		"id not a string":      `{"type":"draft.save","id":7,"doc":tru}`,
		"not an object":        `["id","7"`,
	} {
		_, err := syncproto.JSONCodec.Decode([]byte(frame), false)
		var de *syncproto.DecodeError
		if !errors.As(err, &de) || de.ID != "" {
			t.Errorf("%s: %v; want an error without an id", name, err)
		}
	}
}

// JSON member names match exactly, case included, as over HTTP and in
// MessagePack: a save with "Changes", a block with "Type", a run with
// "Marks" is refused as invalid naming the field, in the envelope too,
// where encoding/json alone would store their content.
func TestJSONFieldNamesMatchExactly(t *testing.T) {
	for _, c := range []struct{ name, field, frame string }{
		{"save", "Changes", `{"type":"draft.save","id":"1","doc":"d1","baseSeq":1,"Changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"x"}]}}]}`},
		{"block", "Type", `{"type":"draft.save","id":"1","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","Type":"paragraph","richText":[{"text":"x"}]}}]}`},
		{"run", "Marks", `{"type":"draft.save","id":"1","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"x","Marks":["bold"]}]}}]}`},
		{"envelope", "Type", `{"Type":"draft.save","id":"1","doc":"d1","baseSeq":1}`},
		{"other message", "Doc", `{"type":"open","id":"1","Doc":"d1"}`},
	} {
		_, err := syncproto.JSONCodec.Decode([]byte(c.frame), false)
		if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), `unknown field "`+c.field+`"`) || !strings.Contains(err.Error(), "case included") {
			t.Errorf("%s: %v; want invalid naming %q", c.name, err, c.field)
		}
	}
	// The right names decode.
	if _, err := syncproto.JSONCodec.Decode([]byte(`{"type":"draft.save","id":"1","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"x","marks":["bold"]}]}}]}`), false); err != nil {
		t.Fatal(err)
	}
}

// Stored event data passed through to a JSON client writes every hash as
// 64 lowercase hex digits: doc.published's version is not base64.
func TestPassedThroughHashesAreHex(t *testing.T) {
	var id [32]byte
	for i := range id {
		id[i] = byte(i * 7)
	}
	data, err := msgpack.Marshal(map[string]any{"version": id[:], "label": "v1.r2", "slug": "s", "visibility": "public", "actor": "a"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := syncproto.PassThrough(data)
	if err != nil {
		t.Fatal(err)
	}
	ev := &syncproto.Event{Envelope: syncproto.Envelope{Type: "doc.published"}, Stream: "doc:d1", Cursor: 9, Time: 1, Data: raw}
	out, err := syncproto.JSONCodec.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `"version":"` + hex.EncodeToString(id[:]) + `"`
	if !strings.Contains(string(out), want) {
		t.Fatalf("doc.published in JSON: %s\nwant %s", out, want)
	}
}
