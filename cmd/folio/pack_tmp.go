package main

// TEMPORARY (packs branch): a stand-in for the repository's openRepoKV so
// that pack.go builds and its tests run before the real one is merged.
// Delete this file when cmd/folio gets openRepoKV.

import (
	"os"

	"github.com/foliodev/folio/internal/kv"
	"github.com/urfave/cli/v2"
)

func openRepoKV(c *cli.Context) (*kv.DB, func(), error) {
	dir := c.String("data")
	if dir == "" {
		dir = os.Getenv("FOLIO_DATA")
	}
	if dir == "" {
		dir = "./folio-data"
	}
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		return nil, nil, err
	}
	return db, func() { db.Close() }, nil
}
