package content

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/reference"
	"github.com/foliodev/folio/persona/source"
)

// MaxCandidates bounds the articles one reference ranking reads: the
// author's most recently published ones.
const MaxCandidates = 200

// Sources reads documents and publications of one repository for
// personas. It is safe for concurrent use.
type Sources struct {
	repo *repo.Repo
	pub  *publish.Store
}

var _ persona.Sources = (*Sources)(nil)

// New returns the Sources of r, reading publications through pub (nil:
// a publish.Store of r).
func New(r *repo.Repo, pub *publish.Store) *Sources {
	if pub == nil {
		pub = publish.New(r, nil)
	}
	return &Sources{repo: r, pub: pub}
}

// notFound is the answer for a document that does not exist or is not
// user's: the same words either way.
func notFound(doc string) error {
	return errs.E(errs.NotFound, "document %q not found", doc)
}

// owned checks that doc exists and belongs to user (a user id).
func (s *Sources) owned(user, doc string) error {
	owner, err := s.repo.DocOwner(doc)
	var nf *repo.NotFoundError
	if errors.As(err, &nf) || errs.KindOf(err) == errs.NotFound {
		return notFound(doc)
	}
	if err != nil {
		return err
	}
	if owner == "" || owner != user {
		return notFound(doc)
	}
	return nil
}

// Current returns doc's published version and visibility as they are
// now. A document that is not published is answered with Published
// false; one that does not exist or is not user's is not_found.
func (s *Sources) Current(ctx context.Context, user, doc string) (persona.SourceState, error) {
	if err := s.owned(user, doc); err != nil {
		return persona.SourceState{}, err
	}
	vis, pub, err := s.pub.Status(ctx, doc)
	if err != nil {
		return persona.SourceState{}, err
	}
	st := persona.SourceState{Visibility: vis.Visibility}
	if pub == nil {
		return st, nil
	}
	pin, err := s.pin(ctx, doc, pub.Label, source.VersionID(pub.Version))
	if err != nil {
		return persona.SourceState{}, err
	}
	st.Pin, st.Published = pin, true
	return st, nil
}

// pin reads version label of doc and checks it is version want.
func (s *Sources) pin(ctx context.Context, doc, label string, want source.VersionID) (source.Pin, error) {
	snap, err := s.repo.Show(ctx, doc, label)
	if err != nil {
		return source.Pin{}, err
	}
	if source.VersionID(snap.Info.Hash) != want {
		return source.Pin{}, errs.E(errs.Corrupt, "document %s: version %s is %s, not the published %s",
			doc, label, snap.Info.Hash.Short(), want.Short())
	}
	return source.Pin{Doc: doc, Version: want, Label: snap.Info.Label, Fingerprint: snap.Info.Fingerprint, Time: snap.Info.Time}, nil
}

// Load returns the text of a pinned version; a version that is not what
// the pin names (another object, another body) is corrupt.
func (s *Sources) Load(ctx context.Context, pin source.Pin) (source.Document, error) {
	snap, err := s.repo.Show(ctx, pin.Doc, pin.Label)
	if err != nil {
		return source.Document{}, err
	}
	if source.VersionID(snap.Info.Hash) != pin.Version || snap.Info.Fingerprint != pin.Fingerprint {
		return source.Document{}, errs.E(errs.Corrupt, "document %s: version %s is not the pinned %s", pin.Doc, pin.Label, pin.Version.Short())
	}
	return source.FromFlow(pin, snap.Attrs, snap.Body), nil
}

// Candidates returns the reference candidates of a persona run of user on
// document exclude: user's other published articles, the most recently
// published first, at most MaxCandidates; private and password ones only
// when allowPrivate ([privacy] send_private_to_provider).
func (s *Sources) Candidates(ctx context.Context, user, exclude string, allowPrivate bool) ([]reference.Candidate, error) {
	docs, err := s.repo.ListDocs(ctx, user)
	if err != nil {
		return nil, err
	}
	var pubs []publish.Publication
	for _, d := range docs {
		if d.ID == exclude || d.Owner != user {
			continue
		}
		vis, pub, err := s.pub.Status(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		if pub == nil || (vis.Visibility != publish.Public && !allowPrivate) {
			continue
		}
		pubs = append(pubs, *pub)
	}
	sort.Slice(pubs, func(i, j int) bool {
		if pubs[i].Updated != pubs[j].Updated {
			return pubs[i].Updated > pubs[j].Updated
		}
		return pubs[i].Doc < pubs[j].Doc
	})
	if len(pubs) > MaxCandidates {
		pubs = pubs[:MaxCandidates]
	}
	out := make([]reference.Candidate, 0, len(pubs))
	for _, p := range pubs {
		pin, err := s.pin(ctx, p.Doc, p.Label, source.VersionID(p.Version))
		if err != nil {
			return nil, err
		}
		d, err := s.Load(ctx, pin)
		if err != nil {
			return nil, err
		}
		out = append(out, reference.Candidate{Doc: p.Doc, Pin: pin, Title: p.Title, Summary: p.Summary,
			Category: p.Category, Tags: p.Tags, Text: plain(d, reference.MaxTextRunes)})
	}
	return out, nil
}

// plain is a document's text, blocks joined by newlines, cut after max
// code points.
func plain(d source.Document, max int) string {
	var b strings.Builder
	n := 0
	for _, bl := range d.Blocks {
		for _, r := range bl.Text {
			if n == max {
				return b.String()
			}
			b.WriteRune(r)
			n++
		}
		b.WriteByte('\n')
	}
	return b.String()
}
