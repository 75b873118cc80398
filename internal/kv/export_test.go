package kv

import "github.com/cockroachdb/pebble"

// TableCompressions is the set of compressions the sstables of level use,
// for the tests of Options.Levels.
func TableCompressions(db *DB, level int) (map[string]bool, error) {
	tables, err := db.p.SSTables(pebble.WithProperties())
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, ti := range tables[level] {
		out[ti.Properties.CompressionName] = true
	}
	return out, nil
}

// AsyncFlush starts a flush without waiting for it (and without the
// health gate: the tests use it to make a background write fail).
func AsyncFlush(db *DB) error {
	_, err := db.p.AsyncFlush()
	return err
}
