package persona

import (
	"testing"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/learning"
	"github.com/foliodev/folio/persona/memory"
	"github.com/foliodev/folio/persona/style"
)

// recordsTarget decodes arbitrary bytes as every record the persona
// tables and the memory outbox keep: a damaged store gives errors, never
// a crash or an allocation the record's size does not pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	var seeds [][]byte
	for _, v := range []any{&Persona{}, &Version{}, &style.Profile{}, &learning.Snapshot{}, &MemoryHead{}, &memory.Item{},
		&observationSet{}, &index.Entry{}} {
		b, err := kv.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, key := range []string{"sources", "dims", "rules", "ev", "items", "obs", "rel", "calibration"} {
		seeds = append(seeds, boundedtest.Hostile(key)...)
	}
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[Persona]("persona", kv.Unmarshal),
		boundedtest.Into[Version]("version", kv.Unmarshal),
		boundedtest.Into[style.Profile]("style profile", kv.Unmarshal),
		boundedtest.Into[learning.Snapshot]("learning snapshot", kv.Unmarshal),
		boundedtest.Into[MemoryHead]("memory head", kv.Unmarshal),
		boundedtest.Into[memory.Item]("memory item", kv.Unmarshal),
		boundedtest.Into[observationSet]("observations", kv.Unmarshal),
		boundedtest.Into[index.Entry]("outbox entry", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

// TestRecordsMemory checks every corpus entry of FuzzRecords against the
// memory bound of package bounded; it also fails if a record type holds
// an interface, which kv.Unmarshal refuses to decode into.
func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }
