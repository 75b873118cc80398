package server

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto/client"
)

// The daemon's real sync mount: an author edits over /v1/sync with an API
// token; another user's document is refused like a missing one; revoking
// the token, or deleting the user, closes the connection within a second.
func TestRealSyncMountAuthAndRevoke(t *testing.T) {
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	as := auth.New(r.DB())
	srv, err := New(Config{Repo: r, Auth: as})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	defer srv.Shutdown(ctx)

	_, ann, _ := as.AddUser(ctx, "ann", false)
	_, bob, _ := as.AddUser(ctx, "bob", false)
	mk := func(owner, id string) {
		if _, err := r.CreateDoc(ctx, repo.CreateParams{ID: id, Owner: owner, Attrs: flowdoc.Attributes{Title: id},
			Body: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("p", "hello")}}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("ann", "anns")
	mk("bob", "bobs")
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/v1/sync"

	if _, err := client.Dial(ctx, url, client.Options{Token: "folio_nope_nope"}); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	c, err := client.Dial(ctx, url, client.Options{Token: ann.Secret})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := c.Open(ctx, "anns")
	if err != nil {
		t.Fatal(err)
	}
	blk := para("p", "hello, edited over the socket")
	if _, err := c.Save(ctx, "anns", snap.Seq, repo.DraftChange{Op: repo.ChangeUpsert, Block: &blk}); err != nil {
		t.Fatal(err)
	}
	_, errOther := c.Open(ctx, "bobs")
	_, errMissing := c.Open(ctx, "nothing-here")
	if errOther == nil || errMissing == nil || errOther.Error() != strings.ReplaceAll(errMissing.Error(), "nothing-here", "bobs") {
		t.Fatalf("another user's document: %v; a missing one: %v (must look the same)", errOther, errMissing)
	}

	start := time.Now()
	if _, err := as.RevokeToken(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("the connection outlived its revoked token by more than a second")
	}
	var ce *client.CloseError
	if !errors.As(c.Err(), &ce) {
		t.Fatalf("closed with %v, want a close code", c.Err())
	}
	t.Logf("closed %v after revocation with code %d", time.Since(start).Round(time.Millisecond), ce.Code)

	// Deleting a user closes their connections too.
	c2, err := client.Dial(ctx, url, client.Options{Token: bob.Secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Open(ctx, "bobs"); err != nil {
		t.Fatal(err)
	}
	if _, err := as.DeleteUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c2.Done():
	case <-time.After(time.Second):
		t.Fatal("the connection outlived its deleted user by more than a second")
	}
	// The save made over the socket is in the store.
	d, _ := r.Draft(ctx, "anns")
	if d.Body.Blocks[0].RichText[0].Text != "hello, edited over the socket" {
		t.Fatalf("draft = %+v", d.Body.Blocks)
	}
}
