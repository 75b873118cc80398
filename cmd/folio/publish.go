package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/assistant/attrs"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/internal/server"
	"github.com/urfave/cli/v2"
)

// pubBackend is what the publishing verbs need, in direct mode (the data
// directory) and through a daemon (--server) alike, so that both print
// the same.
type pubBackend interface {
	Publish(ctx context.Context, doc string, req server.PublishRequest) (publish.Result, error)
	Unpublish(ctx context.Context, doc string) (publish.Publication, error)
	SetVisibility(ctx context.Context, doc string, req server.VisibilityRequest) (publish.Visibility, error)
	Terms(ctx context.Context, kind string) ([]publish.Term, error)
	AddTerm(ctx context.Context, kind string, req server.TermRequest) (publish.Term, error)
	DeleteTerm(ctx context.Context, kind, name string) (publish.Term, error)
	DescribeTerm(ctx context.Context, kind, name, description string) (publish.Term, error)
	SuggestAttrs(ctx context.Context, doc string) (attrs.Suggestion, error)
}

var (
	_ pubBackend = (*localBackend)(nil)
	_ pubBackend = (*remote)(nil)
)

func init() { extraCommands = append(extraCommands, publishCommands()...) }

func publishCommands() []*cli.Command {
	termCmds := func(kind, what string) *cli.Command {
		return &cli.Command{
			Name:  kind,
			Usage: "the site's " + what + " (admins add and remove them)",
			Subcommands: []*cli.Command{
				{Name: "list", Usage: "list the " + what + " with their published articles", ArgsUsage: " ",
					Flags: []cli.Flag{formatFlag("text", "text", "json")}, Action: withPub(0, []string{"text", "json"}, termList(kind))},
				{Name: "add", Usage: "add one", ArgsUsage: "NAME",
					Flags:  []cli.Flag{&cli.StringFlag{Name: "description", Usage: "a description"}, formatFlag("text", "text", "json")},
					Action: withPub(1, []string{"text", "json"}, termAdd(kind))},
				{Name: "describe", Usage: "set the description of one", ArgsUsage: "NAME DESCRIPTION",
					Flags: []cli.Flag{formatFlag("text", "text", "json")}, Action: withPub(2, []string{"text", "json"}, termDescribe(kind))},
				{Name: "rm", Usage: "remove one no published article uses", ArgsUsage: "NAME",
					Flags: []cli.Flag{formatFlag("text", "text", "json")}, Action: withPub(1, []string{"text", "json"}, termRm(kind))},
			},
		}
	}
	visFlags := []cli.Flag{
		&cli.StringFlag{Name: "visibility", Usage: "`VISIBILITY`: public, private or password (default: keep; public for a first publish)"},
		&cli.BoolFlag{Name: "password-stdin", Usage: "read the password of visibility password from standard input (never from the command line)"},
	}
	return []*cli.Command{
		{
			Name:      "publish",
			Usage:     "publish a document: seal its draft as a publish checkpoint if unsealed and move its published ref there",
			ArgsUsage: "DOC",
			Flags: append(append([]cli.Flag{}, visFlags...),
				&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "message of the publish checkpoint"},
				formatFlag("text", "text", "json")),
			Action: withPub(1, []string{"text", "json"}, cmdPublish),
		},
		{
			Name:      "unpublish",
			Usage:     "remove a document's published ref: the public no longer sees it",
			ArgsUsage: "DOC",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    withPub(1, []string{"text", "json"}, cmdUnpublish),
		},
		{
			Name:      "visibility",
			Usage:     "set a document's visibility at once, without publishing its draft",
			ArgsUsage: "DOC public|private|password",
			Flags:     []cli.Flag{visFlags[1], formatFlag("text", "text", "json")},
			Action:    withPub(2, []string{"text", "json"}, cmdVisibility),
		},
		termCmds("category", "categories"),
		termCmds("tag", "tags"),
		{
			Name:  "attrs",
			Usage: "article attributes: title, summary, slug, category, tags",
			Subcommands: []*cli.Command{
				{
					Name:      "suggest",
					Usage:     "suggest a summary, slug, category and tags for a document's draft (the attributes assistant)",
					ArgsUsage: "DOC",
					Flags: []cli.Flag{&cli.BoolFlag{Name: "apply", Usage: "save the suggestion into the draft's attributes (a draft save)"},
						formatFlag("text", "text", "json")},
					Action: withPub(1, []string{"text", "json"}, cmdAttrsSuggest),
				},
				{
					Name:      "set",
					Usage:     "save attributes into a document's draft",
					ArgsUsage: "DOC",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "title"}, &cli.StringFlag{Name: "summary"}, &cli.StringFlag{Name: "slug"},
						&cli.StringFlag{Name: "category"},
						&cli.StringFlag{Name: "tags", Usage: "comma-separated `TAGS` (\"\" clears them)"},
						formatFlag("text", "text", "json"),
					},
					Action: withBackend(1, []string{"text", "json"}, cmdAttrsSet),
				},
			},
		},
	}
}

// withPub is withBackend for the publishing verbs.
func withPub(n int, formats []string, fn func(c *cli.Context, a []string, format string, b pubBackend, base backend) error) cli.ActionFunc {
	return withBackend(n, formats, func(c *cli.Context, a []string, format string, b backend) error {
		pb, ok := b.(pubBackend)
		if !ok {
			return usagef("folio %s is not supported by this backend", c.Command.FullName())
		}
		return fn(c, a, format, pb, b)
	})
}

// readPassword reads a password from standard input: one line, at most
// publish.MaxPassword bytes.
func readPassword(c *cli.Context) (string, error) {
	if !c.Bool("password-stdin") {
		return "", nil
	}
	in := c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	line, err := bufio.NewReaderSize(io.LimitReader(in, publish.MaxPassword+2), publish.MaxPassword+2).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", errs.E(errs.Internal, "read the password from standard input: %v", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", usagef("--password-stdin: standard input held no password")
	}
	if len(pw) > publish.MaxPassword {
		return "", usagef("--password-stdin: the password is longer than %d bytes", publish.MaxPassword)
	}
	return pw, nil
}

func cmdPublish(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	pw, err := readPassword(c)
	if err != nil {
		return err
	}
	res, err := b.Publish(c.Context, a[0], server.PublishRequest{Visibility: c.String("visibility"), Password: pw, Message: c.String("message")})
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, res)
	}
	w := c.App.Writer
	if res.Sealed != nil {
		fmt.Fprintf(w, "sealed %s@%s (publish checkpoint)\n", a[0], res.Sealed.Label)
	}
	p := res.Publication
	switch {
	case !res.Moved:
		fmt.Fprintf(w, "%s@%s is already published as %q (%s); nothing moved\n", p.Doc, p.Label, p.Slug, p.Visibility)
	case res.Previous != "":
		fmt.Fprintf(w, "republished %s: %s -> %s as %q (%s)\n", p.Doc, res.Previous, p.Label, p.Slug, p.Visibility)
	default:
		fmt.Fprintf(w, "published %s@%s as %q (%s)\n", p.Doc, p.Label, p.Slug, p.Visibility)
	}
	return nil
}

func cmdUnpublish(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	p, err := b.Unpublish(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, p)
	}
	fmt.Fprintf(c.App.Writer, "unpublished %s (was %s as %q)\n", p.Doc, p.Label, p.Slug)
	return nil
}

func cmdVisibility(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	pw, err := readPassword(c)
	if err != nil {
		return err
	}
	v, err := b.SetVisibility(c.Context, a[0], server.VisibilityRequest{Visibility: a[1], Password: pw})
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, v)
	}
	state := "not published"
	if v.Published != "" {
		state = "published " + v.Published
	}
	fmt.Fprintf(c.App.Writer, "%s is %s (%s)\n", v.Doc, v.Visibility, state)
	return nil
}

func termList(kind string) func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	return func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
		ts, err := b.Terms(c.Context, kind)
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(c.App.Writer, ts)
		}
		tw := newTable(c.App.Writer)
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%d article(s)\t%s\n", t.Name, t.Articles, t.Description)
		}
		return tw.Flush()
	}
}

func termAdd(kind string) func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	return func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
		t, err := b.AddTerm(c.Context, kind, server.TermRequest{Name: a[0], Description: c.String("description")})
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(c.App.Writer, t)
		}
		fmt.Fprintf(c.App.Writer, "added %s %q\n", kind, t.Name)
		return nil
	}
}

func termDescribe(kind string) func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	return func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
		t, err := b.DescribeTerm(c.Context, kind, a[0], a[1])
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(c.App.Writer, t)
		}
		fmt.Fprintf(c.App.Writer, "described %s %q\n", kind, t.Name)
		return nil
	}
}

func termRm(kind string) func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
	return func(c *cli.Context, a []string, format string, b pubBackend, _ backend) error {
		t, err := b.DeleteTerm(c.Context, kind, a[0])
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(c.App.Writer, t)
		}
		fmt.Fprintf(c.App.Writer, "removed %s %q\n", kind, t.Name)
		return nil
	}
}

func cmdAttrsSuggest(c *cli.Context, a []string, format string, b pubBackend, base backend) error {
	sug, err := b.SuggestAttrs(c.Context, a[0])
	if err != nil {
		return err
	}
	if c.Bool("apply") {
		d, err := base.Draft(c.Context, a[0])
		if err != nil {
			return err
		}
		at := d.Attrs
		at.Summary, at.Slug, at.Category, at.Tags = sug.Summary, sug.Slug, sug.Category, sug.Tags
		if sug.Title != "" {
			at.Title = sug.Title
		}
		if _, err := base.SaveDraft(c.Context, repo.SaveParams{Doc: a[0], BaseSeq: d.Seq, Attrs: &at}); err != nil {
			return err
		}
	}
	if format == "json" {
		return printJSON(c.App.Writer, sug)
	}
	w := c.App.Writer
	if sug.Title != "" {
		fmt.Fprintf(w, "title:     %s\n", sug.Title)
	}
	fmt.Fprintf(w, "summary:   %s\nslug:      %s\ncategory:  %s\ntags:      %s\n", sug.Summary, sug.Slug, sug.Category, strings.Join(sug.Tags, ", "))
	fmt.Fprintf(w, "(%s %s, settings %s, %d tokens)\n", sug.Provider, sug.Model, sug.Source, sug.Usage.Total)
	if c.Bool("apply") {
		fmt.Fprintln(w, "saved into the draft's attributes")
	}
	return nil
}

func cmdAttrsSet(c *cli.Context, a []string, format string, b backend) error {
	d, err := b.Draft(c.Context, a[0])
	if err != nil {
		return err
	}
	at := d.Attrs
	set := false
	for _, f := range []struct {
		name string
		dst  *string
	}{{"title", &at.Title}, {"summary", &at.Summary}, {"slug", &at.Slug}, {"category", &at.Category}} {
		if c.IsSet(f.name) {
			*f.dst, set = c.String(f.name), true
		}
	}
	if c.IsSet("tags") {
		at.Tags, set = nil, true
		for _, t := range strings.Split(c.String("tags"), ",") {
			if t = strings.TrimSpace(t); t != "" {
				at.Tags = append(at.Tags, t)
			}
		}
	}
	if !set {
		return usagef("folio attrs set: give at least one of --title, --summary, --slug, --category, --tags")
	}
	res, err := b.SaveDraft(c.Context, repo.SaveParams{Doc: a[0], BaseSeq: d.Seq, Attrs: &at})
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]any{"doc": a[0], "seq": res.Seq, "unsealed": res.Unsealed, "attrs": at})
	}
	fmt.Fprintf(c.App.Writer, "saved the attributes of %s (draft seq %d)\n", a[0], res.Seq)
	return nil
}

// --- direct mode ---------------------------------------------------------

func (l *localBackend) pub() *publish.Store { return publish.New(l.r, nil) }

// maySee in direct mode: whoever opens the data directory sees it all.
func allVisible(string) bool { return true }

func (l *localBackend) Publish(ctx context.Context, doc string, req server.PublishRequest) (publish.Result, error) {
	return l.pub().Publish(ctx, publish.Params{Doc: doc, Actor: l.actor, Message: req.Message, Visibility: req.Visibility,
		Password: req.Password, MaySee: allVisible})
}

func (l *localBackend) Unpublish(ctx context.Context, doc string) (publish.Publication, error) {
	return l.pub().Unpublish(ctx, doc, l.actor)
}

func (l *localBackend) SetVisibility(ctx context.Context, doc string, req server.VisibilityRequest) (publish.Visibility, error) {
	return l.pub().SetVisibility(ctx, doc, l.actor, req.Visibility, req.Password)
}

func (l *localBackend) Terms(ctx context.Context, kind string) ([]publish.Term, error) {
	if kind == "category" {
		return l.pub().Categories(ctx)
	}
	return l.pub().Tags(ctx)
}

func (l *localBackend) AddTerm(ctx context.Context, kind string, req server.TermRequest) (publish.Term, error) {
	if kind == "category" {
		return l.pub().AddCategory(ctx, req.Name, req.Description)
	}
	return l.pub().AddTag(ctx, req.Name, req.Description)
}

func (l *localBackend) DeleteTerm(ctx context.Context, kind, name string) (publish.Term, error) {
	if kind == "category" {
		return l.pub().DeleteCategory(ctx, name)
	}
	return l.pub().DeleteTag(ctx, name)
}

func (l *localBackend) DescribeTerm(ctx context.Context, kind, name, desc string) (publish.Term, error) {
	if kind == "category" {
		return l.pub().DescribeCategory(ctx, name, desc)
	}
	return l.pub().DescribeTag(ctx, name, desc)
}

// SuggestAttrs runs the attributes assistant in this process with the
// configuration of --config: its own settings, policy and counters in the
// data directory, as the daemon would.
func (l *localBackend) SuggestAttrs(ctx context.Context, doc string) (attrs.Suggestion, error) {
	fc, err := config.Load(l.configPath, nil)
	if err != nil {
		return attrs.Suggestion{}, errs.Wrap(errs.Invalid, err)
	}
	svc, err := attrsService(fc, l.r)
	if err != nil {
		return attrs.Suggestion{}, err
	}
	return server.SuggestAttrs(ctx, svc, l.r, l.pub(), l.actor, doc)
}

// attrsService builds the attributes assistant from fc over r's store.
func attrsService(fc *config.Config, r *repo.Repo) (*attrs.Service, error) {
	ledger := quota.NewLedger(r.DB(), quota.LedgerOptions{})
	rc, err := fc.AICategory(string(quota.Attributes))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err)
	}
	p, err := assistant.NewProvider(rc)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err)
	}
	return attrs.New(attrs.Options{
		Route: assistant.Route{Provider: p, Policy: quota.NewPolicy(r.DB(), quota.Attributes, quota.LimitsFrom(rc.AISettings), nil),
			Source: string(rc.Source), MaxOutputTokens: rc.MaxOutputTokens, Settings: rc},
		Ledger: ledger, Enabled: fc.Attributes.Enabled, SendPrivate: fc.Privacy.SendPrivateToProvider,
	})
}

// --- daemon mode ---------------------------------------------------------

func (r *remote) Publish(ctx context.Context, doc string, req server.PublishRequest) (publish.Result, error) {
	var res publish.Result
	err := r.do(ctx, http.MethodPost, docPath(doc, "publish"), nil, req, &res)
	return res, err
}

func (r *remote) Unpublish(ctx context.Context, doc string) (publish.Publication, error) {
	var p publish.Publication
	err := r.do(ctx, http.MethodPost, docPath(doc, "unpublish"), nil, struct{}{}, &p)
	return p, err
}

func (r *remote) SetVisibility(ctx context.Context, doc string, req server.VisibilityRequest) (publish.Visibility, error) {
	var v publish.Visibility
	err := r.do(ctx, http.MethodPut, docPath(doc, "visibility"), nil, req, &v)
	return v, err
}

func termPath(kind string) string {
	if kind == "category" {
		return "/v1/categories"
	}
	return "/v1/tags"
}

// Terms reads every page of the listing (docs/api.md, "Categories and
// tags"): a page continues after the last name of the previous one, and
// an empty page ends it.
func (r *remote) Terms(ctx context.Context, kind string) ([]publish.Term, error) {
	var all []publish.Term
	after := ""
	for {
		var ts []publish.Term
		path := termPath(kind) + "?" + url.Values{"limit": {strconv.Itoa(publish.MaxTermPage)}, "after": {after}}.Encode()
		if err := r.do(ctx, http.MethodGet, path, nil, nil, &ts); err != nil {
			return nil, err
		}
		if len(ts) == 0 {
			return all, nil
		}
		all = append(all, ts...)
		after = ts[len(ts)-1].Name
	}
}

func (r *remote) AddTerm(ctx context.Context, kind string, req server.TermRequest) (publish.Term, error) {
	var t publish.Term
	err := r.do(ctx, http.MethodPost, termPath(kind), nil, req, &t)
	return t, err
}

func (r *remote) DeleteTerm(ctx context.Context, kind, name string) (publish.Term, error) {
	var t publish.Term
	err := r.do(ctx, http.MethodDelete, termPath(kind)+"/"+url.PathEscape(name), nil, nil, &t)
	return t, err
}

func (r *remote) DescribeTerm(ctx context.Context, kind, name, desc string) (publish.Term, error) {
	var t publish.Term
	err := r.do(ctx, http.MethodPut, termPath(kind)+"/"+url.PathEscape(name), nil, server.DescribeRequest{Description: desc}, &t)
	return t, err
}

func (r *remote) SuggestAttrs(ctx context.Context, doc string) (attrs.Suggestion, error) {
	var s attrs.Suggestion
	err := r.do(ctx, http.MethodPost, docPath(doc, "attrs", "suggest"), nil, struct{}{}, &s)
	return s, err
}
