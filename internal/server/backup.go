package server

import (
	"net/http"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
)

// BackupPackPath serves packs to `folio backup pull`.
const BackupPackPath = "/v1/backup/pack"

// backupPack answers POST /v1/backup/pack: the body is a have-file (one
// version id per line, optionally followed by a ref name); the answer is
// a pack (docs/packs.md) of every document the caller may read, without
// what the haves already reach, with the trailers of servePack. Admin
// tokens and backup tokens may pull; an author's backup token gets only
// that author's documents, and a pack without heads tells the puller it
// saw none.
func (s *Server) backupPack(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	if !p.Admin && p.Kind != auth.KindBackup {
		s.fail(w, r, errs.E(errs.Forbidden, "pulling backups needs an admin's token or a backup token (an admin issues one with `folio token add admin --kind backup`)"))
		return
	}
	s.servePack(w, r, "backup pack")
}
