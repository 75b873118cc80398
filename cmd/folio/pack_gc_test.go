package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/objstore/pack/packtest"
)

// TestImportWithConcurrentGC imports while garbage collections run in a
// loop on the same store: staged objects are unreachable until the heads
// move, and no collection may remove them. Afterwards fsck is clean.
func TestImportWithConcurrentGC(t *testing.T) {
	tmp := t.TempDir()
	srcDB, err := kv.Open(filepath.Join(tmp, "src"), kv.Options{Create: true, CacheSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srcDB.Close()
	src := pack.NewStores(srcDB)
	docs, versions := 80, 40 // a pack of several staging batches
	if testing.Short() {
		docs, versions = 8, 8
	}
	if err := packtest.New(srcDB, src.Objects, src.Refs, 3).Build(docs, versions); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := pack.Export(context.Background(), src, &buf, pack.ExportOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(tmp, "dst")
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := pack.Stores{DB: r.DB(), Objects: r.Objects(), Refs: r.Refs()}
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var gcs int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := r.GC(ctx, repo.GCOptions{Prune: -1})
			if err != nil && !errors.Is(err, repo.ErrGCRunning) {
				t.Errorf("gc: %v", err)
				return
			}
			gcs++
			time.Sleep(time.Millisecond)
		}
	}()
	var importErr error
	for i := 0; i < 2 && importErr == nil; i++ { // stream imports stage while reading; file imports verify first
		var rd io.Reader = bytes.NewReader(buf.Bytes())
		if i%2 == 0 {
			rd = struct{ io.Reader }{rd} // not seekable
		}
		_, importErr = pack.Import(ctx, s, rd, pack.ImportOptions{
			Reindex: func(ctx context.Context, doc string) error { return r.Reindex(ctx, doc, "ada") }})
	}
	close(stop)
	wg.Wait()
	if importErr != nil {
		t.Fatalf("import under gc: %v", importErr)
	}
	rep, err := r.Fsck(ctx, repo.FsckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Versions != docs*versions {
		t.Fatalf("fsck after import under gc (%d collections): ok=%v versions=%d problems=%v", gcs, rep.OK, rep.Versions, rep.Problems)
	}
	if gcs == 0 {
		t.Fatal("no collection ran during the imports")
	}
}
