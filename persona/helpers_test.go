package persona

import (
	"log/slog"

	"github.com/foliodev/folio/persona/memory"
)

func memorySnapshot(user, persona string) memory.Snapshot {
	return memory.Snapshot{User: user, Persona: persona, Items: []memory.Item{{Key: "mi1", Statement: "x"}}}
}

var quiet = slog.New(slog.DiscardHandler)
