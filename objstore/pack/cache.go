package pack

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// Block cache bounds for whole-store pack operations (see CacheSize).
const (
	MinCache = 64 << 20
	MaxCache = 1 << 30
)

// CacheSize returns the Pebble block cache a whole-store export or import
// on data directory dir should open with: the size of the store's tables
// and a quarter more, between MinCache and MaxCache. Objects are keyed by
// hash, so a walk reads them in random order; when the tables do not fit
// the cache, nearly every read decompresses a whole block, and exports run
// several times slower (6× on the benchmark store). Pebble fills the cache
// as it reads, so a generous bound costs memory only when it is used.
func CacheSize(dir string) int64 { return CacheSizeFor(dir, 0) }

// CacheSizeFor is CacheSize for a store about to grow by importing a pack
// of packBytes: a pack holds objects at roughly a fifth of the size the
// store keeps them at, and an import looks up every object it adds.
func CacheSizeFor(dir string, packBytes int64) int64 {
	n := 5 * packBytes
	filepath.WalkDir(filepath.Join(dir, "store"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".sst") {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	n += n / 4
	return min(max(n, MinCache), MaxCache)
}
