package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/kv"
)

func openStore(t testing.TB) *Store {
	t.Helper()
	db, err := kv.Open(t.TempDir(), kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db)
}

func TestUsersAndTokens(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	u, tok, err := s.AddUser(ctx, "ada", true)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Admin() || tok.User != "ada" || !strings.HasPrefix(tok.Secret, "folio_"+tok.ID+"_") {
		t.Fatalf("user %+v token %+v", u, tok)
	}
	if _, _, err := s.AddUser(ctx, "ada", false); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	for _, bad := range []string{"", "Ada", "a b", "-x", strings.Repeat("a", 65)} {
		if _, _, err := s.AddUser(ctx, bad, false); !errors.Is(err, ErrInvalid) {
			t.Errorf("AddUser(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	p, err := s.Authenticate(ctx, tok.Secret)
	if err != nil || p.User != "ada" || !p.Admin || p.TokenID != tok.ID || p.ReadOnly() {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	// Wrong secret with a valid id, garbage, empty.
	wrong := tok.Secret[:len(tok.Secret)-1] + "a"
	if wrong == tok.Secret {
		wrong = tok.Secret[:len(tok.Secret)-1] + "b"
	}
	for _, bad := range []string{wrong, "", "nonsense", "folio_000000000000_abc"} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("Authenticate(%q) = %v, want ErrUnauthenticated", bad, err)
		}
	}
	// Only the hash is stored.
	it, _ := s.db.NewIter(nil)
	for it.First(); it.Valid(); it.Next() {
		if strings.Contains(string(it.Value()), tok.Secret[len("folio_")+idLen+1:]) {
			t.Fatalf("secret stored in plain text under %q", it.Key())
		}
	}
	it.Close()

	bk, err := s.AddToken(ctx, "ada", KindBackup)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Authenticate(ctx, bk.Secret); err != nil || !p.ReadOnly() {
		t.Fatalf("backup token: %+v %v", p, err)
	}
	if _, err := s.AddToken(ctx, "nobody", KindFull); !errors.Is(err, ErrNotFound) {
		t.Fatalf("token for missing user: %v", err)
	}
	if _, err := s.AddToken(ctx, "ada", "root"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad kind: %v", err)
	}
	toks, err := s.ListTokens(ctx, "ada")
	if err != nil || len(toks) != 2 {
		t.Fatalf("ListTokens = %v, %v", toks, err)
	}
}

func TestRevokeNotifies(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	_, t1, _ := s.AddUser(ctx, "bo", false)
	t2, _ := s.AddToken(ctx, "bo", KindFull)
	_, t3, _ := s.AddUser(ctx, "cy", false)

	var mu sync.Mutex
	var got []string
	cancel := s.OnRevoke(func(id string) { mu.Lock(); got = append(got, id); mu.Unlock() })
	defer cancel()

	// Revoke by a prefix of the id.
	if _, err := s.RevokeToken(ctx, t1.ID[:6]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, t1.Secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("revoked token still authenticates: %v", err)
	}
	if _, err := s.RevokeToken(ctx, t1.ID); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "already revoked") {
		t.Fatalf("second revoke: %v", err)
	}
	if _, err := s.RevokeToken(ctx, "0123456789ab"); !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "revoked") {
		t.Fatalf("revoke of a token that never existed: %v", err)
	}
	if _, err := s.RevokeToken(ctx, "ab"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short ref: %v", err)
	}
	// Deleting a user revokes every token of theirs.
	if _, err := s.DeleteUser(ctx, "bo"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, t2.Secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("token of deleted user: %v", err)
	}
	if _, err := s.Authenticate(ctx, t3.Secret); err != nil {
		t.Fatalf("other user's token: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != t1.ID || got[1] != t2.ID {
		t.Fatalf("notified %v, want [%s %s]", got, t1.ID, t2.ID)
	}
	if _, err := s.DeleteUser(ctx, "bo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete missing user: %v", err)
	}
}

func TestLastAdminStays(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	s.AddUser(ctx, "root", true)
	s.AddUser(ctx, "ann", false)
	if _, err := s.DeleteUser(ctx, "root"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("delete the last admin: %v", err)
	}
	s.AddUser(ctx, "root2", true)
	if _, err := s.DeleteUser(ctx, "root"); err != nil {
		t.Fatalf("delete an admin with another left: %v", err)
	}
}
