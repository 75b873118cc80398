package publish

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// Categories and tags are site-wide records, keyed by their name folded to
// lower case (so "Go" and "go" are one record, spelled as first created).
//
// Categories are curated: an admin creates them, and publishing an
// article whose category does not exist is refused (category_unknown),
// so the site's navigation never grows by a typo. Tags are created on
// use: publishing an article creates the tags it names, as readers of a
// blog expect of tags. Drafts may hold any category and tags; the check is
// made when an article is published.

// Term is a category or a tag.
type Term struct {
	Name        string `msgpack:"name" json:"name"`
	Description string `msgpack:"desc,omitempty" json:"description,omitempty"`
	Created     int64  `msgpack:"created" json:"created"` // Unix ms
	// Articles counts the published articles that use it (on reads).
	Articles int `msgpack:"-" json:"articles"`
}

// MaxTermName bounds a category or tag name, in bytes.
const MaxTermName = 64

func foldName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func catKey(name string) []byte { return kv.TableKey("cat", foldName(name)) }
func tagKey(name string) []byte { return kv.TableKey("tag", foldName(name)) }

func (s *Store) hasName(key []byte) (bool, error) { return kv.Has(s.db, key) }

func checkTermName(what, name string) error {
	n := strings.TrimSpace(name)
	if n == "" || len(n) > MaxTermName || !utf8.ValidString(n) || strings.ContainsAny(n, "\x00\n\r\t") {
		return errs.E(errs.Invalid, "%s name %q must be 1..%d bytes of text on one line", what, name, MaxTermName)
	}
	return nil
}

// termKind describes categories or tags for the shared code below.
type termKind struct {
	what           string
	key            func(string) []byte
	list           func(string) []byte // prefix of its published-article index
	exists, inUse  string
	notFound, verb string
}

var (
	categories = termKind{what: "category", key: catKey, list: catListPrefix,
		exists: CodeCategoryExists, inUse: CodeCategoryInUse, notFound: CodeCategoryNotFound, verb: "category"}
	tags = termKind{what: "tag", key: tagKey, list: tagListPrefix,
		exists: CodeTagExists, inUse: CodeTagInUse, notFound: CodeTagNotFound, verb: "tag"}
)

// AddCategory creates a category; category_exists when one of that name
// (case-insensitively) exists.
func (s *Store) AddCategory(ctx context.Context, name, description string) (Term, error) {
	return s.addTerm(ctx, categories, name, description)
}

// AddTag creates a tag; tag_exists when one exists.
func (s *Store) AddTag(ctx context.Context, name, description string) (Term, error) {
	return s.addTerm(ctx, tags, name, description)
}

// Categories lists the categories in name order, with their article counts.
func (s *Store) Categories(ctx context.Context) ([]Term, error) { return s.listTerms(ctx, categories) }

// Tags lists the tags in name order, with their article counts.
func (s *Store) Tags(ctx context.Context) ([]Term, error) { return s.listTerms(ctx, tags) }

// DescribeCategory sets a category's description; category_not_found when
// none has that name. Names do not change: published versions name their
// category.
func (s *Store) DescribeCategory(ctx context.Context, name, description string) (Term, error) {
	return s.describeTerm(ctx, categories, name, description)
}

// DescribeTag sets a tag's description; tag_not_found when none has that
// name.
func (s *Store) DescribeTag(ctx context.Context, name, description string) (Term, error) {
	return s.describeTerm(ctx, tags, name, description)
}

// DeleteCategory removes a category no published article uses
// (category_in_use otherwise).
func (s *Store) DeleteCategory(ctx context.Context, name string) (Term, error) {
	return s.deleteTerm(ctx, categories, name)
}

// DeleteTag removes a tag no published article uses (tag_in_use otherwise).
func (s *Store) DeleteTag(ctx context.Context, name string) (Term, error) {
	return s.deleteTerm(ctx, tags, name)
}

func (s *Store) addTerm(ctx context.Context, k termKind, name, desc string) (Term, error) {
	if err := ctx.Err(); err != nil {
		return Term{}, err
	}
	if err := checkTermName(k.what, name); err != nil {
		return Term{}, err
	}
	if len(desc) > 1024 || !utf8.ValidString(desc) {
		return Term{}, errs.E(errs.Invalid, "%s description must be valid UTF-8 of at most 1024 bytes", k.what)
	}
	s.termMu.Lock()
	defer s.termMu.Unlock()
	var cur Term
	ok, err := kv.GetRecord(s.db, k.key(name), &cur)
	if err != nil {
		return Term{}, err
	}
	if ok {
		return Term{}, errs.C(errs.Conflict, k.exists, "%s %q exists (as %q)", k.what, name, cur.Name)
	}
	t := Term{Name: strings.TrimSpace(name), Description: desc, Created: s.now()}
	data, err := kv.Marshal(t)
	if err != nil {
		return Term{}, err
	}
	if err := s.db.Set(k.key(name), data, kv.Sync); err != nil {
		return Term{}, err
	}
	return t, nil
}

func (s *Store) describeTerm(ctx context.Context, k termKind, name, desc string) (Term, error) {
	if err := ctx.Err(); err != nil {
		return Term{}, err
	}
	if len(desc) > 1024 || !utf8.ValidString(desc) {
		return Term{}, errs.E(errs.Invalid, "%s description must be valid UTF-8 of at most 1024 bytes", k.what)
	}
	s.termMu.Lock()
	defer s.termMu.Unlock()
	var t Term
	ok, err := kv.GetRecord(s.db, k.key(name), &t)
	if err != nil {
		return Term{}, err
	}
	if !ok {
		return Term{}, errs.C(errs.NotFound, k.notFound, "no %s %q; `folio %s list` shows them", k.what, name, k.verb)
	}
	t.Description = desc
	data, err := kv.Marshal(t)
	if err != nil {
		return Term{}, err
	}
	if err := s.db.Set(k.key(name), data, kv.Sync); err != nil {
		return Term{}, err
	}
	n, err := s.countUses(k, name)
	t.Articles = n
	return t, err
}

func (s *Store) listTerms(ctx context.Context, k termKind) ([]Term, error) {
	p := k.key("")
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := []Term{}
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var t Term
		if err := kv.Unmarshal(it.Value(), &t); err != nil {
			return nil, errs.E(errs.Corrupt, "decode %s %q: %w", k.what, it.Key(), err)
		}
		n, err := s.countUses(k, t.Name)
		if err != nil {
			return nil, err
		}
		t.Articles = n
		out = append(out, t)
	}
	return out, it.Error()
}

func (s *Store) countUses(k termKind, name string) (int, error) {
	p := k.list(name)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n, it.Error()
}

func (s *Store) deleteTerm(ctx context.Context, k termKind, name string) (Term, error) {
	if err := ctx.Err(); err != nil {
		return Term{}, err
	}
	s.termMu.Lock()
	defer s.termMu.Unlock()
	var t Term
	ok, err := kv.GetRecord(s.db, k.key(name), &t)
	if err != nil {
		return Term{}, err
	}
	if !ok {
		return Term{}, errs.C(errs.NotFound, k.notFound, "no %s %q; `folio %s list` shows them", k.what, name, k.verb)
	}
	n, err := s.countUses(k, name)
	if err != nil {
		return Term{}, err
	}
	if n > 0 {
		return Term{}, errs.C(errs.Conflict, k.inUse, "%s %q is used by %d published article(s); change or unpublish them first", k.what, t.Name, n)
	}
	if err := s.db.Delete(k.key(name), kv.Sync); err != nil {
		return Term{}, err
	}
	return t, nil
}

// Names returns the names of the site's categories and tags, for the
// attributes assistant.
func (s *Store) Names(ctx context.Context) (cats, tagNames []string, err error) {
	for _, k := range []termKind{categories, tags} {
		p := k.key("")
		it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
		if err != nil {
			return nil, nil, err
		}
		var names []string
		for it.First(); it.Valid(); it.Next() {
			var t Term
			if err := kv.Unmarshal(it.Value(), &t); err != nil {
				it.Close()
				return nil, nil, errs.E(errs.Corrupt, "decode %s %q: %w", k.what, it.Key(), err)
			}
			names = append(names, t.Name)
		}
		err = it.Error()
		it.Close()
		if err != nil {
			return nil, nil, err
		}
		if k.what == "category" {
			cats = names
		} else {
			tagNames = names
		}
	}
	return cats, tagNames, nil
}
