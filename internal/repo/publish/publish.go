package publish

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// Visibilities of a document.
const (
	Public   = "public"
	Private  = "private"
	Password = "password"
)

// Events on a document's stream.
const (
	EventPublished   = "doc.published"
	EventUnpublished = "doc.unpublished"
	EventVisibility  = "doc.visibility"
)

// Specific error codes (stable, append-only; their kinds decide the HTTP
// status and the exit code).
const (
	// CodeSlugTaken (conflict): another published article has the slug.
	CodeSlugTaken = "slug_taken"
	// CodeCategoryUnknown (invalid): the article's category is not one of
	// the site's categories.
	CodeCategoryUnknown = "category_unknown"
	// CodePasswordRequired (invalid): visibility password without a
	// password set.
	CodePasswordRequired = "password_required"
	// CodeNotPublished (not found): unpublish of a document that is not
	// published.
	CodeNotPublished = "not_published"
	// CodeArticleNotFound (not found): the public API's answer for every
	// article a visitor may not read, whatever the reason.
	CodeArticleNotFound = "article_not_found"
	// CodeCategoryExists and CodeTagExists (conflict): a record of that
	// name exists.
	CodeCategoryExists = "category_exists"
	CodeTagExists      = "tag_exists"
	// CodeCategoryInUse and CodeTagInUse (conflict): published articles
	// use the record.
	CodeCategoryInUse = "category_in_use"
	CodeTagInUse      = "tag_in_use"
	// CodeCategoryNotFound and CodeTagNotFound (not found).
	CodeCategoryNotFound = "category_not_found"
	CodeTagNotFound      = "tag_not_found"
)

// Publication is a published article: the version its published ref
// names and that version's public attributes.
type Publication struct {
	Doc      string      `msgpack:"doc" json:"doc"`
	Version  objstore.ID `msgpack:"version" json:"version"`
	Label    string      `msgpack:"label" json:"label"`
	Slug     string      `msgpack:"slug" json:"slug"`
	Title    string      `msgpack:"title" json:"title"`
	Summary  string      `msgpack:"summary,omitempty" json:"summary,omitempty"`
	Category string      `msgpack:"category,omitempty" json:"category,omitempty"`
	Tags     []string    `msgpack:"tags,omitempty" json:"tags,omitempty"`
	// Published is when the article was first published (Unix ms); it
	// orders the public list. Updated is when this version was published.
	Published int64 `msgpack:"published" json:"published"`
	Updated   int64 `msgpack:"updated" json:"updated"`
	// Visibility is the document's visibility (filled in on reads).
	Visibility string `msgpack:"-" json:"visibility"`
	// Assets are the assets the version references (the t/assetpub
	// index of them moves with the publication).
	Assets []objstore.ID `msgpack:"assets,omitempty" json:"-"`
}

// visRec is a document's visibility setting: t/pubvis/<doc>. It exists
// from the first publish or visibility change on and outlives unpublish.
type visRec struct {
	Visibility string `msgpack:"vis"`
	Hash       string `msgpack:"hash,omitempty"` // argon2id PHC string (password visibility)
}

// PublishedEvent is the payload of doc.published.
type PublishedEvent struct {
	Version    objstore.ID `msgpack:"version" json:"version"`
	Label      string      `msgpack:"label" json:"label"`
	Previous   string      `msgpack:"previous,omitempty" json:"previous,omitempty"` // label published before, if any
	Slug       string      `msgpack:"slug" json:"slug"`
	Visibility string      `msgpack:"visibility" json:"visibility"`
	Actor      string      `msgpack:"actor" json:"actor"`
}

// UnpublishedEvent is the payload of doc.unpublished.
type UnpublishedEvent struct {
	Label string `msgpack:"label" json:"label"`
	Slug  string `msgpack:"slug" json:"slug"`
	Actor string `msgpack:"actor" json:"actor"`
}

// VisibilityEvent is the payload of doc.visibility.
type VisibilityEvent struct {
	Visibility string `msgpack:"visibility" json:"visibility"`
	Previous   string `msgpack:"previous" json:"previous"`
	Actor      string `msgpack:"actor" json:"actor"`
}

// Store publishes documents of one repository and answers the public
// reads. It is safe for concurrent use, and several Stores on one Repo
// are safe together: every decision is made under the document's lock
// and committed through a compare-and-swap of refs.
type Store struct {
	repo *repo.Repo
	db   *kv.DB
	refs *refs.Store
	objs *objstore.Store
	now  func() int64

	// termMu serializes changes of categories and tags with the publishes
	// that check them, so a category cannot vanish under an article
	// being published with it.
	termMu sync.Mutex

	guard     *guard                      // admits the public reads' password checks
	decoy     atomic.Pointer[objstore.ID] // a published version a missing slug's lookup reads (resolve)
	decoyOnce sync.Once
}

// New returns the Store of r. now is the clock of publication times (nil:
// time.Now).
func New(r *repo.Repo, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{repo: r, db: r.DB(), refs: r.Refs(), objs: r.Objects(),
		now: func() int64 { return now().UnixMilli() }, guard: newGuard(GuardLimits{})}
}

// SlugRef is the ref that claims slug for the article published under it;
// it names the published version. Its compare-and-swap is what makes a
// slug unique among published articles.
func SlugRef(slug string) string { return "pub/slugs/" + slug }

func pubKey(doc string) []byte { return kv.TableKey("pub", doc) }
func visKey(doc string) []byte { return kv.TableKey("pubvis", doc) }

// assetPubKey is t/assetpub/<asset hex>\x00<doc>: the document's
// published version references the asset.
func assetPubKey(a objstore.ID, doc string) []byte { return kv.TableKey("assetpub", a.String(), doc) }

// listKey orders published articles newest first: t/publ/<^published 8>\x00<doc>.
func listKey(published int64, doc string) []byte {
	k := kv.Uint64(kv.TableKey("publ", ""), math.MaxUint64-uint64(published))
	return append(append(k, 0), doc...)
}
func catListPrefix(cat string) []byte { return append(kv.TableKey("publcat", foldName(cat)), 0) }
func tagListPrefix(tag string) []byte { return append(kv.TableKey("publtag", foldName(tag)), 0) }
func catListKey(cat string, published int64, doc string) []byte {
	k := kv.Uint64(catListPrefix(cat), math.MaxUint64-uint64(published))
	return append(append(k, 0), doc...)
}
func tagListKey(tag string, published int64, doc string) []byte {
	k := kv.Uint64(tagListPrefix(tag), math.MaxUint64-uint64(published))
	return append(append(k, 0), doc...)
}

// repoErr gives a content-service error its kind, keeping its message.
func repoErr(err error) error {
	var kinded interface{ ErrKind() errs.Kind }
	switch {
	case err == nil:
		return nil
	case errors.As(err, &kinded):
		return err
	case errors.Is(err, repo.ErrNotFound):
		return errs.Wrap(errs.NotFound, err)
	case errors.Is(err, repo.ErrConflict):
		return errs.Wrap(errs.Conflict, err)
	case errors.Is(err, repo.ErrInvalid):
		return errs.Wrap(errs.Invalid, err)
	}
	return err
}

// ValidVisibility reports whether v is public, private or password.
func ValidVisibility(v string) bool { return v == Public || v == Private || v == Password }

// Params is one publish.
type Params struct {
	Doc     string
	Actor   string
	Message string // message of the publish checkpoint, when one is sealed
	// Visibility, when set, changes the document's visibility; "" keeps
	// it (public for a document that never had one).
	Visibility string
	// Password sets the password of a password-protected article; it is
	// required the first time the visibility becomes password.
	Password string
	// MaySee reports whether the caller may see document doc; a slug
	// conflict names the other article only when it does. Nil: never.
	MaySee func(doc string) bool
}

// Result is what a publish did.
type Result struct {
	Publication Publication `json:"publication"`
	// Sealed is the publish checkpoint, when the draft was unsealed.
	Sealed *repo.VersionInfo `json:"sealed,omitempty"`
	// Moved is false when the head was already the published version
	// (only the visibility may have changed).
	Moved bool `json:"moved"`
	// Previous is the label published before, "" for a first publish.
	Previous string `json:"previous,omitempty"`
}

// Publish seals the draft as a publish checkpoint when it is unsealed and
// moves the document's published ref to its head: a first publish,
// or a republish that moves it forward. The ref, the slug claim, the
// publication record, the list indexes, tags created on use, the
// visibility and the doc.published event commit in one synced batch.
//
// The article's slug is its attrs.slug, or the document id in lowercase
// with '_' as '-' when it has none. Its category must be one of the site's
// categories (category_unknown otherwise); tags that do not exist are
// created. A slug another published article holds is slug_taken.
func (s *Store) Publish(ctx context.Context, p Params) (Result, error) {
	if p.Visibility != "" && !ValidVisibility(p.Visibility) {
		return Result{}, errs.E(errs.Invalid, "visibility %q: want public, private or password", p.Visibility)
	}
	hash, err := s.passwordHash(p.Visibility, p.Password)
	if err != nil {
		return Result{}, err
	}
	// What can be checked on the draft is checked before it is sealed, so
	// that a refused publish leaves no publish checkpoint behind; the
	// checks run again on the sealed version under the lock.
	d, err := s.repo.Draft(ctx, p.Doc)
	if err != nil {
		return Result{}, repoErr(err)
	}
	if err := s.checkAttrs(p.Doc, d.Attrs.Title, d.Attrs.Category); err != nil {
		return Result{}, err
	}
	if err := s.precheck(ctx, p, d.Attrs, hash); err != nil {
		return Result{}, err
	}
	var res Result
	sealed, created, err := s.repo.Checkpoint(ctx, p.Doc, objstore.ReasonPublish, p.Actor, p.Message)
	if err != nil {
		return Result{}, repoErr(err)
	}
	if created {
		res.Sealed = &sealed
	}
	err = s.repo.Locked(ctx, p.Doc, func(tx *repo.DocTx) error {
		v, err := s.objs.GetVersion(tx.Head)
		if err != nil {
			return fmt.Errorf("read head of %s: %w", p.Doc, err)
		}
		slug := v.Attrs.Slug
		if slug == "" {
			slug = SlugOfID(p.Doc)
		}
		s.termMu.Lock()
		defer s.termMu.Unlock()
		if err := s.checkAttrs(p.Doc, v.Attrs.Title, v.Attrs.Category); err != nil {
			return err
		}
		vis, _, err := s.loadVis(p.Doc)
		if err != nil {
			return err
		}
		prevVis := vis.Visibility
		vis, err = nextVis(vis, p.Visibility, hash)
		if err != nil {
			return err
		}
		var prev Publication
		published, err := kv.GetRecord(s.db, pubKey(p.Doc), &prev)
		if err != nil {
			return err
		}
		prevID, err := s.refs.Get(repo.PublishedRef(p.Doc))
		if err != nil && !errors.Is(err, refs.ErrNotFound) {
			return err
		}
		// A ref without a record (imported from a pack: packs carry
		// published refs, not publication records) is repaired by this
		// publish; the swap is against the ref's real value.
		now := s.now()
		b := s.db.NewBatch()
		owned := true
		defer func() {
			if owned {
				b.Close()
			}
		}()
		if vis.Visibility != prevVis || p.Password != "" {
			if err := kv.SetRecord(b, visKey(p.Doc), vis); err != nil {
				return err
			}
		}
		if vis.Visibility != prevVis {
			if err := tx.Emit(b, EventVisibility, now, VisibilityEvent{Visibility: vis.Visibility, Previous: prevVis, Actor: p.Actor}); err != nil {
				return err
			}
		}
		if published && prevID == tx.Head {
			prev.Visibility = vis.Visibility
			res.Publication, res.Previous = prev, prev.Label
			moves, err := s.slugMoves(p.Doc, prev.Slug, prev.Slug, prev.Version, reachable(vis.Visibility), p.MaySee)
			if err != nil {
				return err
			}
			if b.Empty() && len(moves) == 0 {
				return nil
			}
			if err := s.repo.EnqueueDoc(b, p.Doc); err != nil {
				return err
			}
			owned = false
			if len(moves) > 0 {
				return s.refs.Update(b, moves, "visibility "+vis.Visibility)
			}
			return s.db.Apply(b, kv.Sync)
		}
		pub := Publication{Doc: p.Doc, Version: tx.Head, Label: v.Label, Slug: slug, Title: v.Attrs.Title,
			Summary: v.Attrs.Summary, Category: v.Attrs.Category, Tags: dedupTags(v.Attrs.Tags),
			Published: now, Updated: now}
		if pub.Assets, err = s.objs.VersionAssets(v); err != nil {
			return err
		}
		if published {
			pub.Published = prev.Published
			if err := deleteIndexes(b, prev); err != nil {
				return err
			}
		}
		// Slug claims move with the published ref in one compare-and-swap;
		// a private article claims none (see slugMoves).
		ups := []refs.Update{{Name: repo.PublishedRef(p.Doc), Old: prevID, New: tx.Head}}
		oldSlug := ""
		if published {
			oldSlug = prev.Slug
		}
		moves, err := s.slugMoves(p.Doc, oldSlug, slug, tx.Head, reachable(vis.Visibility), p.MaySee)
		if err != nil {
			return err
		}
		ups = append(ups, moves...)
		fresh, err := s.checkTags(p.Actor, pub.Tags, now)
		if err != nil {
			return err
		}
		for _, t := range fresh {
			if err := kv.SetRecord(b, tagKey(t), Term{Name: t, Created: now}); err != nil {
				return err
			}
		}
		if err := s.countNewTags(b, p.Actor, now, len(fresh)); err != nil {
			return err
		}
		if err := kv.SetRecord(b, pubKey(p.Doc), pub); err != nil {
			return err
		}
		if err := addIndexes(b, pub); err != nil {
			return err
		}
		ev := PublishedEvent{Version: tx.Head, Label: v.Label, Slug: slug, Visibility: vis.Visibility, Actor: p.Actor}
		if published {
			ev.Previous = prev.Label
		}
		if err := tx.Emit(b, EventPublished, now, ev); err != nil {
			return err
		}
		if err := s.repo.EnqueueDoc(b, p.Doc); err != nil {
			return err
		}
		owned = false
		err = s.refs.Update(b, ups, "publish "+v.Label)
		if errors.Is(err, refs.ErrConflict) {
			// Only the slug claim can race: the published ref moves
			// under the document's lock.
			if _, cerr := s.slugMoves(p.Doc, oldSlug, slug, tx.Head, reachable(vis.Visibility), p.MaySee); cerr != nil {
				return cerr
			}
			return errs.E(errs.Conflict, "publishing %s raced another change; nothing was published, retry: %w", p.Doc, err)
		}
		if err != nil {
			return err
		}
		pub.Visibility = vis.Visibility
		res.Publication, res.Moved, res.Previous = pub, true, ev.Previous
		return nil
	})
	if err != nil {
		return Result{}, repoErr(err)
	}
	s.repo.OutboxCommitted()
	return res, nil
}

// checkAttrs checks what publishing needs of an article's attributes: a
// title, and a category (if any) that the site has.
func (s *Store) checkAttrs(doc, title, category string) error {
	if strings.TrimSpace(title) == "" {
		return errs.E(errs.Invalid, "document %s has no title; give it one before publishing", doc)
	}
	if category == "" {
		return nil
	}
	ok, err := s.hasName(catKey(category))
	if err != nil {
		return err
	}
	if !ok {
		return errs.C(errs.Invalid, CodeCategoryUnknown,
			"category %q does not exist; an admin creates it with `folio category add %s`, or choose one of `folio category list`", category, category)
	}
	return nil
}

// precheck runs on the draft's attributes the refusals the publish would
// otherwise meet only after sealing it (a slug another article holds, a
// password visibility without a password, too many tags), so that a
// refused publish seals no checkpoint. The same checks run again on the
// sealed version under the lock.
func (s *Store) precheck(ctx context.Context, p Params, attrs flowdoc.Attributes, hash string) error {
	slug := attrs.Slug
	if slug == "" {
		slug = SlugOfID(p.Doc)
	}
	cur, _, err := s.loadVis(p.Doc)
	if err != nil {
		return err
	}
	next, err := nextVis(cur, p.Visibility, hash)
	if err != nil {
		return err
	}
	if reachable(next.Visibility) {
		if err := s.releaseHidden(ctx, slug, p.Doc); err != nil {
			return err
		}
		if err := s.checkSlug(slug, p.Doc, p.MaySee); err != nil {
			return err
		}
	}
	_, err = s.checkTags(p.Actor, dedupTags(attrs.Tags), s.now())
	return err
}

// Bounds on tags, which publishing creates on use.
const (
	// MaxArticleTags bounds the tags of one published article.
	MaxArticleTags = 32
	// NewTagsPerDay bounds the tags one user's publishes create in a UTC
	// day (admins create more with POST /v1/tags).
	NewTagsPerDay = 100
)

// Codes of the tag bounds.
const (
	// CodeTooManyTags (invalid, 400): an article with more than
	// MaxArticleTags tags.
	CodeTooManyTags = "too_many_tags"
	// CodeTagLimit (rate_limited, 429): the publish would create more
	// tags than the user may create today.
	CodeTagLimit = "tag_limit"
)

func newTagsKey(actor string, now int64) []byte {
	return kv.TableKey("tagnew", actor, time.UnixMilli(now).UTC().Format("2006-01-02"))
}

// checkTags returns the tags of ts that do not exist yet, refusing an
// article over MaxArticleTags and a publish by actor that would create
// more than NewTagsPerDay tags today.
func (s *Store) checkTags(actor string, ts []string, now int64) ([]string, error) {
	if len(ts) > MaxArticleTags {
		return nil, errs.C(errs.Invalid, CodeTooManyTags, "the article has %d tags; a published article has at most %d", len(ts), MaxArticleTags)
	}
	var fresh []string
	for _, t := range ts {
		ok, err := s.hasName(tagKey(t))
		if err != nil {
			return nil, err
		}
		if !ok {
			fresh = append(fresh, t)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	var made int
	if _, err := kv.GetRecord(s.db, newTagsKey(actor, now), &made); err != nil {
		return nil, err
	}
	if made+len(fresh) > NewTagsPerDay {
		day := time.UnixMilli(now).UTC()
		next := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, time.UTC)
		e := errs.C(errs.RateLimited, CodeTagLimit, "publishing this would create %d new tags; you created %d today and may create %d a day: use existing tags, or ask an admin to create them", len(fresh), made, NewTagsPerDay)
		e.RetryAfter = next.Sub(day)
		return nil, e
	}
	return fresh, nil
}

// countNewTags adds n to the tags actor created today, in b.
func (s *Store) countNewTags(b *kv.Batch, actor string, now int64, n int) error {
	if n == 0 {
		return nil
	}
	var made int
	if _, err := kv.GetRecord(s.db, newTagsKey(actor, now), &made); err != nil {
		return err
	}
	return kv.SetRecord(b, newTagsKey(actor, now), made+n)
}

// reachable reports whether a published article of visibility vis is
// reachable at its URL, and so holds its slug: public articles, and
// password-protected ones, whose URL the site answers with a password
// form for anyone (their existence under the slug is public; their text
// is not). A private article is reachable nowhere and holds no slug.
func reachable(vis string) bool { return vis == Public || vis == Password }

// slugHolder returns the version that claims slug and its document; ""
// when no article claims it.
func (s *Store) slugHolder(slug string) (objstore.ID, *objstore.Version, error) {
	id, err := s.refs.Get(SlugRef(slug))
	if errors.Is(err, refs.ErrNotFound) {
		return objstore.ID{}, nil, nil
	}
	if err != nil {
		return objstore.ID{}, nil, err
	}
	v, err := s.objs.GetVersion(id)
	if err != nil {
		return objstore.ID{}, nil, fmt.Errorf("read the version slug %q names: %w", slug, err)
	}
	return id, v, nil
}

// checkSlug refuses a slug that another reachable article holds.
func (s *Store) checkSlug(slug, doc string, maySee func(string) bool) error {
	_, v, err := s.slugHolder(slug)
	if err != nil || v == nil || v.Doc == doc {
		return err
	}
	return slugTaken(slug, v, maySee)
}

func slugTaken(slug string, holder *objstore.Version, maySee func(string) bool) error {
	if maySee != nil && maySee(holder.Doc) {
		return errs.C(errs.Conflict, CodeSlugTaken, "slug %q is used by the published article %s (%q); choose another slug", slug, holder.Doc, holder.Attrs.Title)
	}
	return errs.C(errs.Conflict, CodeSlugTaken, "slug %q is used by another published article; choose another slug", slug)
}

// slugMoves returns the ref updates that leave document doc's slug claim
// right when its published version becomes id under newSlug: the claim
// of oldSlug ("" for none) released when doc holds it and keeps it no
// longer, and newSlug claimed for id when claim (the article is
// reachable). Another article's claim of newSlug is slug_taken. Only
// reachable articles hold claims, so that answer depends on nothing a
// visitor of the site could not see: a private article (or a draft) never
// makes a slug taken. The updates are compare-and-swaps, so a claim that
// races another one commits for exactly one of them.
func (s *Store) slugMoves(doc, oldSlug, newSlug string, id objstore.ID, claim bool, maySee func(string) bool) ([]refs.Update, error) {
	var ups []refs.Update
	if oldSlug != "" && (oldSlug != newSlug || !claim) {
		cur, v, err := s.slugHolder(oldSlug)
		if err != nil {
			return nil, err
		}
		if v != nil && v.Doc == doc {
			ups = append(ups, refs.Update{Name: SlugRef(oldSlug), Old: cur})
		}
	}
	if !claim {
		return ups, nil
	}
	cur, v, err := s.slugHolder(newSlug)
	if err != nil {
		return nil, err
	}
	if v != nil && v.Doc != doc {
		return nil, slugTaken(newSlug, v, maySee)
	}
	if cur != id {
		ups = append(ups, refs.Update{Name: SlugRef(newSlug), Old: cur, New: id})
	}
	return ups, nil
}

// releaseHidden releases slug when a private article claims it: stores
// written before private articles stopped holding slugs have such
// claims, and the article that wants the slug must not learn of them.
// The release runs under the holder's lock and re-checks its visibility
// there, so it cannot race the holder becoming reachable again.
func (s *Store) releaseHidden(ctx context.Context, slug, doc string) error {
	id, v, err := s.slugHolder(slug)
	if err != nil || v == nil || v.Doc == doc {
		return err
	}
	vis, _, err := s.loadVis(v.Doc)
	if err != nil || reachable(vis.Visibility) {
		return err
	}
	return s.repo.Locked(ctx, v.Doc, func(*repo.DocTx) error {
		vis, _, err := s.loadVis(v.Doc)
		if err != nil || reachable(vis.Visibility) {
			return err
		}
		err = s.refs.Update(s.db.NewBatch(), []refs.Update{{Name: SlugRef(slug), Old: id}}, "release the slug of a private article")
		if errors.Is(err, refs.ErrConflict) {
			return nil // moved meanwhile: the caller's own compare-and-swap decides
		}
		return err
	})
}

// nextVis applies a requested visibility (and password hash) to cur.
func nextVis(cur visRec, want, hash string) (visRec, error) {
	if cur.Visibility == "" {
		cur.Visibility = Public
	}
	if want != "" {
		cur.Visibility = want
	}
	switch {
	case cur.Visibility == Password && hash != "":
		cur.Hash = hash
	case cur.Visibility == Password && cur.Hash == "":
		return cur, errs.C(errs.Invalid, CodePasswordRequired, "visibility password needs a password: pass it on standard input (--password-stdin) or in the request's password field")
	case cur.Visibility != Password:
		cur.Hash = "" // leaving password visibility forgets the password
	}
	return cur, nil
}

func (s *Store) passwordHash(vis, pw string) (string, error) {
	if pw == "" {
		return "", nil
	}
	if vis != Password {
		return "", errs.E(errs.Invalid, "a password goes with visibility password; add --visibility password")
	}
	if len(pw) > MaxPassword || !utf8.ValidString(pw) {
		return "", errs.E(errs.Invalid, "the password must be valid UTF-8 of at most %d bytes", MaxPassword)
	}
	if n := utf8.RuneCountInString(pw); n < MinPassword {
		return "", errs.C(errs.Invalid, CodePasswordTooShort, "the password has %d characters; an article's password needs at least %d", n, MinPassword)
	}
	return hashPassword(pw)
}

func (s *Store) loadVis(doc string) (visRec, bool, error) {
	var v visRec
	ok, err := kv.GetRecord(s.db, visKey(doc), &v)
	if v.Visibility == "" {
		v.Visibility = Public
	}
	return v, ok, err
}

func addIndexes(b *kv.Batch, p Publication) error {
	if err := b.Set(listKey(p.Published, p.Doc), nil); err != nil {
		return err
	}
	for _, a := range p.Assets {
		if err := b.Set(assetPubKey(a, p.Doc), nil); err != nil {
			return err
		}
	}
	if p.Category != "" {
		if err := b.Set(catListKey(p.Category, p.Published, p.Doc), nil); err != nil {
			return err
		}
	}
	for _, t := range p.Tags {
		if err := b.Set(tagListKey(t, p.Published, p.Doc), nil); err != nil {
			return err
		}
	}
	return nil
}

func deleteIndexes(b *kv.Batch, p Publication) error {
	if err := b.Delete(listKey(p.Published, p.Doc)); err != nil {
		return err
	}
	for _, a := range p.Assets {
		if err := b.Delete(assetPubKey(a, p.Doc)); err != nil {
			return err
		}
	}
	if p.Category != "" {
		if err := b.Delete(catListKey(p.Category, p.Published, p.Doc)); err != nil {
			return err
		}
	}
	for _, t := range p.Tags {
		if err := b.Delete(tagListKey(t, p.Published, p.Doc)); err != nil {
			return err
		}
	}
	return nil
}

// dedupTags drops repeated tags (compared case-insensitively), keeping
// the first spelling.
func dedupTags(tags []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[foldName(t)] {
			continue
		}
		seen[foldName(t)] = true
		out = append(out, t)
	}
	return out
}

// SlugOfID is the slug of an article without attrs.slug: its document id
// in lowercase with '_' as '-'.
func SlugOfID(doc string) string {
	return strings.ReplaceAll(strings.ToLower(doc), "_", "-")
}

// Unpublish removes document doc's published ref, its slug claim, its
// publication record and list entries, in one synced batch with a
// doc.unpublished event. A document that is not published is
// not_published.
func (s *Store) Unpublish(ctx context.Context, doc, actor string) (Publication, error) {
	var out Publication
	err := s.repo.Locked(ctx, doc, func(tx *repo.DocTx) error {
		var prev Publication
		ok, err := kv.GetRecord(s.db, pubKey(doc), &prev)
		if err != nil {
			return err
		}
		if !ok {
			return errs.C(errs.NotFound, CodeNotPublished, "document %s is not published", doc)
		}
		b := s.db.NewBatch()
		if err := b.Delete(pubKey(doc)); err != nil {
			b.Close()
			return err
		}
		if err := deleteIndexes(b, prev); err != nil {
			b.Close()
			return err
		}
		if err := tx.Emit(b, EventUnpublished, s.now(), UnpublishedEvent{Label: prev.Label, Slug: prev.Slug, Actor: actor}); err != nil {
			b.Close()
			return err
		}
		if err := s.repo.EnqueueDoc(b, doc); err != nil {
			b.Close()
			return err
		}
		moves, err := s.slugMoves(doc, prev.Slug, "", objstore.ID{}, false, nil)
		if err != nil {
			b.Close()
			return err
		}
		ups := append([]refs.Update{{Name: repo.PublishedRef(doc), Old: prev.Version}}, moves...)
		if err := s.refs.Update(b, ups, "unpublish "+prev.Label); err != nil {
			return fmt.Errorf("unpublish %s: %w", doc, err)
		}
		out = prev
		return nil
	})
	if err != nil {
		return Publication{}, repoErr(err)
	}
	s.repo.OutboxCommitted()
	vis, _, err := s.loadVis(doc)
	out.Visibility = vis.Visibility
	return out, err
}

// Visibility is a document's visibility setting.
type Visibility struct {
	Doc        string `json:"doc"`
	Visibility string `json:"visibility"`
	// HasPassword says whether a password is set (never the password).
	HasPassword bool `json:"hasPassword"`
	// Published is the published label, "" when not published.
	Published string `json:"published,omitempty"`
}

// SetVisibility changes document doc's visibility at once, published or
// not, without publishing anything: a published article turns private the
// moment this returns. password is required the first time visibility
// becomes password and replaces the old one when given.
func (s *Store) SetVisibility(ctx context.Context, doc, actor, visibility, password string) (Visibility, error) {
	if !ValidVisibility(visibility) {
		return Visibility{}, errs.E(errs.Invalid, "visibility %q: want public, private or password", visibility)
	}
	hash, err := s.passwordHash(visibility, password)
	if err != nil {
		return Visibility{}, err
	}
	if reachable(visibility) {
		var pub Publication
		ok, err := kv.GetRecord(s.db, pubKey(doc), &pub)
		if err != nil {
			return Visibility{}, err
		}
		if ok {
			if err := s.releaseHidden(ctx, pub.Slug, doc); err != nil {
				return Visibility{}, err
			}
		}
	}
	var out Visibility
	err = s.repo.Locked(ctx, doc, func(tx *repo.DocTx) error {
		cur, _, err := s.loadVis(doc)
		if err != nil {
			return err
		}
		next, err := nextVis(cur, visibility, hash)
		if err != nil {
			return err
		}
		var pub Publication
		published, err := kv.GetRecord(s.db, pubKey(doc), &pub)
		if err != nil {
			return err
		}
		out = Visibility{Doc: doc, Visibility: next.Visibility, HasPassword: next.Hash != "", Published: pub.Label}
		// A published article claims its slug while it is reachable and
		// gives it up while it is private (slugMoves); the claim moves in
		// the batch that changes the visibility.
		var moves []refs.Update
		if published {
			if moves, err = s.slugMoves(doc, pub.Slug, pub.Slug, pub.Version, reachable(next.Visibility), nil); err != nil {
				return err
			}
		}
		if next == cur && len(moves) == 0 {
			return nil
		}
		b := s.db.NewBatch()
		owned := true
		defer func() {
			if owned {
				b.Close()
			}
		}()
		if err := kv.SetRecord(b, visKey(doc), next); err != nil {
			return err
		}
		if err := s.repo.EnqueueDoc(b, doc); err != nil {
			return err
		}
		if next.Visibility != cur.Visibility {
			if err := tx.Emit(b, EventVisibility, s.now(), VisibilityEvent{Visibility: next.Visibility, Previous: cur.Visibility, Actor: actor}); err != nil {
				return err
			}
		}
		owned = false
		if len(moves) > 0 {
			err := s.refs.Update(b, moves, "visibility "+next.Visibility)
			if errors.Is(err, refs.ErrConflict) {
				return errs.E(errs.Conflict, "changing the visibility of %s raced a publish of its slug %q; nothing changed, retry: %w", doc, pub.Slug, err)
			}
			return err
		}
		return s.db.Apply(b, kv.Sync)
	})
	if err != nil {
		return Visibility{}, repoErr(err)
	}
	s.repo.OutboxCommitted()
	return out, nil
}

// Status returns document doc's visibility and publication.
func (s *Store) Status(ctx context.Context, doc string) (Visibility, *Publication, error) {
	if _, err := s.repo.DocOwner(doc); err != nil {
		return Visibility{}, nil, repoErr(err)
	}
	vis, _, err := s.loadVis(doc)
	if err != nil {
		return Visibility{}, nil, err
	}
	out := Visibility{Doc: doc, Visibility: vis.Visibility, HasPassword: vis.Hash != ""}
	var pub Publication
	ok, err := kv.GetRecord(s.db, pubKey(doc), &pub)
	if err != nil || !ok {
		return out, nil, err
	}
	pub.Visibility = vis.Visibility
	out.Published = pub.Label
	return out, &pub, nil
}
