package quota

import (
	"testing"
	"time"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
)

// recordsTarget decodes arbitrary bytes as the records this package keeps
// (daily counters, usage events, failure counts): a damaged store gives
// errors, never a crash or an allocation the record's size does not pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	c, _ := kv.Marshal(counters{Requests: 3, Tokens: 1200})
	ev, _ := kv.Marshal(Event{ID: "t1/1/1", Category: "writing", Provider: "local", Model: "m", Input: 10, Output: 5, Total: 15,
		Time: time.UnixMilli(1767225600000).UTC()})
	n, _ := kv.Marshal(int64(2))
	seeds := append([][]byte{c, ev, n}, boundedtest.Hostile("id")...)
	seeds = append(seeds, boundedtest.Hostile("time")...)
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[counters]("counters", kv.Unmarshal),
		boundedtest.Into[Event]("usage", kv.Unmarshal),
		boundedtest.Into[int64]("failures", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }
