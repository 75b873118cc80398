package task

import (
	"testing"
	"time"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
)

// recordsTarget decodes arbitrary bytes as the records this package keeps
// (task, due index value, the runner's event data): a damaged store gives
// errors, never a crash or an allocation the record's size does not pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	now := time.UnixMilli(1767225600000).UTC()
	tk, _ := kv.Marshal(Task{ID: 1, Kind: "assist", User: "author-a", Payload: []byte{1, 2, 3}, State: Queued,
		Attempt: 1, MaxAttempts: 5, RunAt: now, CreatedAt: now, LastError: "timeout", LastSeq: 4})
	due, _ := kv.Marshal(dueValue{Kind: "assist", User: "author-a"})
	ev, _ := kv.Marshal(EventDetail{Kind: "assist", Attempt: 2, Error: "x", DelayMs: 10})
	seeds := append([][]byte{tk, due, ev}, boundedtest.Hostile("payload")...)
	seeds = append(seeds, boundedtest.Hostile("run_at")...)
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[Task]("task", kv.Unmarshal),
		boundedtest.Into[dueValue]("due", kv.Unmarshal),
		boundedtest.Into[EventDetail]("event", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }
