package syncproto

import (
	"reflect"
	"testing"

	"github.com/foliodev/folio/flowdoc"
)

// FuzzMsgpackFastPath: whatever the one-pass decoding accepts, the full
// decoding accepts too and decodes to the same message; for everything
// else Decode answers what the full decoding answers.
func FuzzMsgpackFastPath(f *testing.F) {
	b := flowdoc.Block{ID: "b1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "hi"}}}
	after := ""
	for _, m := range []Message{
		&Hello{Envelope: Envelope{ID: "1"}, Token: "t"},
		&Save{Envelope: Envelope{ID: "2"}, Doc: "d", BaseSeq: 3, Changes: []Change{{Op: "upsert", Block: &b, After: &after}}, Key: "k"},
		&Ack{Envelope: Envelope{ID: "3"}, Doc: "d", Seq: 4, Changed: []string{"b1"}},
		&Event{Envelope: Envelope{Type: "draft.updated"}, Stream: "doc:d", Cursor: 9, Time: 5,
			Data: &DraftUpdated{Doc: "d", Seq: 4, Blocks: []EventBlock{{ID: "b1", Block: &b}}}},
		&Subscribe{Envelope: Envelope{ID: "4"}, Stream: "doc:d"},
	} {
		if m.Env().Type == "" {
			m.Env().Type = TypeOf(m)
		}
		p, err := MsgpackCodec.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Add([]byte("\x82\xa4type\xa4ping\xa2id\x01"))
	// Events in other forms: negative time, nil data, an unknown key, a
	// key twice, a cursor that is negative.
	f.Add([]byte("\x85\xa4type\xadversion.xyzzy\xa6stream\xa5doc:d\xa6cursor\x07\xa4time\xd0\xfe\xa4data\xc0"))
	f.Add([]byte("\x84\xa4type\xa1e\xa6stream\xa5doc:d\xa1x\x91\x01\xa6cursor\xcd\x01\x00"))
	f.Add([]byte("\x83\xa4type\xa1e\xa6cursor\x01\xa6cursor\x02"))
	f.Add([]byte("\x82\xa4type\xa1e\xa6cursor\xd0\xff"))
	// The one pass is taken for what the server sends and clients send.
	for _, m := range []Message{&Save{Envelope: Envelope{ID: "2"}, Doc: "d", BaseSeq: 3, Changes: []Change{{Op: "upsert", Block: &b}}},
		&Event{Envelope: Envelope{Type: "draft.updated"}, Stream: "doc:d", Cursor: 9, Time: 5, Data: &DraftUpdated{Doc: "d", Seq: 4}}} {
		if m.Env().Type == "" {
			m.Env().Type = TypeOf(m)
		}
		p, _ := MsgpackCodec.Encode(m)
		if msgpackDecodeFast(p, true) == nil {
			f.Fatalf("a %s as encoded here does not take the one pass", m.Env().Type)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, events := range []bool{false, true} {
			full, ferr := msgpackDecodeFull(p, events)
			fast := msgpackDecodeFast(p, events)
			if fast != nil && (ferr != nil || !reflect.DeepEqual(fast, full)) {
				t.Fatalf("events=%v: one pass gave %#v, the full decoding %#v, %v", events, fast, full, ferr)
			}
			got, gerr := MsgpackCodec.Decode(p, events)
			if (gerr == nil) != (ferr == nil) || (gerr != nil && gerr.Error() != ferr.Error()) || (gerr == nil && !reflect.DeepEqual(got, full)) {
				t.Fatalf("events=%v: Decode gave %#v, %v; the full decoding %#v, %v", events, got, gerr, full, ferr)
			}
		}
	})
}
