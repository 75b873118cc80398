package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:  "asset",
		Usage: "store images and files in the repository, and read them back",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "store FILE as an asset and print its folio-asset: URL (for a media or file block's src)",
				ArgsUsage: "FILE",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "the file name offered on download (default: FILE's)"},
					formatFlag("text", "text", "json"),
				},
				Action: cmdAssetAdd,
			},
			{
				Name:      "get",
				Usage:     "write the asset HASH (or folio-asset:HASH) to standard output or --output",
				ArgsUsage: "HASH",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of standard output"},
				},
				Action: cmdAssetGet,
			},
		},
	})
}

// assetBackend stores and reads assets, on the data directory or through
// the daemon (the same answers and errors).
type assetBackend interface {
	// PutAsset stores data named name. forDoc, when set, is the document
	// the asset is for: in direct mode (which acts as an admin) the
	// upload is recorded for that document's owner, so that the owner's
	// document may name it; owner does the same for a document being
	// created for that user name.
	PutAsset(ctx context.Context, data []byte, name, forDoc, owner string) (repo.AssetInfo, error)
	GetAsset(ctx context.Context, id objstore.ID) ([]byte, repo.AssetInfo, error)
}

func cmdAssetAdd(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
	}
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	data, err := readAssetFile(a[0])
	if err != nil {
		return err
	}
	name := c.String("name")
	if name == "" {
		name = filepath.Base(a[0])
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	info, err := b.PutAsset(c.Context, data, name, "", "")
	if err != nil {
		return fmt.Errorf("%s: %w", a[0], err)
	}
	if format == "json" {
		return printJSON(c.App.Writer, info)
	}
	fmt.Fprintln(c.App.Writer, info.URL)
	return nil
}

func cmdAssetGet(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
	}
	h := strings.TrimPrefix(a[0], flowdoc.AssetScheme)
	id, err := objstore.ParseID(h)
	if err != nil {
		return usagef("%q is not an asset hash: give the 64 hex digits (or the folio-asset: URL) `folio asset add` printed", a[0])
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	data, _, err := b.GetAsset(c.Context, id)
	if err != nil {
		return err
	}
	return writeOutput(c, true, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// readAssetFile reads a file to store, refusing one larger than any
// asset may be before reading it.
func readAssetFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, errs.E(errs.Invalid, "read %s: %v", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, errs.E(errs.Invalid, "%s is not a regular file", path)
	}
	if st.Size() > objstore.MaxAsset {
		return nil, errs.E(errs.TooLarge, "%s is %d bytes; an asset is at most %d ([limits] asset_size)", path, st.Size(), objstore.MaxAsset)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.E(errs.Invalid, "read %s: %v", path, err)
	}
	return data, nil
}

func (l *localBackend) PutAsset(ctx context.Context, data []byte, name, forDoc, owner string) (repo.AssetInfo, error) {
	var user string
	var err error
	switch {
	case forDoc != "":
		user, err = l.r.DocOwner(forDoc)
	case owner != "":
		u, gerr := l.auth.GetUser(ctx, owner)
		user, err = u.ID, gerr
	default:
		user, err = userID(ctx, l.r, l.actor)
	}
	if err != nil {
		return repo.AssetInfo{}, err
	}
	return l.r.PutAsset(ctx, data, name, user)
}

func (l *localBackend) GetAsset(ctx context.Context, id objstore.ID) ([]byte, repo.AssetInfo, error) {
	a, info, err := l.r.Asset(ctx, id)
	if err != nil {
		return nil, repo.AssetInfo{}, err
	}
	return a.Data, info, nil
}

func (r *remote) PutAsset(ctx context.Context, data []byte, name, _, _ string) (repo.AssetInfo, error) {
	var q url.Values
	if name != "" {
		q = url.Values{"name": {name}}
	}
	resp, err := r.request(ctx, http.MethodPost, server.AssetsPath, q, strings.NewReader(string(data)), "application/octet-stream")
	if err != nil {
		return repo.AssetInfo{}, err
	}
	defer resp.Body.Close()
	var info repo.AssetInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return repo.AssetInfo{}, fmt.Errorf("the daemon at %s answered an upload with unexpected JSON: %v", r.base, err)
	}
	return info, nil
}

func (r *remote) GetAsset(ctx context.Context, id objstore.ID) ([]byte, repo.AssetInfo, error) {
	resp, err := r.request(ctx, http.MethodGet, server.AssetsPath+"/"+id.String(), nil, nil, "")
	if err != nil {
		return nil, repo.AssetInfo{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, objstore.MaxAsset+1))
	if err != nil {
		return nil, repo.AssetInfo{}, errs.E(errs.Unavailable, "read asset %s from %s: %v", id.Short(), r.base, err)
	}
	return data, repo.AssetInfo{Hash: id, MIME: resp.Header.Get("Content-Type"), Size: len(data)}, nil
}

// localImage is an image a Markdown file names by a relative path, read
// from beside the file while importing it and uploaded once the backend
// is open (its folio-asset: URL is known before: the hash of its bytes).
type localImage struct {
	path string // as the Markdown names it
	name string // file name
	data []byte
}

// markdownImages resolves the relative images of a Markdown file at
// mdPath: each must be a file inside the file's directory (no "..", no
// absolute path, no symlink out of it) of a type assets allow. It is
// flowdoc.ImportOptions.Image; what it refuses stays what the importer
// makes of it (a relative reference), with a note on stderr.
type markdownImages struct {
	c      *cli.Context
	mdPath string
	dir    string // the Markdown file's directory, symlinks resolved
	found  []localImage
	seen   map[string]string // path -> URL, each file read once
}

func newMarkdownImages(c *cli.Context, mdPath string) *markdownImages {
	dir, err := filepath.EvalSymlinks(filepath.Dir(mdPath))
	if err != nil {
		dir = filepath.Dir(mdPath)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	return &markdownImages{c: c, mdPath: mdPath, dir: dir, seen: map[string]string{}}
}

func (m *markdownImages) resolve(src string) string {
	if u, ok := m.seen[src]; ok {
		return u
	}
	u := m.load(src)
	m.seen[src] = u
	return u
}

func (m *markdownImages) load(src string) string {
	if i := strings.IndexAny(src, ":/?#"); i >= 0 && src[i] == ':' {
		return "" // a URL of another scheme: the importer reports it
	}
	rel := src
	if i := strings.IndexAny(rel, "?#"); i >= 0 {
		rel = rel[:i]
	}
	if p, err := url.PathUnescape(rel); err == nil {
		rel = p
	}
	keep := "kept as a relative reference"
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) {
		notice(m.c, "%s: image %s is an absolute path; only images beside the file (or below its directory) are imported; %s", m.mdPath, src, keep)
		return ""
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		notice(m.c, "%s: image %s is outside the file's directory; copy it beside the file to import it; %s", m.mdPath, src, keep)
		return ""
	}
	full := filepath.Join(m.dir, clean)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		notice(m.c, "%s: image %s not found beside the file; %s", m.mdPath, src, keep)
		return ""
	}
	if r, err := filepath.Rel(m.dir, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		notice(m.c, "%s: image %s leads outside the file's directory (a symbolic link); %s", m.mdPath, src, keep)
		return ""
	}
	data, err := readAssetFile(real)
	if err == nil {
		var a *objstore.Asset
		if a, err = objstore.NewAsset(data); err == nil {
			_, id, eerr := a.Encode()
			if eerr != nil {
				return ""
			}
			m.found = append(m.found, localImage{path: src, name: filepath.Base(real), data: data})
			return flowdoc.AssetURL(id.String())
		}
	}
	notice(m.c, "%s: image %s cannot be stored: %v; %s", m.mdPath, src, err, keep)
	return ""
}

// uploadImages stores the images a Markdown import found, for document
// forDoc (or a new one of owner), before the body naming them is saved.
func uploadImages(ctx context.Context, b backend, imgs []localImage, forDoc, owner string) error {
	for _, im := range imgs {
		if _, err := b.PutAsset(ctx, im.data, im.name, forDoc, owner); err != nil {
			return fmt.Errorf("image %s: %w", im.path, err)
		}
	}
	return nil
}
