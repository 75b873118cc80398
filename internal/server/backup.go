package server

import (
	"bufio"
	"net/http"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/objstore/pack"
)

// BackupPackPath serves packs to `folio backup pull`.
const BackupPackPath = "/v1/backup/pack"

// backupPack answers POST /v1/backup/pack: the body is a have-file (one
// version id per line, optionally followed by a ref name); the answer is
// a pack (docs/packs.md) of every document the caller may read, without
// what the haves already reach. Admin tokens and backup tokens may pull;
// an author's backup token gets only that author's documents.
//
// The pack is streamed; when the export fails half-way the connection is
// aborted, and the importer rejects the pack for its missing trailer.
func (s *Server) backupPack(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	if !p.Admin && p.Kind != auth.KindBackup {
		s.writeError(w, Error{Code: CodeForbidden, Message: "pulling backups needs an admin or a backup token (folio token add USER --kind backup)"})
		return
	}
	haves, err := pack.ReadHaves(r.Body)
	if err != nil {
		s.fail(w, r, invalidf("%v", err))
		return
	}
	var docs []string
	if !p.Admin && p.UserID != "" {
		ds, err := s.repo.ListDocs(r.Context(), p.UserID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, d := range ds {
			docs = append(docs, d.ID)
		}
	}
	w.Header().Set("Content-Type", "application/x-folio-pack")
	bw := bufio.NewWriterSize(w, 64<<10)
	st := pack.Stores{DB: s.repo.DB(), Objects: s.repo.Objects(), Refs: s.repo.Refs()}
	if !p.Admin && len(docs) == 0 {
		// Export reads no documents as "all of them": write an empty pack.
		pw, err := pack.NewWriter(bw, pack.Header{Count: 0})
		if err == nil {
			err = pw.Close()
		}
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			s.log.Warn("backup pack aborted", "user", p.User, "err", err)
			panic(http.ErrAbortHandler)
		}
		s.m.backupPacks.Inc()
		return
	}
	stats, err := pack.Export(r.Context(), st, bw, pack.ExportOptions{Docs: docs, Haves: haves})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		s.log.Warn("backup pack aborted", "user", p.User, "err", err)
		panic(http.ErrAbortHandler)
	}
	s.m.backupPacks.Inc()
	s.m.backupBytes.Add(float64(stats.PackBytes))
	s.log.Info("backup pack", "user", p.User, "docs", len(stats.Refs), "objects", stats.Objects,
		"bytes", stats.PackBytes, "haves", len(haves), "unknown_haves", stats.UnknownHaves)
}
