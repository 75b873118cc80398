// Package persona is Folio's writing persona: an author's personas, their
// immutable versions, and the service that generates a version and gives
// a persona run what it may use. A persona makes the assistant write like
// its author without inventing anything about them.
//
// A Persona (per user; a name and the chosen source documents) has
// Versions. A Version pins the source versions it was built from (doc
// id, version id, label, body fingerprint, visibility) and the component
// versions it activated together: a style profile (always; package
// style), a learning snapshot and a memory snapshot (when [persona]
// learning and memory are on; packages learning and memory). Requests
// pick a persona, never component ids.
//
// # Generation
//
// Service.Generate (the body of the durable "generate persona version"
// task; its Key is the task id, so a retried task returns the version
// the first attempt made) pins each source's current published version
// through Sources (package content implements it over the repository
// and publishing), refuses unpublished sources
// (source_unpublished) and private or password sources without [privacy]
// send_private_to_provider (private_source_blocked), leaves private
// sources out of memory without [privacy] private_memory (noted in the
// version), builds the enabled components in order from the pinned
// versions only (the style profile with a Describer's prose beside its
// evidence when one is set, UseDescriber; a failed description is a
// note, not a failure), checks that no source moved meanwhile (source_changed, a
// conflict) and activates everything in one synced batch. Any failure
// before that batch writes nothing, so the previous version stays active;
// a crash is the same.
//
// Generation runs as the durable task persona.generate on package
// task's runner (Register, StartGenerate): the task's id is the
// generation key, so an attempt that runs again after a crash finds the
// version the first one committed; a refusal (switches, sources, a
// conflict) fails the job at once, other errors retry. The job record
// (Job: state, attempts, the version made or the error's code) is written
// with the task's creation and in each of its transitions; WaitJob waits
// for it to end.
//
// Memory extraction is per user and per source version (table persobs):
// every persona of the user and every regeneration reuses it. Each
// persona gets its own memory snapshot; the data layer refuses a memory
// or learning snapshot without a persona (ErrNoPersona), and learning
// refuses observations of another persona. There is no global persona,
// preference or memory.
//
// # Runs
//
// Service.Context is what a persona run pins: the active version, the
// style profile (with [persona] style on), the active learning rules and
// the retrieved memory (Retrieve: the index query filters by exactly the
// user, persona and the snapshot the version pins; items whose only
// evidence is the article being written are excluded). The assistant
// calls it only for requests that chose a persona, so no persona means no
// style, learning or memory. The memory index (package index) is opened
// by the daemon and direct mode beside the store (<data>/index) with
// IndexSource. The writing assistant pins what Context returns in its
// persona runs and grounds their answers (package assistant).
//
// # Keys
//
// Under kv.PrefixTable, msgpack records (docs/objects.md has the table):
//
//	t/pers/<persona>                          persona: user, name, sources, active version seq, version count
//	t/persuser/<user>\x00<persona>            empty: a user's personas
//	t/persver/<persona>\x00<seq 8>            version (immutable)
//	t/persgen/<persona>\x00<key>              seq of the version a generation key made
//	t/persstyle/<profile id>                  style profile (immutable, id = sp + hash of its content)
//	t/perslearn/<snapshot id>                 learning snapshot (immutable, ls + hash)
//	t/persmem/<snapshot id>                   memory snapshot head (immutable, ms + hash)
//	t/persmemitem/<snapshot id>\x00<item key> memory item (immutable)
//	t/persmemp/<persona>\x00<snapshot id>     empty: a persona's memory snapshots
//	t/persjob/<task id>                       generation job (follows its task)
//	t/persobs/<user>\x00<version hex>\x00<extractor> the memory observations of one source version
//	x/<seq 8>                                 {k: "persona.memory", id: <snapshot id>}: index outbox
//
// # Errors
//
// Made with package errs; the specific codes are persona_disabled,
// persona_not_generated, source_unpublished, private_source_blocked and
// source_changed (the Code constants); a missing or foreign persona is
// not_found.
package persona
