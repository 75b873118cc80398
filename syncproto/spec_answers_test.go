package syncproto_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/syncproto"
	"github.com/vmihailenco/msgpack/v5"
)

// The answers docs/protocol.md gives where a client author could read it
// two ways. Each is checked against the daemon here (or in the test named
// beside it), and TestProtocolAnswersAreWritten keeps the sentence in the
// spec.

// The nesting limit counts the frame's top-level object: a frame whose
// deepest array is inside 63 others is read, one level more is
// bad_message, in both codecs.
func TestNestingLimitCountsTheTopLevel(t *testing.T) {
	nest := func(n int) any { // n arrays, one inside the other
		var v any = 1
		for range n {
			v = []any{v}
		}
		return v
	}
	for _, inside := range []int{62, 63} { // + the top-level object: 64 is the limit
		frame := `{"type":"ping","id":"1","x":` + strings.Repeat("[", inside) + "1" + strings.Repeat("]", inside) + `}`
		if _, err := syncproto.JSONCodec.Decode([]byte(frame), false); err != nil {
			t.Errorf("JSON, %d levels in all: %v", inside+1, err)
		}
		mp, err := msgpack.Marshal(map[string]any{"type": "ping", "id": "1", "x": nest(inside)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := syncproto.MsgpackCodec.Decode(mp, false); err != nil {
			t.Errorf("MessagePack, %d levels in all: %v", inside+1, err)
		}
	}
	frame := `{"type":"ping","id":"1","x":` + strings.Repeat("[", 64) + "1" + strings.Repeat("]", 64) + `}`
	var de *syncproto.DecodeError
	if _, err := syncproto.JSONCodec.Decode([]byte(frame), false); !errors.As(err, &de) || de.Code != syncproto.CodeBadMessage || de.ID != "1" {
		t.Errorf("JSON, 65 levels: %v, want bad_message with id 1", err)
	}
	mp, _ := msgpack.Marshal(map[string]any{"type": "ping", "id": "1", "x": nest(64)})
	if _, err := syncproto.MsgpackCodec.Decode(mp, false); !errors.As(err, &de) || de.Code != syncproto.CodeBadMessage {
		t.Errorf("MessagePack, 65 levels: %v, want bad_message", err)
	}
}

// An error always carries "id": "" when it answers no request (the one
// exception to the envelope rule); other unsolicited messages have none.
func TestUnsolicitedErrorHasAnEmptyID(t *testing.T) {
	out, err := syncproto.JSONCodec.Encode(&syncproto.Error{Envelope: syncproto.Envelope{Type: syncproto.TypeError},
		Code: syncproto.CodeInternal, Kind: "internal", Message: "stream doc:d1 could not be read"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"id":""`) {
		t.Fatalf("an unsolicited error: %s", out)
	}
	out, err = syncproto.JSONCodec.Encode(&syncproto.Resync{Envelope: syncproto.Envelope{Type: syncproto.TypeResync}, Stream: "doc:d1", After: 3, First: 40, Last: 97})
	if err != nil || strings.Contains(string(out), `"id"`) {
		t.Fatalf("an unsolicited resync: %s %v", out, err)
	}
}

// task:<id> streams are not offered over the socket: subscribing answers
// not_found, like a stream that does not exist.
func TestTaskStreamsAreNotOffered(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	c := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	var re *syncproto.RemoteError
	if _, err := c.Subscribe(ctx, "task:18a2b3c4d5e6f708", nil); !errors.As(err, &re) || re.Code != syncproto.CodeNotFound {
		t.Fatalf("subscribe task:<id>: %v, want not_found", err)
	}
}

// "key":"" is no key: a resend of such a save is a new save (here it
// conflicts with the first on its block), where a keyed resend is
// answered with the first ack.
func TestEmptyKeyIsNoKey(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	c := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	snap, err := c.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	save := func(key string) (*syncproto.Ack, error) {
		return c.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: snap.Seq, Key: key, Changes: []syncproto.Change{upsert("p1", "same text "+key)}})
	}
	if _, err := save(""); err != nil {
		t.Fatal(err)
	}
	var ce *folio.ConflictError
	if _, err := save(""); !errors.As(err, &ce) {
		t.Fatalf("a resent save with key \"\": %v, want a conflict (a new save)", err)
	}
	first, err := save("k-1")
	if err != nil && !errors.As(err, &ce) {
		t.Fatal(err)
	}
	again, err2 := save("k-1")
	if (err == nil) != (err2 == nil) || (first != nil && (again == nil || again.Seq != first.Seq)) {
		t.Fatalf("a keyed resend: %+v %v, first %+v %v", again, err2, first, err)
	}
}

// Each answer's sentence stays in docs/protocol.md.
func TestProtocolAnswersAreWritten(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(raw)), " ")
	for what, sentence := range map[string]string{
		"task streams":               "but they are **not offered** over the socket: `subscribe` to one answers `not_found`",
		"snapshot head again":        "a client that shows versions skips every `version.created` up to and including the one whose `label` is the snapshot's `head`",
		"problem paths":              "a save with `changes` names the change (`changes[2].block.attrs.level`",
		"version kinds":              "The kinds of versions are exactly",
		"reply, not event":           "`suggestion.accept.done` (the replies), it has already received that change's `version.created`",
		"current session":            "The server keeps it as an explicit pointer per article and user",
		"empty key":                  "`\"key\":\"\"` is the same as no key",
		"broken JSON codes":          "text that does not parse as JSON is `bad_message`; text that parses but breaks a rule HTTP shares",
		"nesting":                    "the frame's top-level object counting as the first",
		"retention boundary":         "`after` = `first` − 1 is not older: it is answered `subscribed` and replays from `first`",
		"resume reason order":        "sorted by stream name (byte order)",
		"unsolicited errors":         "`id` is **always present** in an error, the one exception to the envelope rule",
		"replayed unsealed":          "Its `unsealed` is what it was when the save was applied, not now",
		"client rule 1":              "On the wire the snapshot comes before every event of the document's stream on this connection",
		"the same two codes":         "`storage_full` and `storage_failed`, with the same meaning",
		"admins and sessions":        "an admin reaches every document and every run, but not another user's sessions",
		"names match exactly":        "Field names match exactly, case included, in both codecs and in every message",
		"id after a broken frame":    "with a bad literal after a string `\"id\"` of at most 64 bytes is answered with that id",
		"hashes in JSON are hex":     "never base64",
		"carrying a suggestion over": "fires only then",
	} {
		if !strings.Contains(doc, sentence) {
			t.Errorf("docs/protocol.md no longer answers %q: missing %q", what, sentence)
		}
	}
}
