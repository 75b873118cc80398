package search

import (
	"context"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo/publish"
)

// Published is the Public of the publishing store p over the documents
// of src: a document visitors may find is published, public and not
// deleted, and they find its published version.
func Published(p *publish.Store, src Source) Public { return published{p, src} }

type published struct {
	p   *publish.Store
	src Source
}

func (s published) PublicDoc(ctx context.Context, doc string) (PublicDoc, bool, error) {
	if _, err := s.src.GetDoc(ctx, doc); err != nil {
		return PublicDoc{}, false, err // a deleted document is missing
	}
	vis, pub, err := s.p.Status(ctx, doc)
	if err != nil || pub == nil || vis.Visibility != publish.Public {
		return PublicDoc{}, false, err
	}
	body, err := s.p.Body(ctx, *pub)
	if err != nil {
		return PublicDoc{}, false, err
	}
	return PublicDoc{Slug: pub.Slug, Attrs: flowdoc.Attributes{Title: pub.Title, Tags: pub.Tags}, Body: body}, true, nil
}
