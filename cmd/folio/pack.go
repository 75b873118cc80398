package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/urfave/cli/v2"
)

func init() { extraCommands = append(extraCommands, packCommands()...) }

// packCommands are `folio pack …` and `folio export git`.
func packCommands() []*cli.Command {
	docFlag := &cli.StringSliceFlag{Name: "doc", Usage: "only this document `ID` (repeatable); default: every document"}
	outFlag := &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of standard output"}
	return []*cli.Command{
		{
			Name:  "pack",
			Usage: "export, import and verify object packs (backups)",
			Subcommands: []*cli.Command{
				{
					Name:      "export",
					Usage:     "write a pack of every object reachable from the chosen heads and not from the haves",
					ArgsUsage: " ",
					Flags: []cli.Flag{docFlag, outFlag,
						&cli.StringFlag{Name: "have", Usage: "`FILE` of version ids the receiver already has, one hex id per line (`folio pack heads` output works)"}},
					Action: packExport,
				},
				{
					Name:      "import",
					Usage:     "verify a pack, add its objects and move its heads forward",
					ArgsUsage: "FILE (or - for standard input)",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "into", Usage: "store the pack's heads under `backup/NAME` instead of moving document heads"},
						&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every ref and what happened to it"},
						formatFlag("text", "text", "json")},
					Action: packImport,
				},
				{
					Name:      "verify",
					Usage:     "check a pack's structure, every object's hash and its checksum without importing",
					ArgsUsage: "FILE (or - for standard input)",
					Flags:     []cli.Flag{formatFlag("text", "text", "json")},
					Action:    packVerify,
				},
				{
					Name:   "heads",
					Usage:  "print every document head and backup ref as `<version id> <ref>`: a have-file for the next export",
					Flags:  []cli.Flag{formatFlag("text", "text", "json")},
					Action: packHeads,
				},
			},
		},
		{
			Name:  "export",
			Usage: "export history in other formats",
			Subcommands: []*cli.Command{{
				Name:  "git",
				Usage: "write a `git fast-import` stream: one commit per version, docs/<slug-or-id>.md and .json",
				Description: "Into a repository: git init copy && folio export git --to copy && git -C copy log\n" +
					"As a stream: git init copy && folio export git | git -C copy fast-import\n" +
					"Every .json file is byte for byte what `folio show ID@LABEL --format json` prints.",
				Flags: []cli.Flag{docFlag, outFlag,
					&cli.StringFlag{Name: "to", Usage: "import into the git repository in `DIR` (git fast-import), on the branch its HEAD names unless --branch is given"},
					&cli.StringFlag{Name: "branch", Value: "refs/heads/main", Usage: "the git `REF` the commits go to (with --to: default the branch DIR's HEAD names)"}},
				Action: exportGit,
			}},
		},
	}
}

// packStores opens the data directory for `pack import`, with a block
// cache sized for a whole-store walk of a pack of packBytes
// (pack.CacheSizeFor); the pack functions use the repository's own object
// and ref stores, and reindex moved documents through it. Imports write
// into the directory, so they never go through a daemon.
func packStores(c *cli.Context, packBytes int64) (pack.Stores, *repo.Repo, func(), error) {
	dir := dataDir(c)
	if url := serverURL(c); url != "" {
		return pack.Stores{}, nil, nil, usagef("%s writes into a data directory and does not go through a daemon (--server / FOLIO_SERVER %s): "+
			"stop the daemon and run it with --data DIR, or import into another directory with --data NEWDIR", cmdName(c), url)
	}
	r, err := configuredStore(c, dir, repo.Options{KV: kv.Options{CacheSize: pack.CacheSizeFor(dir, packBytes)}})
	if err != nil {
		return pack.Stores{}, nil, nil, err
	}
	s := pack.Stores{DB: r.DB(), Objects: r.Objects(), Refs: r.Refs()}
	return s, r, func() { r.Close() }, nil
}

// openPackBackend opens the daemon or the data directory for a verb that
// walks the whole store (pack export, pack heads, export git).
func openPackBackend(c *cli.Context) (backend, error) {
	return openBackendWith(c, repo.Options{KV: kv.Options{CacheSize: pack.CacheSize(dataDir(c))}})
}

// packError names the pack a pack error is about; its kind says the exit
// code (a damaged or incomplete pack is invalid, a refused ref move a
// conflict).
func packError(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// writeOutput runs write against --output (temp file, sync, rename, sync
// the directory) or standard output, refusing to spill binary data on a
// terminal.
func writeOutput(c *cli.Context, binary bool, write func(io.Writer) error) error {
	path := c.String("output")
	if path == "" || path == "-" {
		if binary && isTerminal(c.App.Writer) {
			return usagef("refusing to write a binary pack to a terminal: redirect standard output or use --output FILE")
		}
		w := bufio.NewWriterSize(c.App.Writer, 1<<20)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return kv.SyncDir(dir)
}

func packExport(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	var haves []objstore.ID
	if hf := c.String("have"); hf != "" {
		f, err := os.Open(hf)
		if err != nil {
			return usagef("have-file: %v", err)
		}
		haves, err = pack.ReadHaves(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", hf, err)
		}
	}
	b, err := openPackBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	var st server.ExportStats
	m := newMeter(c, "pack export")
	err = writeOutput(c, true, func(w io.Writer) error {
		es, err := b.ExportPack(c.Context, c.StringSlice("doc"), haves, &countingWriter{w: w, m: m, what: "bytes written"})
		st = es
		return err
	})
	m.Done()
	if err != nil {
		return packError("pack export", err)
	}
	fmt.Fprintf(c.App.ErrWriter, "exported %s (%s of object data) and %s in a pack of %s\n",
		plural(int(st.Objects), "object"), size(int64(st.RawBytes)), plural(st.Heads, "head"), size(st.PackBytes))
	if st.UnknownHaves > 0 {
		notice(c, "%d of %s %s not in this store and %s ignored", st.UnknownHaves, plural(len(haves), "have"),
			were(st.UnknownHaves, "is", "are"), were(st.UnknownHaves, "was", "were"))
	}
	return nil
}

// openPackFile opens name, or standard input for "-".
func openPackFile(name string) (io.Reader, string, func(), error) {
	if name == "-" {
		return os.Stdin, "standard input", func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, "", nil, usagef("%v", err)
	}
	return f, name, func() { f.Close() }, nil
}

func packVerify(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	r, name, done, err := openPackFile(a[0])
	if err != nil {
		return err
	}
	defer done()
	res, err := pack.Verify(c.Context, r)
	if err != nil {
		return packError(name, err)
	}
	w := c.App.Writer
	if format == "json" {
		refs := res.Header.Refs
		if refs == nil {
			refs = []pack.Ref{}
		}
		return printJSON(w, map[string]any{"pack": name, "valid": true, "format": res.Header.Version, "packBytes": res.PackBytes,
			"objects": res.Objects, "rawBytes": res.RawBytes, "versions": res.Kinds[objstore.KindVersion], "txns": res.Kinds[objstore.KindTxn],
			"contents": res.Kinds[objstore.KindContent], "assets": res.Kinds[objstore.KindAsset], "heads": refs})
	}
	fmt.Fprintf(w, "%s: valid folio pack, format %d, %s\n", name, res.Header.Version, size(res.PackBytes))
	fmt.Fprintf(w, "  objects: %d (%s, %s, %s), %s of object data\n", res.Objects,
		plural(int(res.Kinds[objstore.KindVersion]), "version"), plural(int(res.Kinds[objstore.KindTxn]), "txn"),
		plural(int(res.Kinds[objstore.KindContent]), "content"), size(int64(res.RawBytes)))
	fmt.Fprintf(w, "  heads: %d\n", len(res.Header.Refs))
	for _, r := range res.Header.Refs {
		fmt.Fprintf(w, "    %s %s\n", r.ID, termText(r.Name))
	}
	return nil
}

func packImport(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	if url := serverURL(c); url != "" {
		_, _, _, err := packStores(c, 0) // the refusal
		return err
	}
	r, name, done, err := openPackFile(a[0])
	if err != nil {
		return err
	}
	defer done()
	var packBytes int64
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			packBytes = fi.Size()
		}
	}
	s, rp, closeDB, err := packStores(c, packBytes)
	if err != nil {
		return err
	}
	defer closeDB()
	m := newMeter(c, "pack import")
	o := pack.ImportOptions{Into: c.String("into"), Message: "pack import " + filepath.Base(name),
		Index: indexWith(c.Context, rp), Progress: m.Progress}
	res, err := pack.Import(c.Context, s, r, o)
	m.Done()
	if err != nil {
		return packError(name, err)
	}
	counts := map[pack.RefAction]int{}
	w := c.App.Writer
	for _, r := range res.Refs {
		counts[r.Action]++
		if c.Bool("verbose") && format != "json" {
			fmt.Fprintf(w, "  %-9s %s %s\n", r.Action, r.New.Short(), termText(r.Name))
		}
	}
	var parts []string
	for _, a := range []pack.RefAction{pack.RefCreated, pack.RefForwarded, pack.RefSet, pack.RefUnchanged, pack.RefAhead} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	if format == "json" {
		if res.Refs == nil {
			res.Refs = []pack.RefResult{}
		}
		if err := printJSON(w, map[string]any{"pack": name, "result": res}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "imported %s: %s (%d new, %s of object data); heads: %s\n",
			name, plural(int(res.Objects), "object"), res.New, size(int64(res.RawBytes)), strings.Join(parts, ", "))
	}
	if n := counts[pack.RefAhead]; n > 0 {
		notice(c, "%s in this store %s newer than the pack's and %s kept", plural(n, "head"), were(n, "is", "are"), were(n, "was", "were"))
	}
	if len(res.NotReindexed) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "warning: the indexes of %s were not rebuilt (%s); `folio log` may not show the new versions until they are (`folio reindex ID`)\n",
			plural(len(res.NotReindexed), "document"), strings.Join(res.NotReindexed, ", "))
	}
	return nil
}

// indexWith makes the pack.Indexer that indexes moved documents of r in
// the batch that moves their heads. A document new to the store belongs
// to the user FOLIO_USER names when that user exists, else to nobody
// until an admin gives it an owner (folio doc chown); the authors its
// versions record never decide.
func indexWith(ctx context.Context, r *repo.Repo) pack.Indexer {
	owner, ownerErr := userID(ctx, r, actor())
	return func(ctx context.Context, b *kv.Batch, doc string, head objstore.ID) error {
		if ownerErr != nil {
			return ownerErr
		}
		return r.IndexInto(ctx, b, doc, head, owner)
	}
}

func packHeads(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	b, err := openPackBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	refs, err := b.Heads(c.Context)
	if err != nil {
		return err
	}
	if format == "json" {
		if refs == nil {
			refs = []pack.Ref{}
		}
		return printJSON(c.App.Writer, refs) // sorted by name
	}
	lines := make([]string, len(refs))
	for i, r := range refs {
		lines[i] = r.ID.String() + " " + r.Name
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(c.App.Writer, l)
	}
	return nil
}

func exportGit(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	branch, err := pack.GitBranch(c.String("branch"))
	if err != nil {
		return usagef("--branch: %v", err)
	}
	if dir := c.String("to"); dir != "" {
		if c.IsSet("output") {
			return usagef("folio export git: --to imports into a repository, --output writes a stream: give one of them")
		}
		return exportGitTo(c, dir)
	}
	b, err := openPackBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	var st pack.GitStats
	m := newMeter(c, "export git")
	err = writeOutput(c, false, func(w io.Writer) error {
		var err error
		st, err = b.ExportGit(c.Context, pack.GitOptions{Docs: c.StringSlice("doc"), Branch: c.String("branch")},
			&countingWriter{w: w, m: m, what: "bytes written"})
		return err
	})
	m.Done()
	if err != nil {
		return packError("export git", err)
	}
	fmt.Fprintf(c.App.ErrWriter, "exported %s as %s on %s\n", plural(st.Docs, "document"), plural(st.Commits, "commit"), branch)
	return nil
}

// plural is "1 document", "2 documents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// were picks the singular or plural form of a verb for n.
func were(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// size is a byte count by its magnitude: bytes below a KiB, then KiB,
// MiB and GiB with one decimal.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
