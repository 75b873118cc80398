package pgkv_test

import (
	"context"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/kvtest"
	"github.com/foliodev/folio/internal/kv/pgkv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
)

// opener opens one database of c per store directory, so that reopening
// a directory reopens its store.
func opener(c *pgtest.Cluster) kvtest.Opener {
	var mu sync.Mutex
	dsns := map[string]string{}
	return func(tb testing.TB, dir string) *kv.DB {
		mu.Lock()
		dsn, ok := dsns[dir]
		if !ok {
			dsn = c.NewDatabase(tb)
			dsns[dir] = dsn
		}
		mu.Unlock()
		db, err := pgkv.Open(context.Background(), dir, dsn, pgkv.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		return db
	}
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, opener(pgtest.Start(t)))
}
