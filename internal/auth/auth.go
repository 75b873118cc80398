package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// The errors of the package carry their kinds (package errs); ErrNotFound,
// ErrExists and ErrInvalid are the kinds themselves, so that errors are
// made with errs.E and a message written for people.
var (
	// ErrUnauthenticated: a missing, malformed, unknown or revoked token.
	// It says nothing about which part was wrong.
	ErrUnauthenticated error = errs.E(errs.Unauthenticated,
		"missing, unknown or revoked token: pass a valid token (FOLIO_TOKEN, or the header Authorization: Bearer <token>); an admin issues one with `folio token add USER`")
	// ErrNotFound: no such user or token.
	ErrNotFound error = errs.NotFound
	// ErrExists: a user with that name exists, or a token was already
	// revoked.
	ErrExists error = errs.Conflict
	// ErrInvalid: a bad user name, token kind or token reference.
	ErrInvalid error = errs.Invalid
)

// Roles of a user.
const (
	RoleAdmin  = "admin"
	RoleAuthor = "author"
)

// Token kinds.
const (
	// KindFull may do everything its user may do.
	KindFull = "full"
	// KindBackup may only read (documents, history, packs).
	KindBackup = "backup"
	// KindAgent is an outside model's or agent's (MCP): it may read what
	// its user may read and propose changes (pending suggestions, from the
	// assistant or written by the agent), and is refused every other write
	// on every transport. Only the author accepts, restores or publishes.
	KindAgent = "agent"
)

// Kinds lists the token kinds, for help texts and errors.
var Kinds = []string{KindFull, KindBackup, KindAgent}

// ValidKind reports whether kind names a token kind.
func ValidKind(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// tokenPrefix starts every token; idLen is the length of a token id.
const (
	tokenPrefix = "folio_"
	idLen       = 12
)

// User is a user record. ID is the user's identity: random, assigned once
// and never reused, so that what a user owns stays theirs and does not pass
// to a later user of the same name. Name is a label, unique among the
// users that exist.
type User struct {
	ID      string `json:"id" msgpack:"id,omitempty"`
	Name    string `json:"name" msgpack:"name"`
	Role    string `json:"role" msgpack:"role"`
	Created int64  `json:"created" msgpack:"created"` // Unix ms
}

// Admin reports whether u is an admin.
func (u User) Admin() bool { return u.Role == RoleAdmin }

// Token describes an issued token; the secret is never stored.
type Token struct {
	ID      string   `json:"id" msgpack:"id"`
	User    string   `json:"user" msgpack:"user"`
	UserID  string   `json:"userId,omitempty" msgpack:"uid,omitempty"` // the id of User when issued
	Kind    string   `json:"kind" msgpack:"kind"`
	Hash    [32]byte `json:"-" msgpack:"hash"`
	Created int64    `json:"created" msgpack:"created"` // Unix ms
	// Revoked is when the token was revoked (Unix ms); 0 for live tokens.
	Revoked int64 `json:"revoked,omitempty" msgpack:"revoked,omitempty"`
}

// Prefix is how a token is shown in lists: "folio_<id>".
func (t Token) Prefix() string { return tokenPrefix + t.ID }

// Issued is a newly issued token. Secret is the whole token string; it
// exists only in this value and is never stored.
type Issued struct {
	Token
	Secret string `json:"token"`
}

// Principal is an authenticated caller. UserID is what access decisions
// compare (document owners are user ids); User is the name, for logs and
// for the author fields of the history it writes.
type Principal struct {
	User    string
	UserID  string
	Admin   bool
	TokenID string
	Kind    string
}

// ReadOnly reports whether the principal may only read.
func (p Principal) ReadOnly() bool { return p.Kind == KindBackup }

// Agent reports whether the principal is an agent: it may read and
// propose, nothing else (KindAgent).
func (p Principal) Agent() bool { return p.Kind == KindAgent }

// Store keeps users and tokens in a Folio store. It is safe for
// concurrent use; changes are serialized by mu so that checks and writes
// (a unique name, the last admin) see a consistent table.
type Store struct {
	db  *kv.DB
	now func() time.Time

	mu sync.Mutex // serializes changes

	subMu sync.Mutex // guards subs and next
	subs  map[int]func(tokenID string)
	next  int
}

// New returns a Store on db.
func New(db *kv.DB) *Store {
	return &Store{db: db, now: time.Now, subs: map[int]func(string){}}
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidName reports whether name can name a user: 1 to 64 lowercase
// letters, digits, '.', '_' or '-', starting with a letter or digit.
func ValidName(name string) bool { return nameRE.MatchString(name) }

func userKey(name string) []byte { return kv.TableKey("user", name) }
func tokenKey(id string) []byte  { return kv.TableKey("token", id) }

// revokedKey keeps a revoked token's record (with its Revoked time) so
// that revoking it again can say so.
func revokedKey(id string) []byte { return kv.TableKey("revoked", id) }

// OnRevoke registers fn to be called with the id of every token that is
// revoked, directly or by deleting its user, after the change is durable.
// fn runs on the revoking goroutine and must not block for long. The
// returned function unregisters it.
func (s *Store) OnRevoke(fn func(tokenID string)) (cancel func()) {
	s.subMu.Lock()
	id := s.next
	s.next++
	s.subs[id] = fn
	s.subMu.Unlock()
	return func() {
		s.subMu.Lock()
		delete(s.subs, id)
		s.subMu.Unlock()
	}
}

func (s *Store) notify(ids []string) {
	s.subMu.Lock()
	fns := make([]func(string), 0, len(s.subs))
	for _, fn := range s.subs {
		fns = append(fns, fn)
	}
	s.subMu.Unlock()
	for _, id := range ids {
		for _, fn := range fns {
			fn(id)
		}
	}
}

// AddUser creates user name (an admin when admin is set) with a first
// full token. Errors: ErrInvalid (bad name), ErrExists.
func (s *Store) AddUser(ctx context.Context, name string, admin bool) (User, Issued, error) {
	return s.addUser(ctx, name, admin, false)
}

// AddFirstAdmin adds the first user of a store without users, an admin
// named name, and issues its first token. It is the daemon's first-start
// write: one user and one token record (well under a KiB), written once,
// so it may dip into the disk's reserve (kv.DB.ApplyReserved) and a first
// start on a disk below the reserve still prints a token. Errors: those
// of AddUser; errs.Conflict when the store has users.
func (s *Store) AddFirstAdmin(ctx context.Context, name string) (User, Issued, error) {
	return s.addUser(ctx, name, true, true)
}

func (s *Store) addUser(ctx context.Context, name string, admin, first bool) (User, Issued, error) {
	if err := ctx.Err(); err != nil {
		return User{}, Issued{}, err
	}
	if !ValidName(name) {
		return User{}, Issued{}, errs.E(errs.Invalid, "user name %q is not valid: use 1 to 64 lowercase letters, digits, '.', '_' or '-'", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, err := kv.Has(s.db, userKey(name))
	if err != nil {
		return User{}, Issued{}, err
	}
	if ok {
		return User{}, Issued{}, errs.E(errs.Conflict, "user %q already exists", name)
	}
	apply := s.db.Apply
	if first {
		us, err := s.ListUsers(ctx)
		if err != nil {
			return User{}, Issued{}, err
		}
		if len(us) > 0 {
			return User{}, Issued{}, errs.E(errs.Conflict, "the store has users already: the first admin is made only on a store without users")
		}
		apply = s.db.ApplyReserved
	}
	id, err := NewUserID()
	if err != nil {
		return User{}, Issued{}, err
	}
	u := User{ID: id, Name: name, Role: RoleAuthor, Created: s.now().UnixMilli()}
	if admin {
		u.Role = RoleAdmin
	}
	it, rec, err := s.issue(u, KindFull)
	if err != nil {
		return User{}, Issued{}, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := put(b, userKey(name), u); err != nil {
		return User{}, Issued{}, err
	}
	if err := put(b, tokenKey(rec.ID), rec); err != nil {
		return User{}, Issued{}, err
	}
	if err := apply(b, kv.Sync); err != nil {
		return User{}, Issued{}, fmt.Errorf("auth: add user %s: %w", name, err)
	}
	return u, it, nil
}

// AddToken issues a new token of kind (KindFull, KindBackup or
// KindAgent) for user.
// Errors: ErrNotFound (no such user), ErrInvalid (unknown kind).
func (s *Store) AddToken(ctx context.Context, user, kind string) (Issued, error) {
	if err := ctx.Err(); err != nil {
		return Issued{}, err
	}
	if kind == "" {
		kind = KindFull
	}
	if !ValidKind(kind) {
		return Issued{}, errs.E(errs.Invalid, "token kind %q: use %s", kind, strings.Join(Kinds, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.GetUser(ctx, user)
	if err != nil {
		return Issued{}, err
	}
	it, rec, err := s.issue(u, kind)
	if err != nil {
		return Issued{}, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := put(b, tokenKey(rec.ID), rec); err != nil {
		return Issued{}, err
	}
	if err := s.db.Apply(b, kv.Sync); err != nil {
		return Issued{}, fmt.Errorf("auth: add token for %s: %w", user, err)
	}
	return it, nil
}

// issue makes a new token for u; the caller stores rec.
func (s *Store) issue(u User, kind string) (Issued, Token, error) {
	var idb [idLen / 2]byte
	var sec [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Issued{}, Token{}, fmt.Errorf("auth: random: %w", err)
	}
	if _, err := rand.Read(sec[:]); err != nil {
		return Issued{}, Token{}, fmt.Errorf("auth: random: %w", err)
	}
	id := hex.EncodeToString(idb[:])
	secret := tokenPrefix + id + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sec[:]))
	rec := Token{ID: id, User: u.Name, UserID: u.ID, Kind: kind, Hash: sha256.Sum256([]byte(secret)), Created: s.now().UnixMilli()}
	return Issued{Token: rec, Secret: secret}, rec, nil
}

// Authenticate returns the principal of token. Every failure wraps
// ErrUnauthenticated and says nothing about which part was wrong.
func (s *Store) Authenticate(ctx context.Context, token string) (Principal, error) {
	if err := ctx.Err(); err != nil {
		return Principal{}, err
	}
	id, ok := tokenID(token)
	if !ok {
		return Principal{}, ErrUnauthenticated
	}
	var t Token
	found, err := get(s.db, tokenKey(id), &t)
	if err != nil {
		return Principal{}, err
	}
	h := sha256.Sum256([]byte(token))
	if !found {
		// Compare anyway so that unknown and wrong tokens cost the same.
		subtle.ConstantTimeCompare(h[:], t.Hash[:])
		return Principal{}, ErrUnauthenticated
	}
	if subtle.ConstantTimeCompare(h[:], t.Hash[:]) != 1 {
		return Principal{}, ErrUnauthenticated
	}
	var u User
	found, err = get(s.db, userKey(t.User), &u)
	if err != nil {
		return Principal{}, err
	}
	// A token belongs to the user it was issued to, not to whoever holds
	// the name now (deleting a user deletes their tokens in the same
	// batch; this holds even if a record were left behind).
	if !found || u.ID == "" || (t.UserID != "" && t.UserID != u.ID) {
		return Principal{}, ErrUnauthenticated
	}
	return Principal{User: u.Name, UserID: u.ID, Admin: u.Admin(), TokenID: t.ID, Kind: t.Kind}, nil
}

// tokenID extracts the id of a well-formed token string.
func tokenID(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok || len(rest) < idLen+2 || rest[idLen] != '_' {
		return "", false
	}
	id := rest[:idLen]
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", false
	}
	return id, true
}

// userIDEncoding spells user ids: lowercase base32 without padding.
var userIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewUserID returns a new random user id: "u" and 16 base32 characters
// (80 random bits), so ids are never reused and never guessed.
func NewUserID() (string, error) {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("auth: random: %w", err)
	}
	return "u" + userIDEncoding.EncodeToString(b[:]), nil
}

// AssignIDs gives every user record written before users had ids a new
// id, and every token record the id of its user, adding the changes to b
// (the caller commits it, with whatever else must move together). It
// returns the id of every user by name. Users that have an id keep it, so
// running it again changes nothing: it is the user half of the owner
// migration (repo.Repo.MigrateOwners).
func (s *Store) AssignIDs(ctx context.Context, b *kv.Batch) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	us, err := s.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]string, len(us))
	for _, u := range us {
		if u.ID == "" {
			if u.ID, err = NewUserID(); err != nil {
				return nil, err
			}
			if err := put(b, userKey(u.Name), u); err != nil {
				return nil, err
			}
		}
		ids[u.Name] = u.ID
	}
	ts, err := s.ListTokens(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.UserID == "" && ids[t.User] != "" {
			t.UserID = ids[t.User]
			if err := put(b, tokenKey(t.ID), t); err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}

// UserByID returns the user whose id is id. Errors: ErrNotFound (no
// such user: never was, or deleted).
func (s *Store) UserByID(ctx context.Context, id string) (User, error) {
	us, err := s.ListUsers(ctx)
	if err != nil {
		return User{}, err
	}
	for _, u := range us {
		if id != "" && u.ID == id {
			return u, nil
		}
	}
	return User{}, fmt.Errorf("%w: user id %q", ErrNotFound, id)
}

// Names returns the name of every user by id, for showing owners.
func (s *Store) Names(ctx context.Context) (map[string]string, error) {
	us, err := s.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(us))
	for _, u := range us {
		if u.ID != "" {
			out[u.ID] = u.Name
		}
	}
	return out, nil
}

// GetUser returns user name. Errors: ErrNotFound.
func (s *Store) GetUser(ctx context.Context, name string) (User, error) {
	if err := ctx.Err(); err != nil {
		return User{}, err
	}
	var u User
	ok, err := get(s.db, userKey(name), &u)
	if err != nil {
		return User{}, err
	}
	if !ok {
		return User{}, errs.E(errs.NotFound, "user %q not found; `folio user list` shows the users", name)
	}
	return u, nil
}

// ListUsers returns every user in name order.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	var out []User
	err := scan(ctx, s.db, kv.TableKey("user"), func(v []byte) error {
		var u User
		if err := kv.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("auth: decode user record: %w", err)
		}
		out = append(out, u)
		return nil
	})
	return out, err
}

// ListTokens returns the tokens of user ("" for every user), ordered by
// user, then creation time.
func (s *Store) ListTokens(ctx context.Context, user string) ([]Token, error) {
	var out []Token
	err := scan(ctx, s.db, kv.TableKey("token"), func(v []byte) error {
		var t Token
		if err := kv.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("auth: decode token record: %w", err)
		}
		if user == "" || t.User == user {
			out = append(out, t)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].User != out[j].User {
			return out[i].User < out[j].User
		}
		return out[i].Created < out[j].Created
	})
	return out, err
}

// Count returns the number of users.
func (s *Store) Count(ctx context.Context) (int, error) {
	us, err := s.ListUsers(ctx)
	return len(us), err
}

// DeleteUser deletes user name and every token of theirs, and announces
// the tokens as revoked. The last admin cannot be deleted. Errors:
// ErrNotFound, ErrInvalid (the last admin).
func (s *Store) DeleteUser(ctx context.Context, name string) ([]Token, error) {
	s.mu.Lock()
	u, err := s.GetUser(ctx, name)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if u.Admin() {
		us, err := s.ListUsers(ctx)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		admins := 0
		for _, o := range us {
			if o.Admin() {
				admins++
			}
		}
		if admins == 1 {
			s.mu.Unlock()
			return nil, errs.E(errs.Invalid, "%s is the last admin; add another admin first (folio user add NAME --admin)", name)
		}
	}
	toks, err := s.ListTokens(ctx, name)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Delete(userKey(name)); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	ids := make([]string, len(toks))
	for i, t := range toks {
		ids[i] = t.ID
		if err := b.Delete(tokenKey(t.ID)); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		gone := t
		gone.Revoked = s.now().UnixMilli()
		if err := put(b, revokedKey(t.ID), gone); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	if err := s.db.Apply(b, kv.Sync); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("auth: delete user %s: %w", name, err)
	}
	s.mu.Unlock()
	s.notify(ids)
	return toks, nil
}

// FindToken resolves ref to one token: the whole token string, its
// "folio_<id>" prefix, its id, or a unique prefix of its id (at least 4
// hex digits). Errors: ErrNotFound, ErrInvalid (ambiguous or too short).
func (s *Store) FindToken(ctx context.Context, ref string) (Token, error) {
	ref = strings.TrimSpace(ref)
	if id, ok := tokenID(ref); ok {
		ref = id
	} else {
		ref = strings.TrimPrefix(ref, tokenPrefix)
	}
	if len(ref) < 4 || len(ref) > idLen {
		return Token{}, errs.E(errs.Invalid, "token %q: give its id (at least 4 of the 12 hex digits shown by `folio token list`) or the whole token", ref)
	}
	if _, err := hex.DecodeString(ref + strings.Repeat("0", len(ref)%2)); err != nil {
		return Token{}, errs.E(errs.Invalid, "token id %q is not hexadecimal", ref)
	}
	var match []Token
	err := scan(ctx, s.db, kv.TableKey("token", ref), func(v []byte) error {
		var t Token
		if err := kv.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("auth: decode token record: %w", err)
		}
		match = append(match, t)
		return nil
	})
	if err != nil {
		return Token{}, err
	}
	switch len(match) {
	case 0:
		return Token{}, s.notFound(ctx, ref)
	case 1:
		return match[0], nil
	}
	return Token{}, errs.E(errs.Invalid, "token id prefix %q matches %d tokens; give more digits", ref, len(match))
}

// notFound explains why no live token matches ref: it was revoked (a
// conflict that names when), or it never existed.
func (s *Store) notFound(ctx context.Context, ref string) error {
	var gone []Token
	err := scan(ctx, s.db, kv.TableKey("revoked", ref), func(v []byte) error {
		var t Token
		if err := kv.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("auth: decode revoked token record: %w", err)
		}
		gone = append(gone, t)
		return nil
	})
	if err != nil {
		return err
	}
	if len(gone) == 1 {
		t := gone[0]
		return errs.E(errs.Conflict, "token %s of user %s was already revoked (%s); nothing to do",
			t.Prefix(), t.User, time.UnixMilli(t.Revoked).UTC().Format(time.RFC3339))
	}
	return errs.E(errs.NotFound, "token %q not found; `folio token list` shows the tokens", ref)
}

// RevokeToken deletes the token ref names (see FindToken), keeps a
// tombstone that says when, and announces it. Errors: ErrNotFound,
// ErrInvalid, ErrExists (the token was already revoked).
func (s *Store) RevokeToken(ctx context.Context, ref string) (Token, error) {
	s.mu.Lock()
	t, err := s.FindToken(ctx, ref)
	if err != nil {
		s.mu.Unlock()
		return Token{}, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	t.Revoked = s.now().UnixMilli()
	err = b.Delete(tokenKey(t.ID))
	if err == nil {
		err = put(b, revokedKey(t.ID), t)
	}
	if err == nil {
		err = s.db.Apply(b, kv.Sync)
	}
	if err != nil {
		s.mu.Unlock()
		return Token{}, fmt.Errorf("auth: revoke token %s: %w", t.ID, err)
	}
	s.mu.Unlock()
	s.notify([]string{t.ID})
	return t, nil
}

func put(b *kv.Batch, key []byte, v any) error {
	data, err := kv.Marshal(v)
	if err != nil {
		return err
	}
	return b.Set(key, data)
}

func get(r kv.Reader, key []byte, v any) (bool, error) {
	data, err := kv.Get(r, key)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := kv.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("auth: decode %q: %w", bytes.TrimPrefix(key, []byte(kv.PrefixTable)), err)
	}
	return true, nil
}

func scan(ctx context.Context, db *kv.DB, prefix []byte, fn func(v []byte) error) error {
	it, err := db.NewIter(&kv.IterOptions{LowerBound: prefix, UpperBound: kv.PrefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}
