package refs_test

import (
	"testing"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// recordsTarget decodes arbitrary bytes as a reflog entry: a damaged store
// gives errors, never a crash or an allocation the record's size does not
// pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	e, _ := kv.Marshal(refs.Entry{Old: objstore.ID{1}, New: objstore.ID{2}, Time: 1767225600000, Message: "pack import"})
	seeds := append([][]byte{e}, boundedtest.Hostile("msg")...)
	seeds = append(seeds, boundedtest.Hostile("new")...)
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[refs.Entry]("reflog", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }
