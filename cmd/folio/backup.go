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
	"strings"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
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

// backupPackPath is where a daemon serves packs to backup tools.
const backupPackPath = "/v1/backup/pack"

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
	server := strings.TrimRight(c.String("server"), "/")
	if server == "" {
		return exitf(exitUsage, "folio backup pull needs the daemon: --server URL (or FOLIO_SERVER) and an admin or backup token (--token / FOLIO_TOKEN)")
	}
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
	path, n, err := downloadPack(c.Context, server+backupPackPath, c.String("token"), &haves, in)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := pack.Import(c.Context, s, f, pack.ImportOptions{
		Message: "backup pull " + server,
		Index:   indexWith(c.Context, r),
	})
	if err != nil {
		return packError("pulled pack", err)
	}
	moved := 0
	for _, ref := range res.Refs {
		if ref.Action == pack.RefCreated || ref.Action == pack.RefForwarded {
			moved++
		}
	}
	if format == "json" {
		return printJSON(c.App.Writer, map[string]any{
			"server": server, "mirror": dir, "bytes": n, "objects": res.Objects, "new": res.New,
			"rawBytes": res.RawBytes, "docs": len(res.Refs), "moved": moved, "seconds": time.Since(start).Seconds(),
		})
	}
	fmt.Fprintf(c.App.Writer, "pulled %s from %s into %s: %d objects (%d new), %d of %d document heads moved, in %.2fs\n",
		size(n), server, dir, res.Objects, res.New, moved, len(res.Refs), time.Since(start).Seconds())
	return nil
}

// downloadPack posts the have-file and streams the pack into a synced
// file in dir. It returns the file and the bytes transferred.
func downloadPack(ctx context.Context, url, token string, haves io.Reader, dir string) (string, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, haves)
	if err != nil {
		return "", 0, exitf(exitUsage, "--server: %v", err)
	}
	req.Header.Set("Content-Type", "text/plain")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, exitf(exitUnavailable, "cannot reach the daemon at %s: %v; is `folio serve` running there?", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		msg := strings.TrimSpace(string(body))
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			return "", 0, exitf(exitUnavailable, "the daemon refused the token (%s): pass an admin or backup token with --token / FOLIO_TOKEN (`folio token add USER --kind backup`)", msg)
		case http.StatusForbidden:
			return "", 0, exitf(exitUnavailable, "this token may not pull backups (%s): use an admin or backup token", msg)
		}
		return "", 0, exitf(exitError, "backup pull: the daemon answered %s: %s", resp.Status, msg)
	}
	f, err := os.CreateTemp(dir, "pull-*.fpack")
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, resp.Body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", n, fmt.Errorf("backup pull: download interrupted after %s: %w; run the pull again", size(n), err)
	}
	return f.Name(), n, nil
}

func cmdBackupRestore(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	if c.String("server") != "" {
		return exitf(exitUsage, "folio backup restore writes into a data directory (--data); stop the daemon that holds it first")
	}
	from, dir := c.String("from"), c.String("data")
	if filepath.Clean(from) == filepath.Clean(dir) {
		return exitf(exitUsage, "--from and --data are the same directory")
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
			return exitf(exitNotFound, "document %q is not in the mirror %s", d, from)
		}
	}

	// Stream a pack from the mirror straight into the target; the import
	// verifies it before any head moves.
	pr, pw := io.Pipe()
	exported := make(chan error, 1)
	go func() {
		_, err := pack.Export(c.Context, srcS, pw, pack.ExportOptions{Docs: docs})
		pw.CloseWithError(err)
		exported <- err
	}()
	res, err := pack.Import(c.Context, dstS, pr, pack.ImportOptions{
		Message: "backup restore from " + from,
		Index:   indexWith(c.Context, dst),
	})
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
	fmt.Fprintf(c.App.Writer, "restored %d documents from %s into %s (%d objects, %d new): %d created, %d moved forward, %d unchanged, %d newer here and kept\n",
		len(res.Refs), from, dir, res.Objects, res.New, counts[pack.RefCreated], counts[pack.RefForwarded], counts[pack.RefUnchanged], counts[pack.RefAhead])
	return nil
}
