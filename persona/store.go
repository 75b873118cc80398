package persona

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/learning"
	"github.com/foliodev/folio/persona/memory"
	"github.com/foliodev/folio/persona/source"
	"github.com/foliodev/folio/persona/style"
)

// Tables under kv.PrefixTable (docs/objects.md has the values).
const (
	tablePersona   = "pers"        // <persona>
	tableUser      = "persuser"    // <user> 0x00 <persona>
	tableVersion   = "persver"     // <persona> 0x00 <seq 8>
	tableGenKey    = "persgen"     // <persona> 0x00 <idempotency key>
	tableStyle     = "persstyle"   // <profile id>
	tableLearning  = "perslearn"   // <snapshot id>
	tableMemory    = "persmem"     // <snapshot id>
	tableMemItem   = "persmemitem" // <snapshot id> 0x00 <item key>
	tableMemByPers = "persmemp"    // <persona> 0x00 <snapshot id>
	tableObs       = "persobs"     // <user> 0x00 <version hex> 0x00 <extractor>
	tableActivate  = "persact"     // <persona> 0x00 <n 8>
)

func personaKey(id string) []byte           { return kv.TableKey(tablePersona, id) }
func personaUserPrefix(user string) []byte  { return append(kv.TableKey(tableUser, user), 0) }
func personaUserKey(user, id string) []byte { return kv.TableKey(tableUser, user, id) }
func versionPrefix(id string) []byte        { return append(kv.TableKey(tableVersion, id), 0) }
func versionKey(id string, seq int) []byte  { return kv.Uint64(versionPrefix(id), uint64(seq)) }
func activatePrefix(id string) []byte       { return append(kv.TableKey(tableActivate, id), 0) }
func activateKey(id string, n int) []byte   { return kv.Uint64(activatePrefix(id), uint64(n)) }
func genKey(id, key string) []byte          { return kv.TableKey(tableGenKey, id, key) }
func styleKey(id string) []byte             { return kv.TableKey(tableStyle, id) }
func learningKey(id string) []byte          { return kv.TableKey(tableLearning, id) }
func memoryKey(id string) []byte            { return kv.TableKey(tableMemory, id) }
func memItemPrefix(id string) []byte        { return append(kv.TableKey(tableMemItem, id), 0) }
func memItemKey(id, item string) []byte     { return kv.TableKey(tableMemItem, id, item) }
func memByPersonaKey(p, id string) []byte   { return kv.TableKey(tableMemByPers, p, id) }
func obsKey(user string, v source.VersionID) []byte {
	return kv.TableKey(tableObs, user, v.String(), memory.ExtractorVersion)
}

// Errors of the data layer.
var (
	// ErrNoPersona: a learning or memory snapshot that belongs to no
	// persona is refused before anything is written.
	ErrNoPersona error = errs.E(errs.Invalid, "persona: a snapshot must belong to a persona")
)

// contentID is prefix + 24 hex digits of the SHA-256 of kind and v's
// canonical encoding.
func contentID(prefix, kind string, v any) (string, error) {
	b, err := kv.Marshal(v)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append([]byte("folio/"+kind+"\x00"), b...))
	return prefix + hex.EncodeToString(h[:12]), nil
}

// putStyle stages profile p (content-addressed) and returns its id.
func putStyle(b *kv.Batch, p style.Profile) (string, error) {
	id, err := contentID("sp", "style-profile", p)
	if err != nil {
		return "", err
	}
	return id, kv.SetRecord(b, styleKey(id), p)
}

// putLearning stages learning snapshot l; it refuses one without persona.
func putLearning(b *kv.Batch, l learning.Snapshot) (string, error) {
	if l.Persona == "" || l.User == "" {
		return "", ErrNoPersona
	}
	id, err := contentID("ls", "learning-snapshot", l)
	if err != nil {
		return "", err
	}
	return id, kv.SetRecord(b, learningKey(id), l)
}

// MemoryHead is a memory snapshot's record without its items.
type MemoryHead struct {
	ID        string       `json:"id" msgpack:"id"`
	User      string       `json:"user" msgpack:"user"`
	Persona   string       `json:"persona" msgpack:"persona"`
	Extractor string       `json:"extractor" msgpack:"extractor"`
	Sources   []source.Pin `json:"sources" msgpack:"sources"`
	Items     int          `json:"items" msgpack:"items"`
}

// putMemory stages memory snapshot m (head, items, the persona's index
// of its snapshots and the outbox entry for the search index) and
// returns its id. It refuses a snapshot without persona.
func putMemory(db *kv.DB, b *kv.Batch, m memory.Snapshot) (string, error) {
	if m.Persona == "" || m.User == "" {
		return "", ErrNoPersona
	}
	id, err := contentID("ms", "memory-snapshot", m)
	if err != nil {
		return "", err
	}
	head := MemoryHead{ID: id, User: m.User, Persona: m.Persona, Extractor: m.Extractor, Sources: m.Sources, Items: len(m.Items)}
	if err := kv.SetRecord(b, memoryKey(id), head); err != nil {
		return "", err
	}
	for _, it := range m.Items {
		if err := kv.SetRecord(b, memItemKey(id, it.Key), it); err != nil {
			return "", err
		}
	}
	if err := b.Set(memByPersonaKey(m.Persona, id), nil); err != nil {
		return "", err
	}
	return id, index.Enqueue(db, b, id)
}

// memorySource is the index.Source over the memory tables.
type memorySource struct{}

func (memorySource) Snapshot(r kv.Reader, id string, fn func(index.Doc) error) (bool, error) {
	var head MemoryHead
	ok, err := kv.GetRecord(r, memoryKey(id), &head)
	if err != nil || !ok {
		return false, err
	}
	p := memItemPrefix(id)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return false, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var item memory.Item
		if err := kv.Unmarshal(it.Value(), &item); err != nil {
			return false, errs.E(errs.Corrupt, "persona: decode memory item %q: %w", it.Key(), err)
		}
		if err := fn(indexDoc(head, item)); err != nil {
			return false, err
		}
	}
	return true, it.Error()
}

func indexDoc(head MemoryHead, it memory.Item) index.Doc {
	d := index.Doc{Key: it.Key, User: head.User, Persona: head.Persona, Snapshot: head.ID, Status: it.Status, Text: it.Text(),
		Confidence: it.Confidence, Evidence: len(it.Evidence), Chars: utf8.RuneCountInString(it.Statement)}
	if docs := it.Docs(); len(docs) == 1 {
		d.SoleDoc = docs[0]
	}
	return d
}

func (memorySource) Snapshots(r kv.Reader, fn func(string) error) error {
	p := kv.TableKey(tableMemory)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := fn(string(it.Key()[len(p):])); err != nil {
			return err
		}
	}
	return it.Error()
}

// observationSet is the memory layer's per-user extraction of one source
// version, reused by every persona and regeneration.
type observationSet struct {
	User         string               `msgpack:"user"`
	Pin          source.Pin           `msgpack:"pin"`
	Extractor    string               `msgpack:"extractor"`
	Observations []memory.Observation `msgpack:"obs"`
}
