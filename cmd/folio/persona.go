package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/memory"
	"github.com/foliodev/folio/persona/source"
	"github.com/urfave/cli/v2"
)

// personaBackend is the persona service as the CLI uses it: direct mode
// on the data directory (as FOLIO_USER), --server mode on the daemon's
// /v1/personas (as the token's user), printing the same either way.
type personaBackend interface {
	CreatePersona(ctx context.Context, name string, sources []string) (persona.Persona, error)
	Personas(ctx context.Context) ([]persona.Persona, error)
	Persona(ctx context.Context, id string) (persona.Persona, error)
	PersonaSources(ctx context.Context, id string) ([]server.PersonaSource, error)
	PersonaVersions(ctx context.Context, id string) ([]persona.Version, error)
	// ActivatePersona makes an existing version the active one again.
	ActivatePersona(ctx context.Context, id string, version int) (persona.Persona, error)
	// GeneratePersona queues a generation job; WaitPersonaJob waits for
	// it to end (in direct mode, running the store's task runner
	// meanwhile).
	GeneratePersona(ctx context.Context, id string) (persona.Job, error)
	WaitPersonaJob(ctx context.Context, id, job string) (persona.Job, error)
	PersonaStyle(ctx context.Context, id string, version int) (server.PersonaStyle, error)
	PersonaMemory(ctx context.Context, id string, version int, query string, limit int) (server.PersonaMemory, error)
	// IndexStatus and IndexRebuild are the memory index's.
	IndexStatus(ctx context.Context) (index.Status, error)
	IndexRebuild(ctx context.Context) (index.Status, error)
}

func init() { extraCommands = append(extraCommands, personaCommands()...) }

func personaCommands() []*cli.Command {
	text := []string{"text", "json"}
	version := &cli.IntFlag{Name: "version", Usage: "version `N` (default: the active one)"}
	return []*cli.Command{
		{
			Name:  "persona",
			Usage: "writing personas: sources, versions, style profile and memory",
			Description: "A persona makes the writing assistant write like its author without inventing anything about them.\n" +
				"It learns from the author's published articles only; `generate` builds a new version (a durable task).",
			Subcommands: []*cli.Command{
				{
					Name: "create", Usage: "create a persona from source articles", ArgsUsage: " ",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "name", Required: true, Usage: "the persona's `NAME`"},
						&cli.StringSliceFlag{Name: "source", Required: true, Usage: "a source document `DOC` (repeat it; published articles only are used)"},
						formatFlag("text", text...),
					},
					Action: withBackend(0, text, personaCreateAction),
				},
				{
					Name: "list", Usage: "list your personas", ArgsUsage: " ",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(0, text, personaListAction),
				},
				{
					Name: "show", Usage: "show a persona and its active version", ArgsUsage: "ID",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, personaShowAction),
				},
				{
					Name: "sources", Usage: "show a persona's sources: published now and pinned by the active version", ArgsUsage: "ID",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, personaSourcesAction),
				},
				{
					Name: "generate", Usage: "generate a new persona version (a durable task)", ArgsUsage: "ID",
					Description: "Queues the generation. With --wait, waits for it and prints the version or why it failed\n" +
						"(source_unpublished, private_source_blocked, source_changed, …); the previous version stays active\n" +
						"on any failure. In direct mode the job runs only while a task runner runs on the store: --wait runs it.",
					Flags:  []cli.Flag{&cli.BoolFlag{Name: "wait", Usage: "wait for the job and print its outcome"}, formatFlag("text", text...)},
					Action: withBackend(1, text, personaGenerateAction),
				},
				{
					Name: "versions", Usage: "list a persona's versions", ArgsUsage: "ID",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, personaVersionsAction),
				},
				{
					Name: "activate", Usage: "make an existing version the active one again", ArgsUsage: "ID",
					Description: "Moves the active pointer back to version N (see `folio persona versions`); no version is rewritten\n" +
						"and the move is recorded (GET /v1/personas/{id}/activations).",
					Flags: []cli.Flag{
						&cli.IntFlag{Name: "version", Required: true, Usage: "the version `N` to activate"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, personaActivateAction),
				},
				{
					Name: "style", Usage: "show a version's style profile with its evidence", ArgsUsage: "ID",
					Flags: []cli.Flag{version, formatFlag("text", text...)}, Action: withBackend(1, text, personaStyleAction),
				},
				{
					Name: "memory", Usage: "show a version's memory items with status and evidence", ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "query", Usage: "retrieve for `TEXT` as a persona run would"},
						&cli.IntFlag{Name: "limit", Usage: "at most `N` items (default 200)"},
						version, formatFlag("text", text...),
					},
					Action: withBackend(1, text, personaMemoryAction),
				},
			},
		},
		{
			Name:  "index",
			Usage: "the memory search index beside the store",
			Subcommands: []*cli.Command{
				{
					Name: "status", Usage: "show the memory index: generation, mapping version, documents, pending outbox entries", ArgsUsage: " ",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(0, text, indexStatusAction),
				},
				{
					Name: "rebuild", Usage: "rebuild the memory index from the store into a new directory and swap it in", ArgsUsage: " ",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(0, text, indexRebuildAction),
				},
			},
		},
	}
}

func personaCreateAction(c *cli.Context, _ []string, format string, b backend) error {
	p, err := b.CreatePersona(c.Context, c.String("name"), c.StringSlice("source"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, p)
	}
	fmt.Fprintf(c.App.Writer, "created persona %s %q from %s\n", p.ID, p.Name, plural(len(p.Sources), "source"))
	fmt.Fprintf(c.App.Writer, "`folio persona generate %s --wait` builds its first version\n", p.ID)
	return nil
}

func personaListAction(c *cli.Context, _ []string, format string, b backend) error {
	ps, err := b.Personas(c.Context)
	if err != nil {
		return err
	}
	if format == "json" {
		if ps == nil {
			ps = []persona.Persona{}
		}
		return printJSON(c.App.Writer, ps)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tNAME\tSOURCES\tACTIVE\tVERSIONS\tUPDATED")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\n", p.ID, p.Name, len(p.Sources), activeText(p.Active), p.Versions, fmtTime(p.Updated))
	}
	return tw.Flush()
}

func activeText(seq int) string {
	if seq == 0 {
		return "none"
	}
	return fmt.Sprintf("v%d", seq)
}

// personaView is `persona show --format json`.
type personaView struct {
	Persona persona.Persona  `json:"persona"`
	Active  *persona.Version `json:"active,omitempty"`
}

func personaShowAction(c *cli.Context, a []string, format string, b backend) error {
	p, err := b.Persona(c.Context, a[0])
	if err != nil {
		return err
	}
	view := personaView{Persona: p}
	if p.Active > 0 {
		vs, err := b.PersonaVersions(c.Context, a[0])
		if err != nil {
			return err
		}
		for i := range vs {
			if vs[i].Seq == p.Active {
				view.Active = &vs[i]
			}
		}
	}
	if format == "json" {
		return printJSON(c.App.Writer, view)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "persona %s %q of %s, created %s\n", p.ID, p.Name, p.User, fmtTime(p.Created))
	fmt.Fprintf(w, "sources: %s\n", strings.Join(p.Sources, " "))
	if view.Active == nil {
		fmt.Fprintf(w, "no version yet: `folio persona generate %s --wait`\n", p.ID)
		return nil
	}
	fmt.Fprintf(w, "active: ")
	printVersion(w, *view.Active)
	return nil
}

// printVersion prints a version: what it pinned and what it left out.
func printVersion(w io.Writer, v persona.Version) {
	fmt.Fprintf(w, "version %d (%s) made %s from %s\n", v.Seq, v.ID, fmtTime(v.Created), plural(len(v.Sources), "source"))
	orOff := func(s string) string {
		if s == "" {
			return "off"
		}
		return s
	}
	fmt.Fprintf(w, "  style %s (%s), learning %s, memory %s\n", v.Style, v.Learner, orOff(v.Learning), orOff(v.Memory))
	for _, sp := range v.Sources {
		mem := ""
		if sp.Memory {
			mem = ", feeds memory"
		}
		fmt.Fprintf(w, "  source %s (%s%s)\n", sp.Pin, sp.Visibility, mem)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func personaSourcesAction(c *cli.Context, a []string, format string, b backend) error {
	ss, err := b.PersonaSources(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, ss)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "DOC\tPUBLISHED\tVISIBILITY\tPINNED\tMEMORY")
	for _, s := range ss {
		pub := "no"
		switch {
		case s.Error != "":
			pub = s.Error
		case s.Published:
			pub = s.Label
		}
		pinned := s.Pinned
		if pinned == "" {
			pinned = "-"
		}
		mem := "no"
		if s.Memory {
			mem = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Doc, pub, dash(s.Visibility), pinned, mem)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func personaGenerateAction(c *cli.Context, a []string, format string, b backend) error {
	j, err := b.GeneratePersona(c.Context, a[0])
	if err != nil {
		return err
	}
	if c.Bool("wait") {
		if j, err = b.WaitPersonaJob(c.Context, a[0], j.Task); err != nil {
			return err
		}
	}
	w := c.App.Writer
	if format == "json" {
		if err := printJSON(w, j); err != nil {
			return err
		}
		return jobFailure(j)
	}
	if !c.Bool("wait") {
		fmt.Fprintf(w, "queued generation job %s of persona %s\n", j.Task, j.Persona)
		return nil
	}
	switch j.State {
	case task.Succeeded:
		fmt.Fprintf(w, "job %s succeeded: version %d of persona %s is active\n", j.Task, j.Version, j.Persona)
		v, err := b.PersonaVersions(c.Context, a[0])
		if err != nil {
			return err
		}
		for _, x := range v {
			if x.Seq == j.Version {
				printVersion(w, x)
			}
		}
	default:
		code, msg := "unknown", ""
		if j.Error != nil {
			code, msg = j.Error.Code, j.Error.Message
		}
		fmt.Fprintf(w, "job %s %s: %s: %s\nthe previous version stays active\n", j.Task, j.State, code, msg)
	}
	return jobFailure(j)
}

// jobFailure is the exit status of a job that ended without a version:
// its error's kind (a refusal's code is kept in the job).
func jobFailure(j persona.Job) error {
	if j.State == task.Succeeded || !j.State.Terminal() {
		return nil
	}
	code, msg := "unknown", "the generation did not finish"
	if j.Error != nil {
		code, msg = j.Error.Code, j.Error.Message
	}
	return errs.C(kindOfRunCode(code), code, "generation job %s %s: %s", j.Task, j.State, msg)
}

func personaVersionsAction(c *cli.Context, a []string, format string, b backend) error {
	vs, err := b.PersonaVersions(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, vs)
	}
	for _, v := range vs {
		printVersion(c.App.Writer, v)
	}
	return nil
}

func personaActivateAction(c *cli.Context, a []string, format string, b backend) error {
	p, err := b.ActivatePersona(c.Context, a[0], c.Int("version"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, p)
	}
	fmt.Fprintf(c.App.Writer, "version %d of persona %s %q is active (%s)\n", p.Active, p.ID, termText(p.Name), plural(p.Versions, "version"))
	return nil
}

func personaStyleAction(c *cli.Context, a []string, format string, b backend) error {
	ps, err := b.PersonaStyle(c.Context, a[0], c.Int("version"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, ps)
	}
	w, p := c.App.Writer, ps.Profile
	fmt.Fprintf(w, "style profile %s of persona %s version %d (learner %s)\n", ps.Version.Style, ps.Version.Persona, ps.Version.Seq, p.Learner)
	fmt.Fprintf(w, "summary: %s\n", p.Summary)
	if pr := p.Prose; pr != nil {
		fmt.Fprintf(w, "prose (%s %s, %s): %s\n", pr.Provider, pr.Model, pr.Prompt, pr.Summary)
	}
	for _, d := range p.Dimensions {
		fmt.Fprintf(w, "\n%s\n", d.Name)
		for _, f := range d.Features {
			val := fmt.Sprintf("%g %s", f.Value, f.Unit)
			if f.Label != "" {
				val = f.Label
			}
			if len(f.Percentiles) > 0 {
				val += fmt.Sprintf(" (p10..p90 %v)", f.Percentiles)
			}
			fmt.Fprintf(w, "  %s: %s%s\n", f.Name, val, evidenceText(f.Evidence))
		}
	}
	fmt.Fprintf(w, "\nrules\n")
	for _, r := range p.Rules {
		fmt.Fprintf(w, "  %s [%s, weight %.2f] %s%s\n", r.ID, r.Dimension, r.Weight, r.Statement, evidenceText(r.Evidence))
	}
	if len(p.Patterns) > 0 {
		fmt.Fprintf(w, "\npatterns\n")
		for _, pt := range p.Patterns {
			fmt.Fprintf(w, "  %s %q ×%d in %d sources%s\n", pt.Kind, pt.Text, pt.Count, pt.Sources, evidenceText(pt.Evidence))
		}
	}
	if len(p.Uncertainties) > 0 {
		fmt.Fprintf(w, "\nuncertainties\n")
		for _, u := range p.Uncertainties {
			fmt.Fprintf(w, "  %s: %s\n", u.Topic, u.Reason)
		}
	}
	return nil
}

// evidenceText is a claim's evidence, briefly: how many spans and the
// first one.
func evidenceText(ev []source.Evidence) string {
	if len(ev) == 0 {
		return ""
	}
	return fmt.Sprintf("  — evidence: %s (%d)", evidenceOne(ev[0]), len(ev))
}

func evidenceOne(e source.Evidence) string {
	return fmt.Sprintf("%s@%s (%s) %s:%d-%d #%s", e.Doc, e.Label, e.Version.Short(), e.Block, e.Span.Start, e.Span.End, e.Fingerprint)
}

func personaMemoryAction(c *cli.Context, a []string, format string, b backend) error {
	m, err := b.PersonaMemory(c.Context, a[0], c.Int("version"), c.String("query"), c.Int("limit"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, m)
	}
	w := c.App.Writer
	if m.Snapshot == "" {
		fmt.Fprintf(w, "version %s has no memory ([persona] memory was off when it was generated)\n", m.Version)
		return nil
	}
	if m.Query != "" {
		fmt.Fprintf(w, "memory %s of %s: %d of %d items match %q; the %s a run would get:\n", m.Snapshot, m.Version, m.Matched, m.Total, m.Query, plural(len(m.Items), "item"))
	} else {
		fmt.Fprintf(w, "memory %s of %s: %s\n", m.Snapshot, m.Version, plural(m.Total, "item"))
	}
	for _, it := range m.Items {
		printMemoryItem(w, it)
	}
	return nil
}

func printMemoryItem(w io.Writer, it memory.Item) {
	when := ""
	if it.Time != nil {
		when = fmt.Sprintf(", time %s (%s)", it.Time.Value, it.Time.Precision)
	}
	fmt.Fprintf(w, "%s [%s, %s, confidence %.2f, %s%s] %s\n", it.Key, it.Type, it.Status, it.Confidence, it.Sensitivity, when, it.Statement)
	for _, e := range it.Evidence {
		fmt.Fprintf(w, "    evidence %s\n", evidenceOne(e))
	}
	for _, r := range it.Relations {
		fmt.Fprintf(w, "    %s %s\n", r.Kind, r.Item)
	}
}

func indexStatusAction(c *cli.Context, _ []string, format string, b backend) error {
	st, err := b.IndexStatus(c.Context)
	if err != nil {
		return err
	}
	return printIndexStatus(c.App.Writer, st, format)
}

func indexRebuildAction(c *cli.Context, _ []string, format string, b backend) error {
	st, err := b.IndexRebuild(c.Context)
	if err != nil {
		return err
	}
	return printIndexStatus(c.App.Writer, st, format)
}

func printIndexStatus(w io.Writer, st index.Status, format string) error {
	if format == "json" {
		return printJSON(w, st)
	}
	fmt.Fprintf(w, "memory index %s: generation %d, mapping version %d, %s, %s pending\n", st.Dir, st.Generation, st.Mapping,
		plural(int(st.Docs), "document"), counted(st.Pending, "outbox entry", "outbox entries"))
	if st.LastReason != "" {
		fmt.Fprintf(w, "last rebuild: %s\n", st.LastReason)
	}
	if st.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", st.LastError)
	}
	return nil
}
