package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands,
		&cli.Command{
			Name:      "status",
			Usage:     "what the draft changes against the head: one document, or every document with an unsealed draft",
			ArgsUsage: "[ID]",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdStatus,
		},
		&cli.Command{
			Name:      "checkpoint",
			Usage:     "seal the saved draft into a new revision (reason manual)",
			ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the version's message (an error when there is nothing to seal)"},
				formatFlag("text", "text", "json"),
			},
			Action: withBackend(1, []string{"text", "json"}, cmdCheckpoint),
		},
	)
}

// docStatus is what `folio status` reports of one document: the draft
// against the version it is based on (the head).
type docStatus struct {
	Doc           string                `json:"doc"`
	Title         string                `json:"title"`
	Head          string                `json:"head"`
	Seq           uint64                `json:"seq"` // the draft's save counter
	Unsealed      bool                  `json:"unsealed"`
	UnsealedSince string                `json:"unsealedSince,omitempty"` // RFC 3339 UTC
	LastChange    string                `json:"lastChange,omitempty"`    // RFC 3339 UTC
	SavedBy       string                `json:"savedBy,omitempty"`
	Added         int                   `json:"added"`
	Modified      int                   `json:"modified"`
	Deleted       int                   `json:"deleted"`
	Moved         int                   `json:"moved"`
	Attrs         []string              `json:"attrs"` // the article attributes the draft changes
	Changes       []flowdoc.BlockChange `json:"changes"`
}

// statusOf compares doc's draft with the version it is based on.
func statusOf(ctx context.Context, b backend, doc string) (docStatus, error) {
	d, err := b.Draft(ctx, doc)
	if err != nil {
		return docStatus{}, err
	}
	head, err := b.Show(ctx, doc, d.Head)
	if err != nil {
		return docStatus{}, err
	}
	st := docStatus{Doc: doc, Title: d.Attrs.Title, Head: d.Head, Seq: d.Seq, Unsealed: d.Unsealed, SavedBy: d.SavedBy,
		Attrs: changedAttrs(head.Attrs, d.Attrs), Changes: flowdoc.Diff(head.Body, d.Body)}
	if d.UnsealedSince > 0 {
		st.UnsealedSince = fmtTime(d.UnsealedSince)
	}
	if d.LastChange > 0 {
		st.LastChange = fmtTime(d.LastChange)
	}
	for i := range st.Changes {
		ch := &st.Changes[i]
		ch.Words = nil // status names blocks; `diff ID head draft` shows the words
		switch ch.Kind {
		case flowdoc.Added:
			st.Added++
		case flowdoc.Modified:
			st.Modified++
		case flowdoc.Deleted:
			st.Deleted++
		case flowdoc.Moved:
			st.Moved++
		}
	}
	if st.Changes == nil {
		st.Changes = []flowdoc.BlockChange{}
	}
	return st, nil
}

// changedAttrs names the article attributes that differ between a and b.
func changedAttrs(a, b flowdoc.Attributes) []string {
	out := []string{}
	add := func(name string, same bool) {
		if !same {
			out = append(out, name)
		}
	}
	add("title", a.Title == b.Title)
	add("summary", a.Summary == b.Summary)
	add("slug", a.Slug == b.Slug)
	add("category", a.Category == b.Category)
	add("tags", slices.Equal(a.Tags, b.Tags))
	return out
}

func cmdStatus(c *cli.Context) error {
	a := c.Args().Slice()
	if len(a) > 1 {
		return usagef("%s takes at most one argument: [ID]", cmdName(c))
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	if len(a) == 1 {
		st, err := statusOf(c.Context, b, a[0])
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(c.App.Writer, st)
		}
		printStatus(c, st)
		return nil
	}
	docs, err := b.ListDocs(c.Context)
	if err != nil {
		return err
	}
	out := []docStatus{}
	for _, d := range docs {
		if !d.Unsealed {
			continue
		}
		st, err := statusOf(c.Context, b, d.ID)
		if err != nil {
			return err
		}
		out = append(out, st)
	}
	if format == "json" {
		return printJSON(c.App.Writer, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(c.App.Writer, "nothing to seal: every draft is at its head (%s)\n", plural(len(docs), "document"))
		return nil
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tHEAD\tCHANGES\tSAVED BY\tLAST CHANGE\tTITLE")
	for _, st := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termText(st.Doc), termText(st.Head), counts(st), termText(orDash(st.SavedBy)),
			orDash(st.LastChange), termText(st.Title))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "%s unsealed; `folio status ID` lists the changes, `folio checkpoint ID` seals them\n",
		plural(len(out), "draft"))
	return nil
}

// counts is a status's changes in short: "+1 ~2 -0 >0 attrs title,tags".
func counts(st docStatus) string {
	s := fmt.Sprintf("+%d ~%d -%d", st.Added, st.Modified, st.Deleted)
	if st.Moved > 0 {
		s += fmt.Sprintf(" >%d", st.Moved)
	}
	if len(st.Attrs) > 0 {
		s += " attrs"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printStatus(c *cli.Context, st docStatus) {
	w := c.App.Writer
	fmt.Fprintf(w, "document %s (%s), draft seq %d on %s\n", termText(st.Doc), termText(st.Title), st.Seq, termText(st.Head))
	if st.LastChange != "" {
		fmt.Fprintf(w, "last saved %s by %s\n", st.LastChange, termText(orDash(st.SavedBy)))
	}
	if !st.Unsealed {
		fmt.Fprintf(w, "nothing to seal: the draft is %s\n", termText(st.Head))
		return
	}
	fmt.Fprintf(w, "unsealed since %s: %s added, %s modified, %s deleted, %s moved\n", orDash(st.UnsealedSince),
		plural(st.Added, "block"), plural(st.Modified, "block"), plural(st.Deleted, "block"), plural(st.Moved, "block"))
	for _, name := range st.Attrs {
		fmt.Fprintf(w, "~ attribute %s\n", name)
	}
	printChanges(w, st.Changes)
	fmt.Fprintf(w, "`folio diff %s head draft` shows the words; `folio checkpoint %s -m MSG` seals the draft\n",
		termText(st.Doc), termText(st.Doc))
}

func cmdCheckpoint(c *cli.Context, a []string, format string, b backend) error {
	msg := c.String("message")
	v, created, err := b.Checkpoint(c.Context, a[0], reasonManual, msg)
	if err != nil {
		return err
	}
	if !created && msg != "" {
		return nothingToSeal(a[0], v.Label)
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]any{"version": viewOf(v), "created": created})
	}
	if !created {
		fmt.Fprintf(c.App.Writer, "nothing to seal: the draft of %s is %s\n", termText(a[0]), termText(v.Label))
		return nil
	}
	fmt.Fprintf(c.App.Writer, "sealed %s as %s\n", termText(a[0]), termText(v.Label))
	return nil
}

// nothingToSeal is the error of a checkpoint message that cannot be
// recorded because the draft is the head already: the message is never
// dropped silently.
func nothingToSeal(doc, head string) error {
	return errs.E(errs.Conflict, "nothing to seal: the draft of %s is %s already, so the message was not recorded; "+
		"save a change first (`folio status %s` shows none), or use `folio log %s` to find the version", doc, head, doc, doc)
}
