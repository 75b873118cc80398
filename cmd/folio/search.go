package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/internal/repo/search"
	"github.com/foliodev/folio/internal/server"
	"github.com/urfave/cli/v2"
)

// searchBackend is full-text search over the caller's documents.
type searchBackend interface {
	// Search returns the caller's documents matching q, best first.
	Search(ctx context.Context, q string, limit int) ([]search.Hit, error)
}

var searchCommand = &cli.Command{
	Name:      "search",
	Usage:     "find your documents by words of their title, body or tags (draft and head)",
	ArgsUsage: "QUERY...",
	Flags: []cli.Flag{
		&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: fmt.Sprintf("show at most this many documents (0: %d; at most %d)", search.DefaultLimit, search.MaxLimit)},
		formatFlag("text", "text", "json"),
	},
	Action: cmdSearch,
}

var cmdSearch = withBackend(-1, []string{"text", "json"}, func(c *cli.Context, _ []string, format string, b backend) error {
	q := strings.Join(c.Args().Slice(), " ")
	if strings.TrimSpace(q) == "" {
		return usagef("search needs the words to look for: folio search QUERY")
	}
	hits, err := b.Search(c.Context, q, c.Int("limit"))
	if err != nil {
		return err
	}
	if format == "json" {
		type hitView struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		}
		out := make([]hitView, len(hits))
		for i, h := range hits {
			out[i] = hitView{h.ID, h.Title}
		}
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\n", termText(h.ID), termText(h.Title))
	}
	return tw.Flush()
})

// searchDir is the search index's directory beside the store.
func searchDir(dataDir string) string { return filepath.Join(dataDir, "search") }

// openSearch opens the search index of r beside the store in dir (built
// there when missing, then brought up to date from the outbox); pub
// tells it which articles visitors may find.
func openSearch(ctx context.Context, r *repo.Repo, pub *publish.Store, dir string, manual bool, log *slog.Logger) (*search.Index, error) {
	x, err := search.Open(ctx, r, search.Options{Dir: searchDir(dir), Public: search.Published(pub, r),
		Manual: manual, Logger: log})
	if err != nil {
		return nil, errs.E(errs.Internal, "open the search index in %s: %v", searchDir(dir), err)
	}
	return x, nil
}

// searchIndex is the direct mode's search index, opened at first use.
func (l *localBackend) searchIndex(ctx context.Context) (*search.Index, error) {
	if l.sx == nil {
		x, err := openSearch(ctx, l.r, publish.New(l.r, nil), l.dir, true, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			return nil, err
		}
		l.sx = x
	}
	return l.sx, nil
}

// Search searches, in the index beside the store, the documents of the
// user FOLIO_USER (or the login name) names.
func (l *localBackend) Search(ctx context.Context, q string, limit int) ([]search.Hit, error) {
	owner, err := userID(ctx, l.r, l.actor)
	if err != nil {
		return nil, err
	}
	if owner == "" {
		return nil, usagef("no user is named %q, so no document is yours to search; set FOLIO_USER or create the user (folio user add)", l.actor)
	}
	x, err := l.searchIndex(ctx)
	if err != nil {
		return nil, err
	}
	return x.Search(ctx, owner, q, limit)
}

func (r *remote) Search(ctx context.Context, q string, limit int) ([]search.Hit, error) {
	v := url.Values{"q": {q}}
	if limit != 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var res server.SearchResponse
	err := r.do(ctx, http.MethodGet, "/v1/search", v, nil, &res)
	return res.Hits, err
}
