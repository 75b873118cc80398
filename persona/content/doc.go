// Package content is the persona's view of the content service and
// publishing: it implements persona.Sources over a repository and its
// published refs, and lists the reference candidates of a persona run
// (the author's other published articles).
//
// A persona learns only from what its author published. Current answers
// a document's published version (the version the ref
// docs/<id>/published names, with its body fingerprint and time) and its
// visibility as publishing records it now; a document of another user,
// or one that does not exist, is the same not_found. Load reads back a
// pinned version and checks that it is the version that was pinned
// (object id and fingerprint), so a persona version is built from exactly
// what was pinned.
//
// The privacy switches are not decided here: the persona service checks
// [privacy] send_private_to_provider and private_memory against the
// visibility Current reports every time a generation starts, and
// Candidates leaves private and password articles out unless the caller
// says the switch allows them.
package content
