package stream

import (
	"testing"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
)

// recordsTarget decodes arbitrary bytes as a stored stream event: a
// damaged store gives errors, never a crash or an allocation the record's
// size does not pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	data, _ := kv.Marshal(map[string]string{"doc": "d1"})
	e, _ := kv.Marshal(Event{Type: "draft.updated", Time: 1767225600000, Data: data})
	seeds := append([][]byte{e}, boundedtest.Hostile("data")...)
	seeds = append(seeds, boundedtest.Hostile("type")...)
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[Event]("event", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }
