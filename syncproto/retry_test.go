package syncproto_test

import (
	"errors"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/syncproto"
)

// A save resent with its key after the ack was lost (here: the
// connection dropped) is answered with the original ack, on another
// connection and in the other codec too, even after another editor
// changed the same block; the draft is not changed again.
func TestKeyedSaveRetry(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	a := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	snap, err := a.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	save := &syncproto.Save{Doc: "d1", BaseSeq: snap.Seq, Key: "k-0001", Changes: []syncproto.Change{upsert("p1", "one by alice")}}
	ack, err := a.SaveMessage(ctx, save)
	if err != nil {
		t.Fatal(err)
	}
	a.CloseNow() // the ack "was lost"

	b := dial(t, e, "tr", syncproto.SubprotocolJSON, nil)
	bs, err := b.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Save(ctx, "d1", bs.Seq, upsert("p1", "one by root")); err != nil {
		t.Fatal(err)
	}

	a2 := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	if _, err := a2.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	retry := &syncproto.Save{Doc: "d1", BaseSeq: snap.Seq, Key: "k-0001", Changes: []syncproto.Change{upsert("p1", "one by alice")}}
	again, err := a2.SaveMessage(ctx, retry)
	if err != nil {
		t.Fatalf("retry of an acknowledged save: %v, want its ack", err)
	}
	if again.Seq != ack.Seq || again.Fingerprint != ack.Fingerprint || again.ID == ack.ID && again.ID == "" {
		t.Fatalf("retry ack %+v, original %+v", again, ack)
	}
	d, _ := e.Repo.Draft(ctx, "d1")
	if got := blockText(d.Body.Blocks[0]); got != "one by root" || d.Seq != ack.Seq+1 {
		t.Fatalf("draft after the retry: seq %d, p1 %q; want seq %d and root's text", d.Seq, got, ack.Seq+1)
	}

	// The same key for another save is refused; nothing is stored.
	other := &syncproto.Save{Doc: "d1", BaseSeq: d.Seq, Key: "k-0001", Changes: []syncproto.Change{upsert("p2", "x")}}
	_, err = a2.SaveMessage(ctx, other)
	var re *syncproto.RemoteError
	if !errors.As(err, &re) || !errors.Is(err, errs.Invalid) {
		t.Fatalf("key reused for another save: %v, want invalid", err)
	}
	// Without a key the resend is a new save, and conflicts with itself.
	_, err = a2.Save(ctx, "d1", snap.Seq, upsert("p1", "one by alice"))
	var ce *folio.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("unkeyed resend: %v, want draft.conflict", err)
	}
	// A key that is not visible ASCII is refused.
	_, err = a2.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: d.Seq, Key: "a key", Changes: []syncproto.Change{upsert("p2", "x")}})
	if !errors.Is(err, errs.Invalid) {
		t.Fatalf("key with a space: %v, want invalid", err)
	}
	if d2, _ := e.Repo.Draft(ctx, "d1"); d2.Seq != d.Seq {
		t.Fatalf("refused saves changed the draft: seq %d -> %d", d.Seq, d2.Seq)
	}
}
