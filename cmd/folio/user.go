package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
	"github.com/urfave/cli/v2"
)

// authBackend is what the user and token verbs need: the data directory in
// direct mode, the daemon's admin API with --server.
type authBackend interface {
	AddUser(ctx context.Context, name string, admin bool) (issued, error)
	ListUsers(ctx context.Context) ([]auth.User, error)
	ListTokens(ctx context.Context, user string) ([]auth.Token, error)
	DeleteUser(ctx context.Context, name string) ([]auth.Token, error)
	AddToken(ctx context.Context, user, kind string) (issued, error)
	RevokeToken(ctx context.Context, ref string) (auth.Token, error)
	Close() error
}

// issued is a token shown once.
type issued struct {
	User   string
	Role   string
	Secret string
	Token  auth.Token
}

func init() {
	extraCommands = append(extraCommands,
		&cli.Command{
			Name:  "user",
			Usage: "manage users (admins and authors)",
			Subcommands: []*cli.Command{
				{
					Name:      "add",
					Usage:     "create a user and print their first token (shown only once)",
					ArgsUsage: "NAME",
					Flags:     []cli.Flag{&cli.BoolFlag{Name: "admin", Usage: "the user is an admin"}, formatFlag("text", "text", "json")},
					Action:    cmdUserAdd,
				},
				{
					Name:      "list",
					Usage:     "list users and their tokens",
					ArgsUsage: " ",
					Flags:     []cli.Flag{formatFlag("text", "text", "json")},
					Action:    cmdUserList,
				},
				{
					Name:      "delete",
					Usage:     "delete a user and revoke every token of theirs (their documents stay)",
					ArgsUsage: "NAME",
					Flags:     []cli.Flag{formatFlag("text", "text", "json")},
					Action:    cmdUserDelete,
				},
			},
		},
		&cli.Command{
			Name:  "token",
			Usage: "manage API tokens",
			Subcommands: []*cli.Command{
				{
					Name:      "add",
					Usage:     "issue a new token for a user (shown only once)",
					ArgsUsage: "USER",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "kind", Value: auth.KindFull, Usage: "full, backup (read-only) or agent (reads and proposes suggestions only; docs/agents.md)"},
						formatFlag("text", "text", "json"),
					},
					Action: cmdTokenAdd,
				},
				{
					Name:      "list",
					Usage:     "list tokens (their ids; never the secret)",
					ArgsUsage: "[USER]",
					Flags:     []cli.Flag{formatFlag("text", "text", "json")},
					Action:    cmdTokenList,
				},
				{
					Name:      "revoke",
					Usage:     "revoke a token; live connections using it are closed",
					ArgsUsage: "TOKEN_ID_OR_PREFIX",
					Flags:     []cli.Flag{formatFlag("text", "text", "json")},
					Action:    cmdTokenRevoke,
				},
			},
		})
}

// openAuth opens the users and tokens of the data directory, or of the
// daemon with --server.
func openAuth(c *cli.Context) (authBackend, error) {
	if u := serverURL(c); u != "" {
		return dialRemote(u, c.String("token"))
	}
	r, err := openRepo(c)
	if err != nil {
		return nil, err
	}
	return &localAuth{r: r, s: auth.New(r.DB())}, nil
}

// localAuth works on a data directory.
type localAuth struct {
	r *repo.Repo
	s *auth.Store
}

func (l *localAuth) AddUser(ctx context.Context, name string, admin bool) (issued, error) {
	u, it, err := l.s.AddUser(ctx, name, admin)
	return issued{User: u.Name, Role: u.Role, Secret: it.Secret, Token: it.Token}, err
}

func (l *localAuth) ListUsers(ctx context.Context) ([]auth.User, error) {
	us, err := l.s.ListUsers(ctx)
	return us, err
}

func (l *localAuth) ListTokens(ctx context.Context, user string) ([]auth.Token, error) {
	ts, err := l.s.ListTokens(ctx, user)
	return ts, err
}

func (l *localAuth) DeleteUser(ctx context.Context, name string) ([]auth.Token, error) {
	ts, err := l.s.DeleteUser(ctx, name)
	return ts, err
}

func (l *localAuth) AddToken(ctx context.Context, user, kind string) (issued, error) {
	it, err := l.s.AddToken(ctx, user, kind)
	if err != nil {
		return issued{}, err
	}
	u, err := l.s.GetUser(ctx, user)
	return issued{User: it.User, Role: u.Role, Secret: it.Secret, Token: it.Token}, err
}

func (l *localAuth) RevokeToken(ctx context.Context, ref string) (auth.Token, error) {
	t, err := l.s.RevokeToken(ctx, ref)
	return t, err
}

func (l *localAuth) Close() error { return l.r.Close() }

func printIssued(c *cli.Context, format string, it issued, what string) error {
	if format == "json" {
		return printJSON(c.App.Writer, map[string]string{"user": it.User, "role": it.Role, "token": it.Secret,
			"tokenId": it.Token.ID, "kind": it.Token.Kind})
	}
	fmt.Fprintf(c.App.Writer, "%s %s (%s), token %s (%s):\n%s\n", what, it.User, it.Role, it.Token.Prefix(), it.Token.Kind, it.Secret)
	notice(c, "the token is shown only now and cannot be recovered; store it (FOLIO_TOKEN) or revoke it")
	return nil
}

var cmdUserAdd = verb(openAuth, 1, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b authBackend) error {
	it, err := b.AddUser(c.Context, a[0], c.Bool("admin"))
	if err != nil {
		return err
	}
	return printIssued(c, format, it, "created user")
})

var cmdUserList = verb(openAuth, 0, []string{"text", "json"}, func(c *cli.Context, _ []string, format string, b authBackend) error {
	us, err := b.ListUsers(c.Context)
	if err != nil {
		return err
	}
	ts, err := b.ListTokens(c.Context, "")
	if err != nil {
		return err
	}
	type tokenView struct {
		ID      string `json:"id"`
		Prefix  string `json:"prefix"`
		Kind    string `json:"kind"`
		Created string `json:"created"`
	}
	type userView struct {
		ID      string      `json:"id"`
		Name    string      `json:"name"`
		Role    string      `json:"role"`
		Created string      `json:"created"`
		Tokens  []tokenView `json:"tokens"`
	}
	out := make([]userView, len(us))
	for i, u := range us {
		out[i] = userView{ID: u.ID, Name: u.Name, Role: u.Role, Created: fmtTime(u.Created), Tokens: []tokenView{}}
		for _, t := range ts {
			if t.User == u.Name {
				out[i].Tokens = append(out[i].Tokens, tokenView{ID: t.ID, Prefix: t.Prefix(), Kind: t.Kind, Created: fmtTime(t.Created)})
			}
		}
	}
	if format == "json" {
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tTOKENS")
	for _, u := range out {
		ids := make([]string, len(u.Tokens))
		for i, t := range u.Tokens {
			ids[i] = t.Prefix
			if t.Kind != auth.KindFull {
				ids[i] += "(" + t.Kind + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termText(u.Name), u.Role, u.Created, strings.Join(ids, " "))
	}
	return tw.Flush()
})

var cmdUserDelete = verb(openAuth, 1, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b authBackend) error {
	ts, err := b.DeleteUser(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		if ts == nil {
			ts = []auth.Token{}
		}
		return printJSON(c.App.Writer, map[string]any{"user": a[0], "revoked": ts})
	}
	fmt.Fprintf(c.App.Writer, "deleted user %s; %s revoked\n", a[0], plural(len(ts), "token"))
	return nil
})

func cmdTokenAdd(c *cli.Context) error {
	if kind := c.String("kind"); !auth.ValidKind(kind) {
		return usagef("--kind %q: use %s (see folio token add --help)", kind, strings.Join(auth.Kinds, ", "))
	}
	return tokenAdd(c)
}

var tokenAdd = verb(openAuth, 1, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b authBackend) error {
	it, err := b.AddToken(c.Context, a[0], c.String("kind"))
	if err != nil {
		return err
	}
	return printIssued(c, format, it, "new token for user")
})

func cmdTokenList(c *cli.Context) error {
	user := ""
	switch c.NArg() {
	case 0:
	case 1:
		user = c.Args().First()
	default:
		return usagef("folio token list takes at most one argument: USER")
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	b, err := openAuth(c)
	if err != nil {
		return err
	}
	defer b.Close()
	ts, err := b.ListTokens(c.Context, user)
	if err != nil {
		return err
	}
	type view struct {
		ID      string `json:"id"`
		Prefix  string `json:"prefix"`
		User    string `json:"user"`
		Kind    string `json:"kind"`
		Created string `json:"created"`
	}
	out := make([]view, len(ts))
	for i, t := range ts {
		out[i] = view{ID: t.ID, Prefix: t.Prefix(), User: t.User, Kind: t.Kind, Created: fmtTime(t.Created)}
	}
	if format == "json" {
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "TOKEN\tUSER\tKIND\tCREATED")
	for _, v := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Prefix, termText(v.User), v.Kind, v.Created)
	}
	return tw.Flush()
}

var cmdTokenRevoke = verb(openAuth, 1, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b authBackend) error {
	t, err := b.RevokeToken(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, t)
	}
	fmt.Fprintf(c.App.Writer, "revoked token %s of user %s\n", t.Prefix(), t.User)
	return nil
})
