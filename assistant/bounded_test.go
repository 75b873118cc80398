package assistant

import (
	"testing"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
)

// recordsTarget decodes arbitrary bytes as every record and task payload
// this package keeps: a damaged store gives errors, never a crash or an
// allocation the record's size does not pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	var seeds [][]byte
	for _, v := range []any{&Session{}, &Message{}, &Run{}, &Suggestion{}, &Preset{}, &PresetVersion{}, &Observation{}, &produced{}, &payload{}} {
		b, err := kv.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, key := range []string{"ops", "targets", "blocks", "drepairs", "rules", "sources"} {
		seeds = append(seeds, boundedtest.Hostile(key)...)
	}
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[Session]("session", kv.Unmarshal),
		boundedtest.Into[Message]("message", kv.Unmarshal),
		boundedtest.Into[Run]("run", kv.Unmarshal),
		boundedtest.Into[Suggestion]("suggestion", kv.Unmarshal),
		boundedtest.Into[Preset]("preset", kv.Unmarshal),
		boundedtest.Into[PresetVersion]("preset version", kv.Unmarshal),
		boundedtest.Into[Observation]("observation", kv.Unmarshal),
		boundedtest.Into[produced]("produced", kv.Unmarshal),
		boundedtest.Into[payload]("task payload", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

// TestRecordsMemory checks every corpus entry of FuzzRecords against the
// memory bound of package bounded; it also fails if a record type holds
// an interface, which kv.Unmarshal refuses to decode into.
func TestRecordsMemory(t *testing.T) {
	tg := recordsTarget(t)
	for i, s := range tg.Seeds[:9] {
		if err := kv.Unmarshal(s, []any{&Session{}, &Message{}, &Run{}, &Suggestion{}, &Preset{}, &PresetVersion{}, &Observation{}, &produced{}, &payload{}}[i]); err != nil {
			t.Errorf("%s: %v", tg.Decoders[i].Name, err)
		}
	}
	boundedtest.CheckMemory(t, tg)
}
