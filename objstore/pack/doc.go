// Package pack moves Folio objects and refs between stores as packs:
// single files (or streams) that carry a set of objects and the document
// heads that reach them, the way git moves packfiles.
//
// A pack is a header (magic "FOLIOPAK", format version, object count or
// Streamed, the refs it carries), chunks of entries (kind, id, length,
// canonical bytes; each chunk one zstd frame) and a trailer (end marker,
// object count, SHA-256 over every byte before it). docs/packs.md
// specifies the format byte by byte.
//
// Invariants:
//   - Reading needs memory bounded by MaxChunk whatever the pack's size,
//     and by what a pack holds rather than what its lengths claim; Reader
//     checks every object's hash as it goes and reports io.EOF only after
//     the trailer checksum and count verified. Verify and Import also
//     decode every entry (bounded): a crafted object is an invalid entry.
//   - Export writes objects in dependency order: every object comes after
//     the objects it references, except those reachable from the haves.
//   - Import moves no ref until every object was checked, the trailer
//     verified and every ref target is present; refs then move in one
//     synced batch, all or none. Document heads move only forward (or
//     into a backup/NAME namespace). Importing a pack twice changes
//     nothing the second time.
//   - ExportGit writes a deterministic `git fast-import` stream whose
//     .json files are byte for byte what `folio show ID@LABEL --format
//     json` prints.
package pack
