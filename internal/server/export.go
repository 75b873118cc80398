package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore/pack"
)

// The read endpoints behind `folio pack export`, `pack heads`, `export
// git`, `usage` and `ai check` in --server mode (docs/api.md).
const (
	ExportPackPath  = "/v1/export/pack"
	ExportHeadsPath = "/v1/export/heads"
	ExportGitPath   = "/v1/export/git"
	UsagePath       = "/v1/admin/usage"
	AICheckPath     = "/v1/admin/ai/check"
)

// Trailers of the streamed exports: what direct mode reports, sent after
// the stream. TrailerComplete is "1" only when the stream ended well; a
// stream that fails half-way is cut off without it.
const (
	TrailerComplete     = "Folio-Complete"
	TrailerObjects      = "Folio-Objects"
	TrailerRawBytes     = "Folio-Raw-Bytes"
	TrailerPackBytes    = "Folio-Pack-Bytes"
	TrailerHeads        = "Folio-Heads"
	TrailerUnknownHaves = "Folio-Unknown-Haves"
	TrailerDocs         = "Folio-Docs"
	TrailerCommits      = "Folio-Commits"
)

// ExportStats is what a pack export reports, in both modes.
type ExportStats struct {
	Objects      uint64
	RawBytes     uint64
	PackBytes    int64
	Heads        int
	UnknownHaves int
}

// ExportStatsFrom summarizes pack.Export's statistics.
func ExportStatsFrom(st pack.ExportStats) ExportStats {
	return ExportStats{Objects: st.Objects, RawBytes: st.RawBytes, PackBytes: st.PackBytes, Heads: len(st.Refs), UnknownHaves: st.UnknownHaves}
}

// ExportStatsOf reads a pack export's trailers.
func ExportStatsOf(h http.Header) ExportStats {
	n := func(k string) int64 { v, _ := strconv.ParseInt(h.Get(k), 10, 64); return v }
	return ExportStats{Objects: uint64(n(TrailerObjects)), RawBytes: uint64(n(TrailerRawBytes)), PackBytes: n(TrailerPackBytes),
		Heads: int(n(TrailerHeads)), UnknownHaves: int(n(TrailerUnknownHaves))}
}

// GitStatsOf reads a git export's trailers.
func GitStatsOf(h http.Header) pack.GitStats {
	docs, _ := strconv.Atoi(h.Get(TrailerDocs))
	commits, _ := strconv.Atoi(h.Get(TrailerCommits))
	return pack.GitStats{Docs: docs, Commits: commits}
}

// AICheckRequest is the body of POST /v1/admin/ai/check.
type AICheckRequest struct {
	Category string `json:"category,omitempty"` // default "writing"
	Prompt   string `json:"prompt"`
}

// AICheckLine is one line of the answer to an AI check: the text as it
// arrives, then the report (with its error when the check failed).
type AICheckLine struct {
	Text   string                 `json:"text,omitempty"`
	Report *assistant.CheckReport `json:"report,omitempty"`
}

// maxCheckPrompt bounds an AI check's prompt.
const maxCheckPrompt = 4096

// tracked records whether anything reached the client, so that an error
// before the first byte is still answered as an error.
type tracked struct {
	http.ResponseWriter
	wrote bool
}

func (t *tracked) Write(p []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(p)
}

// visibleDocs resolves the documents an export covers for p: asked (all
// when empty) among those p may read. Nil means every document (admins);
// an empty list means none. A document p may not read is not found, as a
// missing one.
func (s *Server) visibleDocs(ctx context.Context, p auth.Principal, asked []string) ([]string, error) {
	if p.Admin {
		for _, d := range asked {
			if _, err := s.content.DocOwner(d); err != nil {
				return nil, err
			}
		}
		return asked, nil
	}
	if p.UserID == "" {
		return []string{}, nil // owns nothing (ListDocs("") would list all)
	}
	own, err := s.content.ListDocs(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	mine := make(map[string]bool, len(own))
	docs := []string{}
	for _, d := range own {
		mine[d.ID] = true
		docs = append(docs, d.ID)
	}
	if len(asked) == 0 {
		return docs, nil
	}
	for _, d := range asked {
		if !mine[d] {
			return nil, &repo.NotFoundError{What: "document", Name: d}
		}
	}
	return asked, nil
}

// exportPack answers POST /v1/export/pack: `folio pack export` through
// the daemon. Any token may export the documents it may read.
func (s *Server) exportPack(w http.ResponseWriter, r *http.Request) {
	s.servePack(w, r, "pack export")
}

// servePack streams a pack of the documents the caller may read (those
// named by ?doc=, or all), without what the have-file in the body reaches,
// followed by trailers with its statistics. An error before the first
// byte is answered as an error; one after it cuts the stream off, and
// the importer rejects the pack for its missing trailer.
func (s *Server) servePack(w http.ResponseWriter, r *http.Request, what string) {
	p := principal(r)
	haves, err := pack.ReadHaves(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			s.fail(w, r, tooLarge(mb))
			return
		}
		s.fail(w, r, errs.Wrap(errs.Invalid, err))
		return
	}
	docs, err := s.visibleDocs(r.Context(), p, r.URL.Query()["doc"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-folio-pack")
	w.Header().Set("Trailer", strings.Join([]string{TrailerComplete, TrailerObjects, TrailerRawBytes, TrailerPackBytes, TrailerHeads, TrailerUnknownHaves}, ", "))
	tw := &tracked{ResponseWriter: w}
	bw := bufio.NewWriterSize(tw, 64<<10)
	st := s.content.PackStores()
	var stats pack.ExportStats
	if docs != nil && len(docs) == 0 {
		// Export reads no documents as "all of them": write an empty pack.
		var pw *pack.Writer
		pw, err = pack.NewWriter(bw, pack.Header{Count: 0})
		if err == nil {
			err = pw.Close()
		}
		stats.PackBytes = int64(bw.Buffered())
	} else {
		stats, err = pack.Export(r.Context(), st, bw, pack.ExportOptions{Docs: docs, Haves: haves})
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		if !tw.wrote {
			w.Header().Del("Trailer")
			s.fail(w, r, err)
			return
		}
		s.log.Warn(what+" aborted", "user", p.User, "err", err)
		panic(http.ErrAbortHandler)
	}
	sum := ExportStatsFrom(stats)
	h := w.Header()
	h.Set(TrailerObjects, strconv.FormatUint(sum.Objects, 10))
	h.Set(TrailerRawBytes, strconv.FormatUint(sum.RawBytes, 10))
	h.Set(TrailerPackBytes, strconv.FormatInt(sum.PackBytes, 10))
	h.Set(TrailerHeads, strconv.Itoa(sum.Heads))
	h.Set(TrailerUnknownHaves, strconv.Itoa(sum.UnknownHaves))
	h.Set(TrailerComplete, "1")
	s.m.backupPacks.Inc()
	s.m.backupBytes.Add(float64(stats.PackBytes))
	s.log.Info(what, "user", p.User, "docs", sum.Heads, "objects", sum.Objects,
		"bytes", sum.PackBytes, "haves", len(haves), "unknown_haves", sum.UnknownHaves)
}

// exportHeads answers GET /v1/export/heads: the heads of the documents
// the caller may read, and for admins the backup refs (`folio pack
// heads`).
func (s *Server) exportHeads(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	prefixes := []string{pack.DocPrefix}
	if p.Admin {
		prefixes = append(prefixes, pack.BackupPrefix)
	}
	var mine map[string]bool
	if !p.Admin {
		docs, err := s.visibleDocs(r.Context(), p, nil)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		mine = map[string]bool{}
		for _, d := range docs {
			mine[pack.HeadRef(d)] = true
		}
	}
	out := []pack.Ref{}
	refs := s.content.PackStores().Refs
	for _, prefix := range prefixes {
		vals, names, err := refs.List(prefix)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, n := range names {
			if mine == nil || mine[n] {
				out = append(out, pack.Ref{Name: n, ID: vals[n]})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	writeJSON(w, http.StatusOK, out)
}

// exportGit answers GET /v1/export/git?doc=ID&branch=REF: a git
// fast-import stream of the documents the caller may read (`folio export
// git`), followed by trailers with the numbers of documents and commits.
func (s *Server) exportGit(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := r.URL.Query()
	if _, err := pack.GitBranch(q.Get("branch")); err != nil {
		s.fail(w, r, err)
		return
	}
	docs, err := s.visibleDocs(r.Context(), p, q["doc"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Trailer", strings.Join([]string{TrailerComplete, TrailerDocs, TrailerCommits}, ", "))
	tw := &tracked{ResponseWriter: w}
	bw := bufio.NewWriterSize(tw, 64<<10)
	var st pack.GitStats
	if docs == nil || len(docs) > 0 {
		st, err = pack.ExportGit(r.Context(), s.content.PackStores(),
			bw, pack.GitOptions{Docs: docs, Branch: q.Get("branch")})
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		if !tw.wrote {
			w.Header().Del("Trailer")
			s.fail(w, r, err)
			return
		}
		s.log.Warn("export git aborted", "user", p.User, "err", err)
		panic(http.ErrAbortHandler)
	}
	w.Header().Set(TrailerDocs, strconv.Itoa(st.Docs))
	w.Header().Set(TrailerCommits, strconv.Itoa(st.Commits))
	w.Header().Set(TrailerComplete, "1")
}

// usage answers GET /v1/admin/usage?days=N (`folio usage`).
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Usage == nil {
		s.fail(w, r, errs.E(errs.Disabled, "this daemon keeps no token usage"))
		return
	}
	days := 7
	if v := r.URL.Query().Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > quota.MaxReportDays {
			s.fail(w, r, errs.E(errs.Invalid, "query parameter days=%q: want an integer from 1 to %d", v, quota.MaxReportDays))
			return
		}
		days = n
	}
	rep, err := s.cfg.Usage(days)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, rep)
}

// aiCheck answers POST /v1/admin/ai/check (`folio ai check`): the daemon
// sends one small request through a category's provider with its own
// configuration. The answer is JSON lines: the text as it arrives, then
// the report, whose error says what failed.
func (s *Server) aiCheck(w http.ResponseWriter, r *http.Request) {
	if s.cfg.AICheck == nil {
		s.fail(w, r, errs.E(errs.Disabled, "this daemon runs no AI checks"))
		return
	}
	var req AICheckRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Category == "" {
		req.Category = string(quota.Writing)
	}
	cat, err := quota.ParseCategory(req.Category)
	if err != nil {
		s.fail(w, r, errs.E(errs.Invalid, "%v", err))
		return
	}
	if strings.TrimSpace(req.Prompt) == "" || len(req.Prompt) > maxCheckPrompt || !utf8.ValidString(req.Prompt) {
		s.fail(w, r, errs.E(errs.Invalid, "prompt: want 1 to %d bytes of UTF-8 text", maxCheckPrompt))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	flusher, _ := w.(http.Flusher)
	wrote := false
	rep, err := s.cfg.AICheck(r.Context(), cat, req.Prompt, func(text string) {
		wrote = true
		_ = enc.Encode(AICheckLine{Text: text})
		if flusher != nil {
			flusher.Flush()
		}
	})
	if rep == nil {
		if !wrote {
			s.fail(w, r, err)
			return
		}
		s.log.Warn("ai check failed", "err", err)
		panic(http.ErrAbortHandler)
	}
	_ = enc.Encode(AICheckLine{Report: rep})
}
