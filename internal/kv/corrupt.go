package kv

import (
	cerrors "github.com/cockroachdb/errors"
	"github.com/cockroachdb/pebble"
)

// IsCorruption reports whether err is the engine's report of a damaged
// file (a checksum mismatch, a truncated table). Pebble marks those with
// cockroachdb/errors, which the standard errors.Is does not see through.
func IsCorruption(err error) bool {
	return cerrors.Is(err, pebble.ErrCorruption)
}
