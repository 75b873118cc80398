package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:  "backup",
		Usage: "keep an incremental mirror of a daemon's store, and restore from it",
		Subcommands: []*cli.Command{
			{
				Name:      "pull",
				Usage:     "bring a local mirror store up to date with a running daemon (only what is new is transferred)",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "to", Required: true, Usage: "the mirror's data directory (created on first pull)"},
					formatFlag("text", "text", "json"),
				},
				Action: cmdBackupPull,
			},
			{
				Name:      "restore",
				Usage:     "bring a whole store, or one document, back from a mirror into the data directory",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "from", Required: true, Usage: "the mirror's data directory"},
					&cli.StringSliceFlag{Name: "doc", Usage: "restore only this document (repeat)"},
					formatFlag("text", "text", "json"),
				},
				Action: cmdBackupRestore,
			},
		},
	})
}

// incomingDir holds a pull's pack while it downloads, inside the mirror.
const incomingDir = "incoming"

func cmdBackupPull(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	base := inherited(c, "server")
	if base == "" {
		base = os.Getenv("FOLIO_SERVER")
	}
	if base == "" {
		return usagef("folio backup pull needs the daemon: --server URL (or FOLIO_SERVER) and an admin's token or a backup token (--token / FOLIO_TOKEN)")
	}
	rm, err := dialRemote(base, c.String("token"))
	if err != nil {
		return err
	}
	defer rm.Close()
	dir := c.String("to")
	if err := repo.Init(dir); err != nil {
		return storeError(dir, err)
	}
	r, err := openStore(c.Context, dir, repo.Options{KV: kv.Options{CacheSize: pack.CacheSize(dir)}})
	if err != nil {
		return storeError(dir, err)
	}
	defer r.Close()
	s := pack.Stores{DB: r.DB(), Objects: r.Objects(), Refs: r.Refs()}

	// What the mirror has: its document heads, as a have-file.
	vals, names, err := s.Refs.List(pack.DocPrefix)
	if err != nil {
		return err
	}
	var haves bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&haves, "%s %s\n", vals[n], n)
	}
	// And its assets: a version's contents name them, but the daemon marks
	// the haves' contents without reading them, so it would send again an
	// asset a new block names (a caption edited) that the mirror holds.
	assets, err := r.ListAssets(c.Context)
	if err != nil {
		return err
	}
	for _, id := range assets {
		fmt.Fprintf(&haves, "%s asset\n", id)
	}

	// Download into the mirror, then import from the file: the import
	// verifies the whole pack before anything of it is written, and an
	// interrupted download leaves only a file the next pull removes.
	in := filepath.Join(dir, incomingDir)
	if err := os.RemoveAll(in); err != nil {
		return err
	}
	if err := os.MkdirAll(in, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(in)
	start := time.Now()
	m := newMeter(c, "backup pull")
	path, n, err := downloadPack(c.Context, rm, &haves, in, m)
	if err != nil {
		m.Done()
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		m.Done()
		return err
	}
	defer f.Close()
	res, err := pack.Import(c.Context, s, f, pack.ImportOptions{
		Message:  "backup pull " + rm.base,
		Index:    indexWith(c.Context, r),
		Progress: m.Progress,
	})
	m.Done()
	if err != nil {
		return packError("pulled pack", err)
	}
	moved := 0
	for _, ref := range res.Refs {
		if ref.Action == pack.RefCreated || ref.Action == pack.RefForwarded {
			moved++
		}
	}
	if len(res.Refs) == 0 {
		// A pack carries the head of every document the token may read,
		// moved or not: none means it reads none.
		notice(c, "the daemon at %s showed this token no documents, so the mirror holds none: "+
			"pull with an admin's token or an admin's backup token (`folio token add admin --kind backup`) to back up every document; "+
			"an author's backup token sees only that author's documents", rm.base)
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]any{
			"server": rm.base, "mirror": dir, "bytes": n, "objects": res.Objects, "new": res.New,
			"rawBytes": res.RawBytes, "docs": len(res.Refs), "moved": moved, "seconds": time.Since(start).Seconds(),
		})
	}
	fmt.Fprintf(c.App.Writer, "pulled %s from %s into %s: %s (%d new), %d of %s moved, in %.2fs\n",
		size(n), rm.base, dir, plural(int(res.Objects), "object"), res.New, moved, plural(len(res.Refs), "document head"), time.Since(start).Seconds())
	return nil
}

// downloadPack posts the have-file to the daemon's backup endpoint and
// streams the pack into a synced file in dir. It returns the file and the
// bytes transferred.
func downloadPack(ctx context.Context, rm *remote, haves io.Reader, dir string, m *meter) (string, int64, error) {
	f, err := os.CreateTemp(dir, "pull-*.fpack")
	if err != nil {
		return "", 0, err
	}
	cw := &countingWriter{w: f, m: m, what: "bytes received"}
	_, err = rm.stream(ctx, http.MethodPost, server.BackupPackPath, nil, haves, cw)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if cw.n == 0 {
			return "", 0, err
		}
		return "", cw.n, fmt.Errorf("backup pull: download interrupted after %s (run the pull again): %w", size(cw.n), err)
	}
	return f.Name(), cw.n, nil
}

func cmdBackupRestore(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	from, dir := c.String("from"), dataDir(c)
	if url := serverURL(c); url != "" {
		return usagef("folio backup restore writes into a local data directory and does not go through a daemon (--server / FOLIO_SERVER %s): "+
			"stop the daemon and restore into its directory with --data DIR, or restore into another directory with --data NEWDIR and serve that", url)
	}
	if filepath.Clean(from) == filepath.Clean(dir) {
		return usagef("--from and --data are the same directory")
	}
	src, err := openStore(c.Context, from, repo.Options{})
	if err != nil {
		return storeError(from, err)
	}
	defer src.Close()
	if err := repo.Init(dir); err != nil {
		return storeError(dir, err)
	}
	dst, err := openStore(c.Context, dir, repo.Options{KV: kv.Options{CacheSize: pack.CacheSize(dir)}})
	if err != nil {
		return storeError(dir, err)
	}
	defer dst.Close()
	srcS := pack.Stores{DB: src.DB(), Objects: src.Objects(), Refs: src.Refs()}
	dstS := pack.Stores{DB: dst.DB(), Objects: dst.Objects(), Refs: dst.Refs()}
	docs := c.StringSlice("doc")
	for _, d := range docs {
		if _, err := srcS.Refs.Get(pack.HeadRef(d)); err != nil {
			return errs.E(errs.NotFound, "document %q is not in the mirror %s; `folio --data %s doc list` shows what it holds", d, from, from)
		}
	}

	// Stream a pack from the mirror straight into the target; the import
	// verifies it before any head moves.
	m := newMeter(c, "backup restore")
	pr, pw := io.Pipe()
	exported := make(chan error, 1)
	go func() {
		_, err := pack.Export(c.Context, srcS, pw, pack.ExportOptions{Docs: docs})
		pw.CloseWithError(err)
		exported <- err
	}()
	res, err := pack.Import(c.Context, dstS, pr, pack.ImportOptions{
		Message:  "backup restore from " + from,
		Index:    indexWith(c.Context, dst),
		Progress: m.Progress,
	})
	m.Done()
	pr.CloseWithError(errors.New("import ended"))
	if eerr := <-exported; eerr != nil && err == nil {
		err = eerr
	}
	if err != nil {
		return packError("restore", err)
	}
	counts := map[pack.RefAction]int{}
	for _, r := range res.Refs {
		counts[r.Action]++
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]any{"from": from, "to": dir, "objects": res.Objects, "new": res.New, "refs": res.Refs})
	}
	fmt.Fprintf(c.App.Writer, "restored %s from %s into %s (%s, %d new): %d created, %d moved forward, %d unchanged, %d newer here and kept\n",
		plural(len(res.Refs), "document"), from, dir, plural(int(res.Objects), "object"), res.New, counts[pack.RefCreated], counts[pack.RefForwarded], counts[pack.RefUnchanged], counts[pack.RefAhead])
	return nil
}
