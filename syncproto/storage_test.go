package syncproto_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/faultfs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
	"github.com/foliodev/folio/syncproto/synctest"
)

// A full disk answers saves storage_full (retryable, with a delay) and
// they are accepted again once space is freed; a failed store answers the
// save caught in it storage_failed, and FailStop closes every session
// with 4006, which is not resumable.
func TestStorageErrorsOnTheWire(t *testing.T) {
	fs := faultfs.NewOS()
	e, err := synctest.Start(synctest.Options{Repo: repo.Options{KV: kv.Options{FS: fs, MinFree: 64 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	e.Auth.Add("ta", "alice", false)
	e.Auth.Add("tr", "root", true)
	if err := e.CreateDoc("d1", "alice", docOf3()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, proto := range codecs {
		t.Run(proto, func(t *testing.T) {
			alice, root := dial(t, e, "ta", proto, nil), dial(t, e, "tr", proto, nil)
			snap, err := alice.Open(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := root.Open(ctx, "d1"); err != nil {
				t.Fatal(err)
			}
			fs.SetFree(1 << 20)
			_, err = alice.Save(ctx, "d1", snap.Seq, upsert("p1", "refused"))
			var re *syncproto.RemoteError
			if !errors.As(err, &re) || re.Code != syncproto.CodeStorageFull || re.RetryAfterMs <= 0 {
				t.Fatalf("save on a full disk: %v, want storage_full with retryAfterMs", err)
			}
			fs.SetFree(-1)
			ack, err := alice.Save(ctx, "d1", snap.Seq, upsert("p1", "accepted"))
			if err != nil {
				t.Fatalf("save after space was freed: %v", err)
			}
			snap.Seq = ack.Seq
		})
	}

	alice, root := dial(t, e, "ta", syncproto.SubprotocolJSON, nil), dial(t, e, "tr", syncproto.SubprotocolMsgpack, nil)
	snap, err := alice.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	fs.SetRule(faultfs.Fail(faultfs.OpSync, ".log", syscall.EIO))
	_, err = alice.Save(ctx, "d1", snap.Seq, upsert("p1", "lost"))
	var re *syncproto.RemoteError
	if !errors.As(err, &re) || re.Code != syncproto.CodeStorageFailed {
		t.Fatalf("save caught in a storage failure: %v, want storage_failed", err)
	}
	if err := e.Server.FailStop(ctx, "the server's storage failed; reconnect after it restarts"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*client.Client{alice, root} {
		<-c.Done()
		var ce *client.CloseError
		if !errors.As(c.Err(), &ce) || ce.Code != syncproto.CloseStorageFailed || ce.Resumable() {
			t.Errorf("closed with %v, want a non-resumable %d", c.Err(), syncproto.CloseStorageFailed)
		}
	}
	if _, err := client.Dial(ctx, e.URL, client.Options{Token: "ta"}); err == nil {
		t.Error("a new connection was accepted after FailStop")
	}
}
