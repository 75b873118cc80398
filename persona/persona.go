package persona

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/source"
)

// Specific error codes (stable, append-only; the kind decides the HTTP
// status and exit code).
const (
	// CodeDisabled (disabled): [persona] enabled is off.
	CodeDisabled = "persona_disabled"
	// CodeNotGenerated (invalid): the persona has no active version yet.
	CodeNotGenerated = "persona_not_generated"
	// CodeSourceUnpublished (invalid): a source is not published.
	CodeSourceUnpublished = "source_unpublished"
	// CodePrivateSource (forbidden): a private or password source that
	// llm.PrivateAllowed refuses: an external provider without [privacy]
	// send_private_to_provider.
	CodePrivateSource = "private_source_blocked"
	// CodeSourceChanged (conflict): a source moved to another version
	// while the persona version was generated; nothing was activated.
	CodeSourceChanged = "source_changed"
)

// Limits.
const (
	MaxSources  = 100
	MaxNameLen  = 100 // code points
	maxDocIDLen = 128
)

// Visibilities of a source (as publishing defines them).
const (
	VisibilityPublic   = "public"
	VisibilityPrivate  = "private"
	VisibilityPassword = "password"
)

// Switches are the deployment's persona and privacy switches.
type Switches struct {
	// Enabled is [persona] enabled: off, every persona call answers
	// persona_disabled (editing, history and publishing never depend on it).
	Enabled bool
	// Style is [persona] style: off, persona runs get no style profile
	// (generation still builds one: every version pins a profile).
	Style bool
	// Learning and Memory are [persona] learning and memory: whether
	// generation builds those components and runs use them.
	Learning bool
	Memory   bool
	// SendPrivate is [privacy] send_private_to_provider: private and
	// password sources may be used at all.
	SendPrivate bool
	// PrivateMemory is [privacy] private_memory: memory may be extracted
	// from private and password sources (needs SendPrivate too).
	PrivateMemory bool
}

// SwitchesFrom reads the switches from the configuration.
func SwitchesFrom(c *config.Config) Switches {
	return Switches{Enabled: c.Persona.Enabled, Style: c.Persona.Style, Learning: c.Persona.Learning, Memory: c.Persona.Memory,
		SendPrivate: c.Privacy.SendPrivateToProvider, PrivateMemory: c.Privacy.PrivateMemory}
}

// Persona is an author's persona: a name and the source articles chosen.
type Persona struct {
	ID      string   `json:"id" msgpack:"id"`
	User    string   `json:"user" msgpack:"user"`
	Name    string   `json:"name" msgpack:"name"`
	Sources []string `json:"sources" msgpack:"sources"`
	// Active is the sequence number of the active version, 0 for none.
	Active   int   `json:"active" msgpack:"active"`
	Versions int   `json:"versions" msgpack:"versions"`
	Created  int64 `json:"created" msgpack:"created"`
	Updated  int64 `json:"updated" msgpack:"updated"`
}

// SourcePin is a source as a version pinned it.
type SourcePin struct {
	Pin        source.Pin `json:"pin" msgpack:"pin"`
	Visibility string     `json:"visibility" msgpack:"vis"`
	// Memory says whether the source fed the memory snapshot.
	Memory bool `json:"memory" msgpack:"mem"`
}

// Version is an immutable persona version: the pinned sources and the
// component versions it activated together.
type Version struct {
	ID      string      `json:"id" msgpack:"id"`
	Persona string      `json:"persona" msgpack:"persona"`
	User    string      `json:"user" msgpack:"user"`
	Seq     int         `json:"seq" msgpack:"seq"`
	Sources []SourcePin `json:"sources" msgpack:"sources"`
	// Style is the style profile id (always set).
	Style string `json:"style" msgpack:"style"`
	// Learning and Memory are snapshot ids, "" when the switch was off.
	Learning string `json:"learning,omitempty" msgpack:"learning,omitempty"`
	Memory   string `json:"memory,omitempty" msgpack:"memory,omitempty"`
	// Versions of the learners that built the components.
	Learner   string `json:"learner" msgpack:"learner"`
	Extractor string `json:"extractor,omitempty" msgpack:"extractor,omitempty"`
	Evaluator string `json:"evaluator,omitempty" msgpack:"evaluator,omitempty"`
	// Notes say what the generation left out and why.
	Notes   []string `json:"notes,omitempty" msgpack:"notes,omitempty"`
	Key     string   `json:"key,omitempty" msgpack:"key,omitempty"`
	Created int64    `json:"created" msgpack:"created"`
}

// Service is the persona domain API every transport calls. It is safe
// for concurrent use; generations of one persona are serialized.
type Service struct {
	db  *kv.DB
	idx *index.Index // nil: no retrieval (the outbox is still written)
	// runner runs the generation task (set by Register before it starts).
	runner *task.Runner
	sw     Switches
	now    func() time.Time
	log    *slog.Logger

	// mu guards locks.
	mu    sync.Mutex
	locks map[string]*sync.Mutex

	// describer adds the style profile's prose (nil: none).
	describer Describer
	// provider is the model provider a persona's sources reach (its
	// style prose, its runs): what llm.PrivateAllowed decides private
	// sources by. nil: not known, so external.
	provider llm.Provider

	// testHook, when set, runs at each stage of Generate; an error fails
	// the generation there (fault injection in tests).
	testHook func(stage string) error
}

// Options tune New.
type Options struct {
	Now    func() time.Time
	Logger *slog.Logger
}

// New returns the service over db. idx is the memory index (nil when the
// caller does no retrieval, e.g. a CLI command that only lists).
func New(db *kv.DB, idx *index.Index, sw Switches, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{db: db, idx: idx, sw: sw, now: o.Now, log: o.Logger, locks: map[string]*sync.Mutex{}}
}

// IndexSource is the index.Source over the service's memory tables, for
// index.Open.
func IndexSource() index.Source { return memorySource{} }

func (s *Service) lock(id string) func() {
	s.mu.Lock()
	l := s.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[id] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (s *Service) enabled() error {
	if !s.sw.Enabled {
		return errs.C(errs.Disabled, CodeDisabled, "personas are switched off ([persona] enabled = false)")
	}
	return nil
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "pn" + idEncoding.EncodeToString(b[:])
}

func checkSources(docs []string) ([]string, error) {
	if len(docs) == 0 {
		return nil, errs.E(errs.Invalid, "persona: choose at least one source article")
	}
	if len(docs) > MaxSources {
		return nil, errs.E(errs.TooLarge, "persona: %d sources, at most %d", len(docs), MaxSources)
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range docs {
		if d == "" || len(d) > maxDocIDLen || strings.ContainsRune(d, 0) {
			return nil, errs.E(errs.Invalid, "persona: source %q is not a document id", d)
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out, nil
}

func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > MaxNameLen || !utf8.ValidString(name) {
		return "", errs.E(errs.Invalid, "persona: a name is 1 to %d characters", MaxNameLen)
	}
	return name, nil
}

func checkUser(user string) error {
	if user == "" || len(user) > 128 || strings.ContainsRune(user, 0) {
		return errs.E(errs.Invalid, "persona: %q is not a user", user)
	}
	return nil
}

// Create makes a persona of user with the chosen source documents. The
// sources are checked (published, visibility) when a version is
// generated, not here: a choice is never an authorization.
func (s *Service) Create(ctx context.Context, user, name string, sources []string) (Persona, error) {
	if err := s.enabled(); err != nil {
		return Persona{}, err
	}
	if err := checkUser(user); err != nil {
		return Persona{}, err
	}
	name, err := checkName(name)
	if err != nil {
		return Persona{}, err
	}
	docs, err := checkSources(sources)
	if err != nil {
		return Persona{}, err
	}
	now := s.now().UnixMilli()
	p := Persona{ID: newID(), User: user, Name: name, Sources: docs, Created: now, Updated: now}
	b := s.db.NewBatch()
	defer b.Close()
	if err := kv.SetRecord(b, personaKey(p.ID), p); err != nil {
		return Persona{}, err
	}
	if err := b.Set(personaUserKey(user, p.ID), nil); err != nil {
		return Persona{}, err
	}
	if err := s.db.Apply(b, kv.Sync); err != nil {
		return Persona{}, err
	}
	return p, nil
}

// Get returns user's persona id; another user's persona is not found.
func (s *Service) Get(ctx context.Context, user, id string) (Persona, error) {
	if err := s.enabled(); err != nil {
		return Persona{}, err
	}
	return s.load(user, id)
}

func (s *Service) load(user, id string) (Persona, error) {
	var p Persona
	ok, err := kv.GetRecord(s.db, personaKey(id), &p)
	if err != nil {
		return Persona{}, err
	}
	if !ok || p.User != user {
		return Persona{}, errs.E(errs.NotFound, "persona: no persona %q", id)
	}
	return p, nil
}

// List returns user's personas, by id.
func (s *Service) List(ctx context.Context, user string) ([]Persona, error) {
	if err := s.enabled(); err != nil {
		return nil, err
	}
	p := personaUserPrefix(user)
	keys, err := kv.Keys(s.db, p, 0)
	if err != nil {
		return nil, err
	}
	var out []Persona
	for _, k := range keys {
		pr, err := s.load(user, string(k[len(p):]))
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// SetSources replaces the persona's chosen sources. The active version
// keeps the sources it pinned until the next generation.
func (s *Service) SetSources(ctx context.Context, user, id string, sources []string) (Persona, error) {
	if err := s.enabled(); err != nil {
		return Persona{}, err
	}
	docs, err := checkSources(sources)
	if err != nil {
		return Persona{}, err
	}
	defer s.lock(id)()
	p, err := s.load(user, id)
	if err != nil {
		return Persona{}, err
	}
	p.Sources, p.Updated = docs, s.now().UnixMilli()
	b := s.db.NewBatch()
	defer b.Close()
	if err := kv.SetRecord(b, personaKey(id), p); err != nil {
		return Persona{}, err
	}
	return p, s.db.Apply(b, kv.Sync)
}

// Versions returns the persona's versions, oldest first.
func (s *Service) Versions(ctx context.Context, user, id string) ([]Version, error) {
	if err := s.enabled(); err != nil {
		return nil, err
	}
	if _, err := s.load(user, id); err != nil {
		return nil, err
	}
	p := versionPrefix(id)
	keys, err := kv.Keys(s.db, p, 0)
	if err != nil {
		return nil, err
	}
	out := make([]Version, 0, len(keys))
	for _, k := range keys {
		var v Version
		if _, err := kv.GetRecord(s.db, k, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// Version returns version seq of the persona (0: the active one).
func (s *Service) Version(ctx context.Context, user, id string, seq int) (Version, error) {
	if err := s.enabled(); err != nil {
		return Version{}, err
	}
	p, err := s.load(user, id)
	if err != nil {
		return Version{}, err
	}
	return s.version(p, seq)
}

func (s *Service) version(p Persona, seq int) (Version, error) {
	if seq == 0 {
		seq = p.Active
	}
	if seq == 0 {
		return Version{}, errs.C(errs.Invalid, CodeNotGenerated, "persona %s has no version yet; generate one first", p.ID)
	}
	var v Version
	ok, err := kv.GetRecord(s.db, versionKey(p.ID, seq), &v)
	if err != nil {
		return Version{}, err
	}
	if !ok {
		return Version{}, errs.E(errs.NotFound, "persona: %s has no version %d", p.ID, seq)
	}
	if v.Persona != p.ID || v.User != p.User {
		return Version{}, errs.E(errs.Corrupt, "persona: version %d of %s names persona %s of %s", seq, p.ID, v.Persona, v.User)
	}
	return v, nil
}

// Activation records one move of a persona's active pointer back to an
// existing version: versions are never rewritten, and a generation moves
// the pointer by itself (its version's Created is its record).
type Activation struct {
	N       int    `json:"n" msgpack:"n"`
	Persona string `json:"persona" msgpack:"persona"`
	User    string `json:"user" msgpack:"user"`
	// From is the version active before, To the version made active.
	From int   `json:"from" msgpack:"from"`
	To   int   `json:"to" msgpack:"to"`
	Time int64 `json:"time" msgpack:"time"`
}

// Activate makes version seq of the persona the active one again. The
// version must exist; activating the active version is a no-op answered
// with the persona (no record). Each move is recorded (Activations).
func (s *Service) Activate(ctx context.Context, user, id string, seq int) (Persona, error) {
	if err := s.enabled(); err != nil {
		return Persona{}, err
	}
	if seq < 1 {
		return Persona{}, errs.E(errs.Invalid, "persona: version %d is not a version number; give one of 1..N from the version list", seq)
	}
	defer s.lock(id)()
	p, err := s.load(user, id)
	if err != nil {
		return Persona{}, err
	}
	if _, err := s.version(p, seq); err != nil {
		return Persona{}, err
	}
	if p.Active == seq {
		return p, nil
	}
	prev, err := kv.Keys(s.db, activatePrefix(id), 0)
	if err != nil {
		return Persona{}, err
	}
	now := s.now().UnixMilli()
	a := Activation{N: len(prev) + 1, Persona: id, User: user, From: p.Active, To: seq, Time: now}
	p.Active, p.Updated = seq, now
	b := s.db.NewBatch()
	defer b.Close()
	if err := kv.SetRecord(b, activateKey(id, a.N), a); err != nil {
		return Persona{}, err
	}
	if err := kv.SetRecord(b, personaKey(id), p); err != nil {
		return Persona{}, err
	}
	return p, s.db.Apply(b, kv.Sync)
}

// Activations returns the persona's re-activations, oldest first.
func (s *Service) Activations(ctx context.Context, user, id string) ([]Activation, error) {
	if err := s.enabled(); err != nil {
		return nil, err
	}
	if _, err := s.load(user, id); err != nil {
		return nil, err
	}
	keys, err := kv.Keys(s.db, activatePrefix(id), 0)
	if err != nil {
		return nil, err
	}
	out := make([]Activation, 0, len(keys))
	for _, k := range keys {
		var a Activation
		if _, err := kv.GetRecord(s.db, k, &a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// errWrap keeps a typed error's kind, wrapping with context.
func errWrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Switches are the switches the service was built with.
func (s *Service) Switches() Switches { return s.sw }
