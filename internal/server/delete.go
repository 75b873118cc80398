package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
)

// DeletedResponse answers DELETE /v1/docs/{id} and the undelete: the
// document, when and by whom it was deleted, and for a delete whether
// it was published (its publication is withdrawn; an undelete does not
// bring it back: publish again).
type DeletedResponse struct {
	repo.DeletedDoc
	Unpublished *publish.Publication `json:"unpublished,omitempty"`
}

func (s *Server) deleteRoutes(mux *routeMux) {
	mux.HandleFunc("DELETE /v1/docs/{id}", s.authed(anyUser, s.doc(s.deleteDoc)))
	mux.HandleFunc("GET /v1/admin/deleted", s.authed(adminOnly, s.listDeleted))
	mux.HandleFunc("POST /v1/admin/deleted/{id}/restore", s.authed(adminOnly, s.undeleteDoc))
}

// DeleteDoc is the one implementation of a document's deletion behind
// DELETE /v1/docs/{id} and the CLI's direct mode: a published document is
// unpublished first (the public site then no longer has it, whatever
// happens next), then hidden (repo.Repo.DeleteDoc).
func DeleteDoc(ctx context.Context, rp Documents, pub *publish.Store, doc, actor string) (DeletedResponse, error) {
	if _, err := rp.DocOwner(doc); err != nil {
		return DeletedResponse{}, err
	}
	var res DeletedResponse
	p, err := pub.Unpublish(ctx, doc, actor)
	switch {
	case err == nil:
		res.Unpublished = &p
	case errs.CodeOf(err) == publish.CodeNotPublished || errors.Is(err, errs.NotFound):
	default:
		return DeletedResponse{}, err
	}
	d, err := rp.DeleteDoc(ctx, doc, actor)
	if err != nil {
		return DeletedResponse{}, err
	}
	res.DeletedDoc = d
	return res, nil
}

func (s *Server) deleteDoc(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	res, err := DeleteDoc(r.Context(), s.content, s.pub, doc, p.User)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("document deleted; an admin can restore it until gc purges it", "doc", doc, "by", p.User,
		"unpublished", res.Unpublished != nil)
	if rc, ok := s.sync.(rechecker); ok {
		rc.Recheck(doc) // its editors lose it at once
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) listDeleted(w http.ResponseWriter, r *http.Request) {
	ds, err := s.content.ListDeleted(r.Context(), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ds == nil {
		ds = []repo.DeletedDoc{}
	}
	infos := make([]repo.DocInfo, len(ds))
	for i := range ds {
		infos[i] = ds[i].DocInfo
	}
	if err := s.ownerNames(r.Context(), infos); err != nil {
		s.fail(w, r, err)
		return
	}
	for i := range ds {
		ds[i].DocInfo = infos[i]
	}
	writeJSON(w, http.StatusOK, ds)
}

func (s *Server) undeleteDoc(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	d, err := s.content.UndeleteDoc(r.Context(), r.PathValue("id"), p.User)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("deleted document restored", "doc", d.ID, "by", p.User)
	writeJSON(w, http.StatusOK, DeletedResponse{DeletedDoc: d})
}
