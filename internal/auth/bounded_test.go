package auth

import (
	"testing"

	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
)

// recordsTarget decodes arbitrary bytes as the user and token records this
// package keeps: a damaged store gives errors, never a crash or an
// allocation the record's size does not pay for.
func recordsTarget(tb testing.TB) boundedtest.Target {
	u, _ := kv.Marshal(User{Name: "author-a", Role: RoleAdmin, Created: 1767225600000})
	tok, _ := kv.Marshal(Token{ID: "abc", User: "author-a", Kind: "login", Hash: [32]byte{1}, Created: 1767225600000})
	seeds := append([][]byte{u, tok}, boundedtest.Hostile("name")...)
	seeds = append(seeds, boundedtest.Hostile("hash")...)
	return boundedtest.Target{Name: "FuzzRecords", Seeds: seeds, Decoders: []boundedtest.Decoder{
		boundedtest.Into[User]("user", kv.Unmarshal),
		boundedtest.Into[Token]("token", kv.Unmarshal),
	}}
}

func FuzzRecords(f *testing.F) { boundedtest.Fuzz(f, recordsTarget(f)) }

func TestRecordsMemory(t *testing.T) { boundedtest.CheckMemory(t, recordsTarget(t)) }
