package assistant

import (
	"crypto/rand"
	"encoding/base32"

	"github.com/foliodev/folio/internal/kv"
)

// Tables under kv.PrefixTable (see the package documentation for values).
const (
	tableSession    = "asess"    // <session>
	tableSessionDoc = "asessdoc" // <doc> 0x00 <user id> 0x00 <updated 8> 0x00 <session>
	tableSessionCur = "asesscur" // <doc> 0x00 <user id>: the current session's id
	tableMessage    = "amsg"     // <session> 0x00 <seq 8>
	tableRun        = "arun"     // <run>
	tableRunKey     = "arunkey"  // <doc> 0x00 <user id> 0x00 <idempotency key>
	tableSuggestion = "asug"     // <suggestion>
	tableSuggDoc    = "asugdoc"  // <doc> 0x00 <suggestion>
	tableSuggPend   = "asugpend" // <doc> 0x00 <suggestion>
	tableSuggBlk    = "asugblk"  // <doc> 0x00 <block> 0x00 <suggestion>: pending, watching the block
	tableSuggAll    = "asugall"  // <doc> 0x00 <suggestion>: pending and strict (whole document)
	tableProduced   = "aprod"    // <doc> 0x00 <block>
	tableObs        = "aobs"     // <suggestion> 0x00 <kind> 0x00 <block>
	tableObsPersona = "aobsp"    // <persona> 0x00 <suggestion> 0x00 <kind> 0x00 <block>
	tablePreset     = "apreset"  // <preset>
	tablePresetVer  = "apresetv" // <preset> 0x00 <number 8>
)

func sessionKey(id string) []byte { return kv.TableKey(tableSession, id) }
func sessionDocPrefix(doc, user string) []byte {
	return append(kv.TableKey(tableSessionDoc, doc, user), 0)
}
func sessionDocKey(doc, user string, updated int64, id string) []byte {
	k := kv.Uint64(sessionDocPrefix(doc, user), uint64(max(updated, 0)))
	return append(append(k, 0), id...)
}
func sessionCurKey(doc, user string) []byte { return kv.TableKey(tableSessionCur, doc, user) }
func messagePrefix(session string) []byte   { return append(kv.TableKey(tableMessage, session), 0) }
func messageKey(session string, seq uint64) []byte {
	return kv.Uint64(messagePrefix(session), seq)
}
func runKey(id string) []byte { return kv.TableKey(tableRun, id) }
func runIdemKey(doc, user, key string) []byte {
	return kv.TableKey(tableRunKey, doc, user, key)
}
func suggestionKey(id string) []byte         { return kv.TableKey(tableSuggestion, id) }
func suggDocPrefix(doc string) []byte        { return append(kv.TableKey(tableSuggDoc, doc), 0) }
func suggPendPrefix(doc string) []byte       { return append(kv.TableKey(tableSuggPend, doc), 0) }
func suggPendKey(doc, id string) []byte      { return kv.TableKey(tableSuggPend, doc, id) }
func suggBlkPrefix(doc, block string) []byte { return append(kv.TableKey(tableSuggBlk, doc, block), 0) }
func suggBlkKey(doc, block, id string) []byte {
	return kv.TableKey(tableSuggBlk, doc, block, id)
}
func suggAllPrefix(doc string) []byte        { return append(kv.TableKey(tableSuggAll, doc), 0) }
func suggAllKey(doc, id string) []byte       { return kv.TableKey(tableSuggAll, doc, id) }
func producedPrefix(doc string) []byte       { return append(kv.TableKey(tableProduced, doc), 0) }
func producedKey(doc, block string) []byte   { return kv.TableKey(tableProduced, doc, block) }
func obsPrefix(sugg string) []byte           { return append(kv.TableKey(tableObs, sugg), 0) }
func obsKey(sugg, kind, block string) []byte { return kv.TableKey(tableObs, sugg, kind, block) }
func obsPersonaPrefix(persona string) []byte { return append(kv.TableKey(tableObsPersona, persona), 0) }
func presetKey(id string) []byte             { return kv.TableKey(tablePreset, id) }
func presetVerPrefix(id string) []byte       { return append(kv.TableKey(tablePresetVer, id), 0) }
func presetVerKey(id string, n int) []byte   { return kv.Uint64(presetVerPrefix(id), uint64(n)) }
func streamRun(id string) string             { return "run:" + id }
func lastAfterZero(key []byte) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == 0 {
			return string(key[i+1:])
		}
	}
	return string(key)
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns prefix followed by 16 random base32 characters (80 bits).
func newID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return prefix + idEncoding.EncodeToString(b[:])
}

// validID reports whether id can be a key part: 1-64 of [a-z0-9_-].
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
