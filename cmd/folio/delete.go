package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/urfave/cli/v2"
)

// deleteBackend deletes documents softly and brings them back, in direct
// mode and through a daemon alike.
type deleteBackend interface {
	DeleteDoc(ctx context.Context, doc string) (server.DeletedResponse, error)
	UndeleteDoc(ctx context.Context, doc string) (server.DeletedResponse, error)
	ListDeleted(ctx context.Context) ([]repo.DeletedDoc, error)
}

var (
	_ deleteBackend = (*localBackend)(nil)
	_ deleteBackend = (*remote)(nil)
)

// deleteCommands are added to `folio doc`.
func deleteCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "rm",
			Aliases:   []string{"delete"},
			Usage:     "delete a document: hidden from lists, reads and the public site, its history kept until gc purges it",
			ArgsUsage: "ID",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    withBackend(1, []string{"text", "json"}, cmdDocRm),
		},
		{
			Name:      "undelete",
			Usage:     "bring back a deleted document as it was (admins; before gc purges it)",
			ArgsUsage: "ID",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    withBackend(1, []string{"text", "json"}, cmdDocUndelete),
		},
	}
}

func cmdDocRm(c *cli.Context, a []string, format string, b backend) error {
	res, err := b.DeleteDoc(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, res)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "deleted %s (%s, %s)\n", termText(res.ID), termText(res.Title), plural(int(res.Versions), "version"))
	if p := res.Unpublished; p != nil {
		fmt.Fprintf(w, "its publication %q is withdrawn; an undelete does not publish it again\n", termText(p.Slug))
	}
	fmt.Fprintf(w, "an admin brings it back with `folio doc undelete %s` until `folio gc` purges it (deleted longer ago than --prune, 14 days by default)\n",
		termText(res.ID))
	return nil
}

func cmdDocUndelete(c *cli.Context, a []string, format string, b backend) error {
	res, err := b.UndeleteDoc(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, res)
	}
	fmt.Fprintf(c.App.Writer, "restored %s (%s) at %s, deleted %s by %s\n", termText(res.ID), termText(res.Title), termText(res.Head),
		res.Deleted.Format(timeFormat), termText(res.DeletedBy))
	return nil
}

// printDeleted is `doc list --deleted`.
func printDeleted(c *cli.Context, format string, ds []repo.DeletedDoc) error {
	if format == "json" {
		if ds == nil {
			ds = []repo.DeletedDoc{}
		}
		return printJSON(c.App.Writer, ds)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tHEAD\tVERSIONS\tDELETED\tBY\tOWNER\tTITLE")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", termText(d.ID), termText(d.Head), d.Versions, d.Deleted.Format(timeFormat),
			termText(d.DeletedBy), termText(orDash(d.OwnerName)), termText(d.Title))
	}
	return tw.Flush()
}

func (l *localBackend) DeleteDoc(ctx context.Context, doc string) (server.DeletedResponse, error) {
	return server.DeleteDoc(ctx, l.r, l.pub(), doc, l.actor)
}

func (l *localBackend) UndeleteDoc(ctx context.Context, doc string) (server.DeletedResponse, error) {
	d, err := l.r.UndeleteDoc(ctx, doc, l.actor)
	if err != nil {
		return server.DeletedResponse{}, err
	}
	names, err := l.auth.Names(ctx)
	d.OwnerName = names[d.Owner]
	return server.DeletedResponse{DeletedDoc: d}, err
}

func (l *localBackend) ListDeleted(ctx context.Context) ([]repo.DeletedDoc, error) {
	ds, err := l.r.ListDeleted(ctx, "")
	if err != nil || len(ds) == 0 {
		return ds, err
	}
	names, err := l.auth.Names(ctx)
	for i := range ds {
		ds[i].OwnerName = names[ds[i].Owner]
	}
	return ds, err
}

func (r *remote) DeleteDoc(ctx context.Context, doc string) (server.DeletedResponse, error) {
	var res server.DeletedResponse
	err := r.do(ctx, http.MethodDelete, docPath(doc), nil, nil, &res)
	return res, err
}

func (r *remote) UndeleteDoc(ctx context.Context, doc string) (server.DeletedResponse, error) {
	var res server.DeletedResponse
	err := r.do(ctx, http.MethodPost, "/v1/admin/deleted/"+url.PathEscape(doc)+"/restore", nil, nil, &res)
	return res, err
}

func (r *remote) ListDeleted(ctx context.Context) ([]repo.DeletedDoc, error) {
	var ds []repo.DeletedDoc
	err := r.do(ctx, http.MethodGet, "/v1/admin/deleted", nil, nil, &ds)
	if len(ds) == 0 {
		ds = nil
	}
	return ds, err
}
