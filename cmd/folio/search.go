package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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

// Search builds the index from the data directory (it is a projection:
// direct mode keeps none between runs) and searches the documents of the
// user FOLIO_USER (or the login name) names.
func (l *localBackend) Search(ctx context.Context, q string, limit int) ([]search.Hit, error) {
	owner, err := userID(ctx, l.r, l.actor)
	if err != nil {
		return nil, err
	}
	if owner == "" {
		return nil, usagef("no user is named %q, so no document is yours to search; set FOLIO_USER or create the user (folio user add)", l.actor)
	}
	x, err := search.Build(ctx, l.r)
	if err != nil {
		return nil, err
	}
	defer x.Close()
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
