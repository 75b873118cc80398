package synctest

import (
	"context"
	"fmt"
	"sync"

	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
)

// Auth is an in-memory token table: token -> principal.
type Auth struct {
	mu     sync.Mutex // guards tokens
	tokens map[string]syncproto.Principal
}

var _ syncproto.Authenticator = (*Auth)(nil)

// NewAuth returns an empty token table.
func NewAuth() *Auth { return &Auth{tokens: map[string]syncproto.Principal{}} }

// Add registers token for user; the token id is "tok-" + token. In this
// environment a user's name is also its id (documents are created with
// owner user).
func (a *Auth) Add(token, user string, admin bool) syncproto.Principal {
	p := syncproto.Principal{User: user, UserID: user, Admin: admin, TokenID: "tok-" + token}
	a.mu.Lock()
	a.tokens[token] = p
	a.mu.Unlock()
	return p
}

// AddReadOnly registers a read-only token (a backup token) for user.
func (a *Auth) AddReadOnly(token, user string) syncproto.Principal {
	p := syncproto.Principal{User: user, UserID: user, TokenID: "tok-" + token, ReadOnly: true}
	a.mu.Lock()
	a.tokens[token] = p
	a.mu.Unlock()
	return p
}

// Revoke forgets token and returns its id.
func (a *Auth) Revoke(token string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := a.tokens[token].TokenID
	delete(a.tokens, token)
	return id
}

// Authenticate implements syncproto.Authenticator.
func (a *Auth) Authenticate(_ context.Context, token string) (syncproto.Principal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.tokens[token]
	if !ok {
		return syncproto.Principal{}, fmt.Errorf("%w: unknown token", syncproto.ErrUnauthenticated)
	}
	return p, nil
}

// Access lets an author see their own documents and an admin every
// document; run streams are readable by the user registered for them.
type Access struct {
	Repo *repo.Repo

	mu   sync.Mutex        // guards runs
	runs map[string]string // stream -> owner
}

var _ syncproto.Access = (*Access)(nil)

// AllowStream lets user read a non-document stream.
func (a *Access) AllowStream(name, user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.runs == nil {
		a.runs = map[string]string{}
	}
	a.runs[name] = user
}

// CanAccess implements syncproto.Access.
func (a *Access) CanAccess(_ context.Context, p syncproto.Principal, doc string) bool {
	owner, err := a.Repo.DocOwner(doc)
	return err == nil && (p.Admin || owner != "" && owner == p.UserID)
}

// CanReadStream implements syncproto.Access.
func (a *Access) CanReadStream(_ context.Context, p syncproto.Principal, name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	owner, ok := a.runs[name]
	return ok && (owner == p.User || p.Admin)
}
