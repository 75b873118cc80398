package publish

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// The public reads see only published articles a visitor may read: public
// ones, and password-protected ones with the right password. Everything
// else — private, password-protected without the right password, never
// published, unpublished, unknown — is the same error (NotFound), built
// from the request alone so that it says nothing the visitor did not send.

// NotFound is the public API's error for an article a visitor may not read.
func NotFound(slug string) error {
	return errs.C(errs.NotFound, CodeArticleNotFound, "no published article %q", slug)
}

// Article is a published article as the public reads it.
type Article struct {
	Publication
	Body flowdoc.Document `json:"body"`
}

// Reader is a visitor asking for an article: the password it presents
// ("" for none) and its client address ("" when unknown), which the
// password guard's limits are kept per.
type Reader struct {
	Password string
	Addr     string
}

// ArticleBySlug returns the published article with slug, when a visitor
// presenting password ("" for none) may read it; NotFound(slug) otherwise.
func (s *Store) ArticleBySlug(ctx context.Context, slug, password string) (*Article, error) {
	pub, vis, err := s.PublicationFor(ctx, slug, Reader{Password: password})
	if err != nil {
		return nil, err
	}
	body, err := s.Body(ctx, pub)
	if err != nil {
		return nil, err
	}
	pub.Visibility = vis
	return &Article{Publication: pub, Body: body}, nil
}

// PublicationBySlug is PublicationFor a reader of unknown address.
func (s *Store) PublicationBySlug(ctx context.Context, slug, password string) (Publication, string, error) {
	return s.PublicationFor(ctx, slug, Reader{Password: password})
}

// PublicationFor is ArticleBySlug without the body, for reader: the
// publication and its visibility, for a caller that caches bodies by
// version. Only a password-protected article runs a password check,
// through the password guard (see guard): besides NotFound it returns
// the guard's rate-limited errors (CodePasswordRateLimited,
// CodePasswordBusy) and ctx's error when the request ended while its
// check waited.
func (s *Store) PublicationFor(ctx context.Context, slug string, rd Reader) (Publication, string, error) {
	if err := ctx.Err(); err != nil {
		return Publication{}, "", err
	}
	pub, vis, err := s.resolve(slug)
	if err != nil {
		return Publication{}, "", err
	}
	if vis.Visibility == Public {
		return pub, Public, nil // a password sent along is of no interest
	}
	if rd.Password == "" {
		return Publication{}, "", NotFound(slug)
	}
	if err := s.guard.open(rd.Addr, slug); err != nil {
		return Publication{}, "", err
	}
	if vis.Visibility != Password { // missing, private: no check, a failure all the same
		s.guard.fail(rd.Addr, slug)
		return Publication{}, "", NotFound(slug)
	}
	var ok bool
	if err := s.guard.check(ctx, rd.Addr, func() { ok = checkPassword(vis.Hash, rd.Password) }); err != nil {
		return Publication{}, "", err
	}
	if !ok {
		s.guard.fail(rd.Addr, slug)
		return Publication{}, "", NotFound(slug)
	}
	s.guard.succeed(rd.Addr)
	return pub, Password, nil
}

// PasswordStats reports what the password guard of the public reads did.
func (s *Store) PasswordStats() GuardStats { return s.guard.Stats() }

// resolve finds the publication under slug and its visibility; a slug
// that no article may be read under gives visibility "" and no error.
// A missing slug does the same reads as a hidden one (against the decoy
// publication), so that the two take the same time.
func (s *Store) resolve(slug string) (Publication, visRec, error) {
	var id objstore.ID
	var err error
	found := false
	if validSlug(slug) {
		id, err = s.refs.Get(SlugRef(slug))
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, refs.ErrNotFound):
			return Publication{}, visRec{}, err
		}
	}
	if !found {
		id = s.decoyVersion()
		if id.IsZero() {
			return Publication{}, visRec{}, nil
		}
	}
	v, err := s.objs.GetVersion(id)
	if err != nil {
		if !found {
			return Publication{}, visRec{}, nil
		}
		return Publication{}, visRec{}, err
	}
	var pub Publication
	ok, err := kv.GetRecord(s.db, pubKey(v.Doc), &pub)
	if err != nil {
		return Publication{}, visRec{}, err
	}
	vis, _, err := s.loadVis(v.Doc)
	if err != nil {
		return Publication{}, visRec{}, err
	}
	if !found || !ok || pub.Version != id || pub.Slug != slug {
		return Publication{}, visRec{}, nil // missing, or an unpublish or republish committed meanwhile
	}
	s.decoy.CompareAndSwap(nil, &id)
	switch vis.Visibility {
	case Public, Password:
	default:
		vis.Visibility = ""
	}
	pub.Visibility = vis.Visibility
	return pub, vis, nil
}

// decoyVersion is a published version whose records a missing slug's
// lookup reads; zero when nothing was ever published.
func (s *Store) decoyVersion() objstore.ID {
	if p := s.decoy.Load(); p != nil {
		return *p
	}
	s.decoyOnce.Do(func() {
		m, _, err := s.refs.List("pub/slugs/")
		if err != nil {
			return
		}
		for _, id := range m {
			s.decoy.CompareAndSwap(nil, &id)
			break
		}
	})
	if p := s.decoy.Load(); p != nil {
		return *p
	}
	return objstore.ID{}
}

// PasswordProtected reports whether slug names a published article whose
// visibility is password (the site shows such an article's password
// form). Everything else, private and unpublished articles included, is
// false, as for a slug nobody uses.
func (s *Store) PasswordProtected(ctx context.Context, slug string) (bool, error) {
	if err := ctx.Err(); err != nil || !validSlug(slug) {
		return false, err
	}
	id, err := s.refs.Get(SlugRef(slug))
	if errors.Is(err, refs.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	v, err := s.objs.GetVersion(id)
	if err != nil {
		return false, err
	}
	var pub Publication
	ok, err := kv.GetRecord(s.db, pubKey(v.Doc), &pub)
	if err != nil || !ok || pub.Version != id || pub.Slug != slug {
		return false, err
	}
	vis, _, err := s.loadVis(pub.Doc)
	return err == nil && vis.Visibility == Password, err
}

// ProtectedAsset returns the publication of the password-protected
// article published under slug when its published version references
// asset id (the site serves such an asset to a reader who showed the
// password, through a URL it signs: see the server's site.go); false
// for anything else.
func (s *Store) ProtectedAsset(ctx context.Context, slug string, id objstore.ID) (Publication, bool, error) {
	if err := ctx.Err(); err != nil || !validSlug(slug) {
		return Publication{}, false, err
	}
	vid, err := s.refs.Get(SlugRef(slug))
	if errors.Is(err, refs.ErrNotFound) {
		return Publication{}, false, nil
	}
	if err != nil {
		return Publication{}, false, err
	}
	v, err := s.objs.GetVersion(vid)
	if err != nil {
		return Publication{}, false, err
	}
	var pub Publication
	ok, err := kv.GetRecord(s.db, pubKey(v.Doc), &pub)
	if err != nil || !ok || pub.Version != vid || pub.Slug != slug || !slices.Contains(pub.Assets, id) {
		return Publication{}, false, err
	}
	vis, _, err := s.loadVis(pub.Doc)
	if err != nil || vis.Visibility != Password {
		return Publication{}, false, err
	}
	return pub, true, nil
}

// maxAssetPubs bounds the documents PublicAsset looks at for one asset.
const maxAssetPubs = 256

// PublicAsset reports whether the public may read asset id: the
// published version of a document whose visibility is public references
// it. A password-protected article's assets are not public (an image
// request carries no password).
func (s *Store) PublicAsset(ctx context.Context, id objstore.ID) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	keys, err := kv.Keys(s.db, kv.TableKey("assetpub", id.String(), ""), maxAssetPubs)
	if err != nil {
		return false, err
	}
	p := len(kv.TableKey("assetpub", id.String(), ""))
	for _, k := range keys {
		doc := string(k[p:])
		vis, _, err := s.loadVis(doc)
		if err != nil {
			return false, err
		}
		if vis.Visibility != Public {
			continue
		}
		var pub Publication
		ok, err := kv.GetRecord(s.db, pubKey(doc), &pub)
		if err != nil {
			return false, err
		}
		if ok && slices.Contains(pub.Assets, id) {
			return true, nil
		}
	}
	return false, nil
}

// Body materializes a publication's version.
func (s *Store) Body(ctx context.Context, pub Publication) (flowdoc.Document, error) {
	snap, err := s.repo.Show(ctx, pub.Doc, pub.Label)
	if err != nil {
		return flowdoc.Document{}, repoErr(err)
	}
	if snap.Info.Hash != pub.Version {
		return flowdoc.Document{}, errs.E(errs.Corrupt, "document %s: label %s is not the published version %s", pub.Doc, pub.Label, pub.Version.Short())
	}
	return snap.Body, nil
}

func validSlug(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ListQuery selects a page of the public list.
type ListQuery struct {
	Category string
	Tag      string
	// Limit is the page size (1..MaxPage; 0: DefaultPage).
	Limit int
	// Cursor continues after the last article of a previous page.
	Cursor string
}

// Page sizes of the public list.
const (
	DefaultPage = 20
	MaxPage     = 100
	// maxScan bounds the index entries one page reads (entries of
	// articles that are not public are skipped).
	maxScan = 5000
)

// Page is one page of the public list, newest first.
type Page struct {
	Articles []Publication `json:"articles"`
	// Next continues the list; "" on the last page.
	Next string `json:"next,omitempty"`
}

// PublicList lists published public articles, newest first (by first
// publication), optionally of one category or tag.
func (s *Store) PublicList(ctx context.Context, q ListQuery) (Page, error) {
	if q.Limit == 0 {
		q.Limit = DefaultPage
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return Page{}, errs.E(errs.Invalid, "limit %d: want 1..%d", q.Limit, MaxPage)
	}
	if q.Category != "" && q.Tag != "" {
		return Page{}, errs.E(errs.Invalid, "filter by category or by tag, not both")
	}
	prefix := kv.TableKey("publ", "")
	switch {
	case q.Category != "":
		prefix = catListPrefix(q.Category)
	case q.Tag != "":
		prefix = tagListPrefix(q.Tag)
	}
	lower := prefix
	if q.Cursor != "" {
		c, err := hex.DecodeString(q.Cursor)
		if err != nil || len(c) < 9 || len(c) > 9+64 || c[8] != 0 {
			return Page{}, errs.E(errs.Invalid, "cursor %q is not one this API returned", q.Cursor)
		}
		lower = append(append([]byte{}, prefix...), c...)
		lower = append(lower, 0) // strictly after it
	}
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: lower, UpperBound: kv.PrefixEnd(prefix)})
	if err != nil {
		return Page{}, err
	}
	defer it.Close()
	page := Page{Articles: []Publication{}}
	scanned := 0
	var last []byte
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return Page{}, err
		}
		if len(page.Articles) == q.Limit || scanned == maxScan {
			page.Next = hex.EncodeToString(last)
			break
		}
		scanned++
		rest := it.Key()[len(prefix):]
		last = append(last[:0], rest...)
		if len(rest) < 10 {
			continue
		}
		doc := string(rest[9:])
		var pub Publication
		ok, err := kv.GetRecord(s.db, pubKey(doc), &pub)
		if err != nil {
			return Page{}, err
		}
		if !ok {
			continue
		}
		vis, _, err := s.loadVis(doc)
		if err != nil {
			return Page{}, err
		}
		if vis.Visibility != Public {
			continue
		}
		pub.Visibility = vis.Visibility
		page.Articles = append(page.Articles, pub)
	}
	return page, it.Error()
}

// PublishedVersion returns the version document doc's published ref names,
// zero when it is not published (for log marks).
func (s *Store) PublishedVersion(doc string) (objstore.ID, error) {
	id, err := s.refs.Get(repo.PublishedRef(doc))
	if errors.Is(err, refs.ErrNotFound) {
		return objstore.ID{}, nil
	}
	return id, err
}
