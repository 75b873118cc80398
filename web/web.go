package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
)

//go:embed dist
var dist embed.FS

// Files is the built editor: index.html, app.js, app.css and LICENSES at
// its root.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed directive guarantees dist exists
	}
	return sub
}

var (
	hashOnce sync.Once
	hashes   map[string]string
)

// Hash is the hex SHA-256 of the file name of Files (its first 16 digits),
// "" for a file that does not exist. index.html names app.js and app.css
// with ?v=<Hash>, and the server uses it as the ETag.
func Hash(name string) string {
	hashOnce.Do(func() {
		hashes = map[string]string{}
		files := Files()
		_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(files, p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			hashes[p] = hex.EncodeToString(sum[:])[:16]
			return nil
		})
	})
	return hashes[name]
}
