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
