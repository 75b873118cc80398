package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/urfave/cli/v2"
)

func coreCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "init",
			Usage:     "create an empty store in the data directory",
			ArgsUsage: " ",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdInit,
		},
		{
			Name:  "doc",
			Usage: "create, list, save and delete documents",
			Subcommands: append([]*cli.Command{
				{
					Name:      "new",
					Usage:     "create a document (first version v1.r0)",
					ArgsUsage: " ",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "title", Usage: "the document's title (default: the Markdown file's title)"},
						&cli.StringFlag{Name: "from", Usage: "initial body: a FlowDocument .json or a Markdown .md file"},
						&cli.StringFlag{Name: "id", Usage: "document id (admins and direct mode only; default: a random one)"},
						&cli.StringFlag{Name: "owner", Usage: "the owning `USER` (admins and direct mode only; default: you)"},
						formatFlag("text", "text", "json"),
					},
					Action: cmdDocNew,
				},
				{
					Name:      "chown",
					Usage:     "give a document to another user (admins; logged and recorded in its stream)",
					ArgsUsage: "ID USER",
					Flags:     []cli.Flag{formatFlag("text", "text", "json")},
					Action:    cmdDocChown,
				},
				{
					Name:      "list",
					Usage:     "list documents",
					ArgsUsage: " ",
					Flags: []cli.Flag{
						&cli.BoolFlag{Name: "deleted", Usage: "list the deleted documents instead, which `folio doc undelete` brings back (admins)"},
						formatFlag("text", "text", "json")},
					Action: cmdDocList,
				},
				{
					Name:      "save",
					Usage:     "save a new body as the document's draft",
					ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "from", Usage: "the body: a FlowDocument .json or a Markdown .md file", Required: true},
						&cli.BoolFlag{Name: "checkpoint", Usage: "seal the draft into a new version (reason manual)"},
						&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "message of the checkpoint"},
						formatFlag("text", "text", "json"),
					},
					Action: cmdDocSave,
				},
			}, deleteCommands()...),
		},
		searchCommand,
		{
			Name:      "log",
			Usage:     "list a document's versions, newest first",
			ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "show at most this many versions (0: all)"},
				formatFlag("text", "text", "json"),
			},
			Action: cmdLog,
		},
		{
			Name:      "show",
			Usage:     "print a version (the head by default; ID@draft: the draft)",
			ArgsUsage: "ID[@LABEL]",
			Flags:     []cli.Flag{formatFlag("md", "json", "md", "text")},
			Action:    cmdShow,
		},
		{
			Name:      "diff",
			Usage:     "compare two versions block by block (LABEL_B defaults to the draft, LABEL_A to head)",
			ArgsUsage: "ID [LABEL_A [LABEL_B]]",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdDiff,
		},
		{
			Name:      "restore",
			Usage:     "restore a version as a new major version, or one block as a new revision",
			ArgsUsage: "ID LABEL",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "block", Usage: "restore only this block"},
				formatFlag("text", "text", "json"),
			},
			Action: cmdRestore,
		},
		{
			Name:      "blocks",
			Usage:     "list the blocks of a version (the head by default): id, type, first words",
			ArgsUsage: "ID[@LABEL]",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdBlocks,
		},
		{
			Name:      "history",
			Usage:     "list the revisions of one block",
			ArgsUsage: "ID BLOCK_ID",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdHistory,
		},
		{
			Name:      "gc",
			Usage:     "remove objects that no ref, draft or recent reflog entry reaches",
			ArgsUsage: " ",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "prune", Value: "14d", Usage: "reflog entries and asset uploads younger than this keep what they name (e.g. 14d, 36h, 0 = keep none)"},
				&cli.BoolFlag{Name: "dry-run", Usage: "report what would be removed, remove nothing"},
				formatFlag("text", "text", "json"),
			},
			Action: cmdGC,
		},
		{
			Name:      "reindex",
			Usage:     "rebuild a document's indexes and draft from its head ref and versions",
			ArgsUsage: "ID",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdReindex,
		},
		{
			Name:      "fsck",
			Usage:     "check the integrity of the store",
			ArgsUsage: " ",
			Flags:     []cli.Flag{formatFlag("text", "text", "json")},
			Action:    cmdFsck,
		},
	}
}

// args checks the number of positional arguments.
func args(c *cli.Context, n int) ([]string, error) {
	a := c.Args().Slice()
	if len(a) != n {
		return nil, usagef("%s takes %s: %s", cmdName(c), plural(n, "argument"), strings.TrimSpace(c.Command.ArgsUsage))
	}
	return a, nil
}

func checkFormat(c *cli.Context, allowed ...string) (string, error) {
	f := c.String("format")
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", usagef("--format %q is not one of %s", f, strings.Join(allowed, ", "))
}

// printJSON prints v as indented JSON, its times as RFC 3339 UTC
// (rfc3339Times).
func printJSON(w io.Writer, v any) error {
	data, err := compactJSON(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// compactJSON is v as compact JSON with its times as RFC 3339 UTC.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return rfc3339Times(buf.Bytes())
}

// timeFormat is the one time format of the CLI's output, in UTC.
const timeFormat = time.RFC3339

func fmtTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(timeFormat) }

// input is a file given with --from: its body and, for Markdown, the
// article attributes its front matter or first heading gave.
type input struct {
	body flowdoc.Document
	// anonymous says the body's ids are not identities: Markdown, whose
	// ids only count blocks (they are cleared), and JSON with blocks that
	// have no id. A save aligns such a body with the draft; a new
	// document gives its blocks fresh ids.
	anonymous bool
	markdown  bool // its ids are b1, b2, … in document order
	attrs     flowdoc.Attributes
	set       []string // the attributes the file gave
	// images are the relative images read from beside a Markdown file
	// (markdownImages), to upload before the body that names them is saved.
	images []localImage
}

// readBody reads a FlowDocument from a .json file or a Markdown article
// from a .md file ("-" reads JSON from standard input). Markdown that has
// no block is reported on stderr as a note, never dropped silently. With
// titleFromHeading a Markdown file's opening # heading is its title
// (flowdoc.ImportArticle) when its front matter has none.
func readBody(c *cli.Context, path string, titleFromHeading bool) (input, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return input{}, errs.E(errs.Invalid, "read %s: %v", path, err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".md" || ext == ".markdown" {
		images := newMarkdownImages(c, path)
		a, unsupported, err := flowdoc.ImportArticleWith(data, titleFromHeading, flowdoc.ImportOptions{Image: images.resolve})
		if err != nil {
			return input{}, errs.E(errs.Invalid, "import %s: %v", path, err)
		}
		for _, u := range unsupported {
			note := ""
			if u.Note != "" {
				note = " (" + u.Note + ")"
			}
			fmt.Fprintf(c.App.ErrWriter, "note: %s:%d: %s has no block: %s%s\n", path, u.Line, u.Kind, termText(u.Text), note)
		}
		return input{body: a.Body, markdown: true, anonymous: true, attrs: a.Attrs, set: a.Set, images: images.found}, nil
	}
	if ext != ".json" && !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return input{}, errs.E(errs.Invalid, "%s is neither a FlowDocument .json nor a Markdown .md file", path)
	}
	d, err := flowdoc.Parse(data)
	if err != nil {
		return input{}, fmt.Errorf("%s: %w", path, errs.Wrap(errs.Invalid, err))
	}
	return input{body: d, anonymous: missingID(d.Blocks)}, nil
}

// withAttrs is base with the attributes in set taken from from.
func withAttrs(base, from flowdoc.Attributes, set []string) flowdoc.Attributes {
	for _, k := range set {
		switch k {
		case "title":
			base.Title = from.Title
		case "summary":
			base.Summary = from.Summary
		case "slug":
			base.Slug = from.Slug
		case "category":
			base.Category = from.Category
		case "tags":
			base.Tags = from.Tags
		}
	}
	return base
}

// clearIDs empties the ids of bs and of their nested blocks.
func clearIDs(bs []flowdoc.Block) {
	for i := range bs {
		bs[i].ID = ""
		for _, n := range bs[i].Nested() {
			clearIDs(*n)
		}
	}
}

// missingID reports whether a block of bs, or one nested in them, has no id.
func missingID(bs []flowdoc.Block) bool {
	for _, b := range bs {
		if b.ID == "" {
			return true
		}
		for _, n := range b.Nested() {
			if missingID(*n) {
				return true
			}
		}
	}
	return false
}

func cmdInit(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	if url := serverURL(c); url != "" {
		return usagef("folio init creates a store in a local directory; the daemon at %s (--server / FOLIO_SERVER) has its store already; "+
			"give --data DIR to create one here", url)
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	dir := dataDir(c)
	fc, err := config.Load(inherited(c, "config"), nil)
	if err != nil {
		return errs.Wrap(errs.Invalid, err)
	}
	if fc.Storage.Engine == config.EnginePostgres {
		// Opening the database creates the schema.
		r, err := repo.Open(dir, withEngine(repo.Options{}, fc, nil))
		if err != nil {
			return storeError(dir, err)
		}
		if err := r.Close(); err != nil {
			return err
		}
	} else if err := repo.Init(dir); err != nil {
		return storeError(dir, err)
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]string{"dir": dir})
	}
	fmt.Fprintf(c.App.Writer, "initialized folio store in %s\n", dir)
	return nil
}

func cmdDocNew(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	body := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	var attrs flowdoc.Attributes
	var images []localImage
	if f := c.String("from"); f != "" {
		in, err := readBody(c, f, c.String("title") == "")
		if err != nil {
			return err
		}
		body, attrs, images = in.body, in.attrs, in.images
		if in.anonymous && !in.markdown {
			body = flowdoc.Align(flowdoc.Document{}, body) // fresh ids
		}
	}
	if t := c.String("title"); t != "" {
		attrs.Title = t
	}
	if attrs.Title == "" {
		return usagef("folio doc new needs --title (or a Markdown file with a title in its front matter or a first # heading)")
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := uploadImages(c.Context, b, images, "", c.String("owner")); err != nil {
		return err
	}
	v, err := b.CreateDoc(c.Context, repo.CreateParams{ID: c.String("id"), Owner: c.String("owner"),
		Attrs: attrs, Body: body})
	if err != nil {
		return err
	}
	if lb, ok := b.(*localBackend); ok && c.String("owner") == "" {
		if owner, err := lb.r.DocOwner(v.Doc); err == nil && owner == "" {
			notice(c, "no user is named %q, so document %s belongs to nobody yet; an admin gives it an owner with `folio doc chown %s USER`",
				lb.actor, v.Doc, v.Doc)
		}
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]string{"id": v.Doc, "version": v.Label})
	}
	fmt.Fprintln(c.App.Writer, v.Doc)
	return nil
}

var cmdDocList = withBackend(0, []string{"text", "json"}, func(c *cli.Context, _ []string, format string, b backend) error {
	if c.Bool("deleted") {
		ds, err := b.ListDeleted(c.Context)
		if err != nil {
			return err
		}
		return printDeleted(c, format, ds)
	}
	docs, err := b.ListDocs(c.Context)
	if err != nil {
		return err
	}
	if format == "json" {
		type docView struct {
			ID        string `json:"id"`
			Title     string `json:"title"`
			Owner     string `json:"owner"`
			OwnerName string `json:"ownerName,omitempty"`
			Created   string `json:"created"`
			Head      string `json:"head"`
			Versions  uint64 `json:"versions"`
			Unsealed  bool   `json:"unsealed"`
		}
		out := make([]docView, len(docs))
		for i, d := range docs {
			out[i] = docView{ID: d.ID, Title: d.Title, Owner: d.Owner, OwnerName: d.OwnerName, Created: fmtTime(d.Created.UnixMilli()),
				Head: d.Head, Versions: d.Versions, Unsealed: d.Unsealed}
		}
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tHEAD\tVERSIONS\tDRAFT\tOWNER\tTITLE")
	for _, d := range docs {
		state := "sealed"
		if d.Unsealed {
			state = "unsealed"
		}
		owner := d.OwnerName
		if owner == "" {
			owner = "-" // nobody: no owner, or a deleted one
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", termText(d.ID), termText(d.Head), d.Versions, state, termText(owner), termText(d.Title))
	}
	return tw.Flush()
})

var cmdDocChown = withBackend(2, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b backend) error {
	res, err := b.Chown(c.Context, a[0], a[1])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, res)
	}
	if !res.Changed {
		fmt.Fprintf(c.App.Writer, "document %s belongs to %s already\n", res.Doc, res.OwnerName)
		return nil
	}
	fmt.Fprintf(c.App.Writer, "document %s now belongs to %s\n", res.Doc, res.OwnerName)
	return nil
})

func cmdDocSave(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
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
	d, err := b.Draft(c.Context, a[0])
	if err != nil {
		return err
	}
	// A document whose body opens with a # heading keeps the file's as a
	// block; one whose title came from it takes the title from it again.
	titled := len(d.Body.Blocks) > 0 && d.Body.Blocks[0].Type == flowdoc.Heading &&
		d.Body.Blocks[0].Attrs != nil && d.Body.Blocks[0].Attrs.Level == 1
	in, err := readBody(c, c.String("from"), !titled)
	if err != nil {
		return err
	}
	if in.markdown {
		clearIDs(in.body.Blocks) // they only count blocks: align by content
	}
	if err := uploadImages(c.Context, b, in.images, a[0], ""); err != nil {
		return err
	}
	p := repo.SaveParams{Doc: a[0], BaseSeq: d.Seq, Body: &in.body, Align: in.anonymous}
	if len(in.set) > 0 {
		at := withAttrs(d.Attrs, in.attrs, in.set)
		p.Attrs = &at
	}
	if c.Bool("checkpoint") {
		p.Seal, p.Message = reasonManual, c.String("message")
	}
	res, err := b.SaveDraft(c.Context, p)
	if err != nil {
		return err
	}
	if c.Bool("checkpoint") && res.Version == nil && p.Message != "" {
		return nothingToSeal(a[0], d.Head)
	}
	out := map[string]any{"seq": res.Seq, "fingerprint": res.Fingerprint.String(), "unsealed": res.Unsealed}
	if c.Bool("checkpoint") {
		if res.Version != nil {
			out["version"], out["sealed"] = res.Version.Label, true
		} else {
			out["version"], out["sealed"] = d.Head, false
		}
	}
	if format == "json" {
		return printJSON(c.App.Writer, out)
	}
	fmt.Fprintf(c.App.Writer, "saved draft seq %d (%s)", res.Seq, res.Fingerprint.Short())
	if v, ok := out["version"]; ok {
		if out["sealed"] == true {
			fmt.Fprintf(c.App.Writer, ", sealed as %s", v)
		} else {
			fmt.Fprintf(c.App.Writer, ", nothing to seal (head is %s)", v)
		}
	} else if res.Unsealed {
		fmt.Fprint(c.App.Writer, ", unsealed")
	}
	fmt.Fprintln(c.App.Writer)
	return nil
}

// versionView is the JSON form of a log entry.
type versionView struct {
	Label        string `json:"label"`
	Seq          uint64 `json:"seq"`
	Kind         string `json:"kind"`
	Reason       string `json:"reason,omitempty"`
	Hash         string `json:"hash"`
	Time         string `json:"time"`
	Author       string `json:"author"`
	Message      string `json:"message,omitempty"`
	Fingerprint  string `json:"fingerprint"`
	RestoredFrom string `json:"restoredFrom,omitempty"`
	Blocks       int    `json:"blocks"`
	Published    bool   `json:"published,omitempty"` // the version the public sees
}

func viewOf(v repo.VersionInfo) versionView {
	return versionView{Label: v.Label, Seq: v.Seq, Kind: v.Kind, Reason: v.Reason, Hash: v.Hash.String(),
		Time: fmtTime(v.Time), Author: v.Author, Message: v.Message, Fingerprint: v.Fingerprint.String(),
		RestoredFrom: v.RestoredFrom, Blocks: v.Blocks, Published: v.Published}
}

func kindText(v repo.VersionInfo) string {
	s := v.Kind
	if v.Reason != "" && v.Reason != v.Kind {
		s += "(" + v.Reason + ")"
	}
	if v.RestoredFrom != "" {
		s += " from " + v.RestoredFrom
	}
	if v.Published {
		s += " [published]"
	}
	return s
}

var cmdLog = withBackend(1, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b backend) error {
	vs, err := b.Log(c.Context, a[0], c.Int("limit"))
	if err != nil {
		return err
	}
	if format == "json" {
		out := make([]versionView, len(vs))
		for i, v := range vs {
			out[i] = viewOf(v)
		}
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termText(v.Label), v.Hash.Short(), fmtTime(v.Time), termText(v.Author), termText(kindText(v)), termText(v.Message))
	}
	return tw.Flush()
})

var cmdShow = withBackend(1, []string{"json", "md", "text"}, func(c *cli.Context, a []string, format string, b backend) error {
	doc, label := repo.ParseRef(a[0])
	s, err := b.Show(c.Context, doc, label)
	if err != nil {
		return err
	}
	w := c.App.Writer
	switch format {
	case "json":
		_, err = fmt.Fprintf(w, "%s\n", flowdoc.CanonicalJSON(s.Body))
	case "md":
		_, err = io.WriteString(w, flowdoc.RenderArticleMarkdown(flowdoc.Article{Body: s.Body, Attrs: s.Attrs}))
	default:
		_, err = io.WriteString(w, flowdoc.RenderText(s.Body))
	}
	return err
})

// cmdDiff compares two versions, or a version and the draft: `diff ID`
// is head against draft, `diff ID A` is A against draft, as git diff
// compares with the working tree.
func cmdDiff(c *cli.Context) error {
	a := c.Args().Slice()
	switch len(a) {
	case 1:
		a = append(a, "head", repo.DraftName)
	case 2:
		a = append(a, repo.DraftName)
	case 3:
	default:
		return usagef("%s takes 1 to 3 arguments: %s", cmdName(c), c.Command.ArgsUsage)
	}
	return withBackend(-1, []string{"text", "json"}, func(c *cli.Context, _ []string, format string, b backend) error {
		return diffLabels(c, a, format, b)
	})(c)
}

func diffLabels(c *cli.Context, a []string, format string, b backend) error {
	changes, err := b.Diff(c.Context, a[0], a[1], a[2])
	if err != nil {
		return err
	}
	if changes == nil {
		changes = []flowdoc.BlockChange{}
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]any{"from": a[1], "to": a[2], "changes": changes})
	}
	w := c.App.Writer
	if len(changes) == 0 {
		fmt.Fprintf(w, "no differences between %s and %s\n", a[1], a[2])
		return nil
	}
	printChanges(w, changes)
	return nil
}

// printChanges prints block changes as `diff` does: one line per block
// ("~ modified paragraph p1"), then its word diff, deletions in [-…-]
// and insertions in {+…+}.
func printChanges(w io.Writer, changes []flowdoc.BlockChange) {
	sign := map[flowdoc.ChangeKind]string{flowdoc.Added: "+", flowdoc.Deleted: "-", flowdoc.Modified: "~", flowdoc.Moved: ">"}
	for _, ch := range changes {
		moved := ""
		if ch.Moved && ch.Kind != flowdoc.Moved {
			moved = " (moved)"
		}
		fmt.Fprintf(w, "%s %s %s %s%s\n", sign[ch.Kind], ch.Kind, termText(string(ch.Type)), termText(ch.BlockID), moved)
		if len(ch.Words) > 0 {
			var sb strings.Builder
			for _, e := range ch.Words {
				switch e.Op {
				case "insert":
					sb.WriteString("{+" + e.Text + "+}")
				case "delete":
					sb.WriteString("[-" + e.Text + "-]")
				default:
					sb.WriteString(e.Text)
				}
			}
			fmt.Fprintf(w, "    %s\n", termText(sb.String()))
		}
	}
}

var cmdRestore = withBackend(2, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b backend) error {
	v, err := b.Restore(c.Context, a[0], a[1], c.String("block"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, viewOf(v))
	}
	if blk := c.String("block"); blk != "" {
		fmt.Fprintf(c.App.Writer, "restored block %s from %s as %s\n", blk, a[1], v.Label)
	} else {
		fmt.Fprintf(c.App.Writer, "restored %s as %s\n", a[1], v.Label)
	}
	return nil
})

// cmdBlocks lists the top-level blocks of a version, whose ids history,
// restore --block and the sync protocol take (a nested block is part of
// its parent).
var cmdBlocks = withBackend(1, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b backend) error {
	doc, label := repo.ParseRef(a[0])
	s, err := b.Show(c.Context, doc, label)
	if err != nil {
		return err
	}
	type view struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Text string `json:"text"`
	}
	out := make([]view, len(s.Body.Blocks))
	for i, blk := range s.Body.Blocks {
		out[i] = view{ID: blk.ID, Type: string(blk.Type), Text: firstWords(flowdoc.BlockText(blk), 60)}
	}
	if format == "json" {
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tTYPE\tTEXT")
	for _, v := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.ID, v.Type, v.Text)
	}
	return tw.Flush()
})

// firstWords is the start of text on one line: at most max characters,
// cut at a space when there is one near the end, with "…" when cut.
func firstWords(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) <= max {
		return text
	}
	cut := r[:max]
	if i := strings.LastIndexByte(string(cut), ' '); i > len(string(cut))*2/3 {
		return string(cut)[:i] + "…"
	}
	return string(cut) + "…"
}

var cmdHistory = withBackend(2, []string{"text", "json"}, func(c *cli.Context, a []string, format string, b backend) error {
	hs, err := b.History(c.Context, a[0], a[1])
	if err != nil {
		return err
	}
	type view struct {
		Label   string `json:"label"`
		Seq     uint64 `json:"seq"`
		Change  string `json:"change"`
		Content string `json:"content,omitempty"`
		Kind    string `json:"kind"`
		Author  string `json:"author"`
		Time    string `json:"time"`
	}
	// The revisions come oldest first; both outputs show them newest
	// first, as log does.
	out := make([]view, len(hs))
	for i, h := range hs {
		v := view{Label: h.Label, Seq: h.Seq, Kind: h.Kind, Author: h.Author, Time: fmtTime(h.Time)}
		switch {
		case h.Deleted:
			v.Change = "deleted"
		case i == 0 || hs[i-1].Deleted:
			v.Change, v.Content = "added", h.Content.String()
		default:
			v.Change, v.Content = "modified", h.Content.String()
		}
		out[len(hs)-1-i] = v
	}
	if format == "json" {
		return printJSON(c.App.Writer, out)
	}
	tw := newTable(c.App.Writer)
	for _, v := range out {
		short := v.Content
		if len(short) > 12 {
			short = short[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termText(v.Label), v.Change, short, v.Time, termText(v.Author), termText(v.Kind))
	}
	return tw.Flush()
})

var cmdFsck = withBackend(0, []string{"text", "json"}, func(c *cli.Context, _ []string, format string, b backend) error {
	m := newMeter(c, "fsck")
	rep, err := b.Fsck(c.Context, m.Progress)
	m.Done()
	if err != nil {
		return err
	}
	if format == "json" {
		if err := printJSON(c.App.Writer, rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			where := p.Doc
			if p.Object != "" {
				where += " " + p.Object
			}
			fmt.Fprintf(c.App.Writer, "problem: %s: %s\n", termText(strings.TrimSpace(where)), termText(p.Problem))
		}
		fmt.Fprintf(c.App.Writer, "%s, %s, %s checked: %s\n", plural(rep.Objects, "object"), plural(rep.Docs, "document"),
			plural(rep.Versions, "version"), plural(len(rep.Problems), "problem"))
	}
	if !rep.OK {
		if rep.Damaged {
			return damagedStore(rep)
		}
		return errs.E(errs.Corrupt, "fsck found %s; `folio reindex ID` rebuilds a document's indexes, and a backup (`folio backup restore`) brings back lost objects", plural(len(rep.Problems), "problem"))
	}
	return nil
})

// damagedStore is fsck's error for a store whose table files are damaged:
// which documents it affects and how to get them back.
func damagedStore(rep repo.FsckReport) error {
	var docs []string
	seen := map[string]bool{}
	for _, p := range rep.Problems {
		if p.Doc != "" && !seen[p.Doc] {
			seen[p.Doc] = true
			docs = append(docs, p.Doc)
		}
	}
	affected := "no document's history is affected (only objects no document reaches)"
	restore := "folio --data NEWDIR backup restore --from MIRROR"
	if len(docs) > 0 {
		affected = fmt.Sprintf("%s affected: %s", plural(len(docs), "document"), strings.Join(docs, ", "))
		if len(docs) <= 10 {
			restore += " --doc " + strings.Join(docs, " --doc ")
		}
	}
	return errs.E(errs.Corrupt, "fsck found %s: a table file of the store is damaged (a disk or file system fault), %s; "+
		"bring them back from a backup mirror (`folio backup pull`): stop the daemon, `folio --data NEWDIR init`, `%s`, check it with `folio --data NEWDIR fsck` and serve NEWDIR; "+
		"keep the damaged directory until then (what still reads can be exported: `folio export git --to DIR`)",
		plural(len(rep.Problems), "problem"), affected, restore)
}

func cmdReindex(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	if url := serverURL(c); url != "" {
		return usagef("folio reindex rewrites a document's indexes and draft on the data directory and does not go through a daemon (--server / FOLIO_SERVER %s): "+
			"stop the daemon and run `folio --data DIR reindex %s`", url, a[0])
	}
	r, err := openRepo(c)
	if err != nil {
		return err
	}
	defer r.Close()
	owner, err := userID(c.Context, r, actor())
	if err != nil {
		return err
	}
	m := newMeter(c, "reindex")
	err = r.ReindexWith(c.Context, a[0], owner, m.Progress)
	m.Done()
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]string{"doc": a[0]})
	}
	fmt.Fprintf(c.App.Writer, "reindexed %s\n", a[0])
	return nil
}

// parseAge reads a duration with an optional day unit: "14d", "36h", "0".
func parseAge(s string) (time.Duration, error) {
	if s == "0" {
		return -1, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(d, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != d {
			return 0, usagef("--prune %q: want a number of days like 14d, or a duration like 36h", s)
		}
		if n == 0 {
			return -1, nil
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--prune %q: want a number of days like 14d, or a duration like 36h", s)
	}
	if d == 0 {
		return -1, nil
	}
	return d, nil
}

var cmdGC = withBackend(0, []string{"text", "json"}, func(c *cli.Context, _ []string, format string, b backend) error {
	prune, err := parseAge(c.String("prune"))
	if err != nil {
		return err
	}
	m := newMeter(c, "gc")
	rep, err := b.GC(c.Context, repo.GCOptions{Prune: prune, DryRun: c.Bool("dry-run"), Progress: m.Progress})
	m.Done()
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, rep)
	}
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	if rep.Purged > 0 {
		purge := "purged"
		if rep.DryRun {
			purge = "would purge"
		}
		fmt.Fprintf(c.App.Writer, "%s %s deleted longer ago than --prune\n", purge, plural(rep.Purged, "document"))
	}
	fmt.Fprintf(c.App.Writer, "%s, %d reachable; %s %d (%s)\n", plural(rep.Objects, "object"), rep.Reachable, verb, rep.Removed, size(rep.Bytes))
	return nil
})

// withBackend makes the action of a verb that takes n arguments and one
// of formats and works on a backend (direct or --server): see verb.
func withBackend(n int, formats []string, fn func(c *cli.Context, a []string, format string, b backend) error) cli.ActionFunc {
	return verb(openBackend, n, formats, fn)
}

// verb makes the action of a verb that takes n arguments and one of
// formats (none: the verb has no --format) and works on what open opens:
// it checks both, opens, and closes afterwards.
func verb[B interface{ Close() error }](open func(*cli.Context) (B, error), n int, formats []string, fn func(c *cli.Context, a []string, format string, b B) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		var a []string
		var err error
		if n >= 0 { // n < 0: the caller checked the arguments
			if a, err = args(c, n); err != nil {
				return err
			}
		}
		format := ""
		if len(formats) > 0 {
			if format, err = checkFormat(c, formats...); err != nil {
				return err
			}
		}
		b, err := open(c)
		if err != nil {
			return err
		}
		defer b.Close()
		return fn(c, a, format, b)
	}
}
