package kv_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/kvtest"
)

// The engine contract, on every engine.

func TestEnginePebble(t *testing.T) {
	kvtest.Run(t, func(tb testing.TB, dir string) *kv.DB {
		db, err := kv.Open(dir, kv.Options{Create: true, MinFree: -1})
		if err != nil {
			tb.Fatal(err)
		}
		return db
	})
}

func TestEngineMemory(t *testing.T) {
	var mu sync.Mutex
	fss := map[string]kv.FS{} // one filesystem per store, so a reopen finds it
	kvtest.Run(t, func(tb testing.TB, dir string) *kv.DB {
		mu.Lock()
		fs := fss[dir]
		if fs == nil {
			fs = kv.NewMemFS()
			fss[dir] = fs
		}
		mu.Unlock()
		db, err := kv.Open(dir, kv.Options{Engine: kv.EngineMemory, FS: fs})
		if err != nil {
			tb.Fatal(err)
		}
		return db
	})
}

// The crash test runs on the in-memory engine over a strict filesystem
// (only synced bytes survive), the same Pebble code as on disk; the disk
// engine's crash test kills a real writer process (TestCrashSafety).
func TestEngineCrash(t *testing.T) {
	kvtest.Crash(t, func(tb testing.TB, fs kv.FS) *kv.DB {
		db, err := kv.Open("crash", kv.Options{Engine: kv.EngineMemory, FS: fs})
		if err != nil {
			tb.Fatal(err)
		}
		return db
	})
}

func TestUnknownEngine(t *testing.T) {
	_, err := kv.Open(t.TempDir(), kv.Options{Engine: "postgress"})
	if err == nil || !strings.Contains(err.Error(), `"postgress"`) {
		t.Fatalf("Open with an unknown engine: %v", err)
	}
}
