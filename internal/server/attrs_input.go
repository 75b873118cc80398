package server

import (
	"context"
	"errors"

	"github.com/foliodev/folio/assistant/attrs"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
)

// SuggestAttrs gathers the attributes assistant's input — the draft's
// title and body, the site's category and tag names, and whether the
// document's visibility is private or password — and asks svc (nil:
// attributes_disabled). Every transport (HTTP, WebSocket, the CLI in
// direct mode) calls it, so they answer alike. The draft is read from r.
func SuggestAttrs(ctx context.Context, svc *attrs.Service, r Drafts, pub *publish.Store, user, doc string) (attrs.Suggestion, error) {
	if svc == nil {
		return attrs.Suggestion{}, errDisabled(attrs.CodeDisabled, "attributes assistant")
	}
	d, err := r.Draft(ctx, doc)
	if err != nil {
		return attrs.Suggestion{}, kinded(err)
	}
	vis, _, err := pub.Status(ctx, doc)
	if err != nil {
		return attrs.Suggestion{}, err
	}
	cats, tags, err := pub.Names(ctx)
	if err != nil {
		return attrs.Suggestion{}, err
	}
	return svc.Suggest(ctx, user, attrs.Input{Title: d.Attrs.Title, Body: d.Body, Categories: cats, Tags: tags,
		Private: vis.Visibility != publish.Public})
}

// kinded gives a content-service error its kind.
func kinded(err error) error {
	var k interface{ ErrKind() errs.Kind }
	switch {
	case err == nil || errors.As(err, &k):
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
