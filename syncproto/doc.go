// Package syncproto is Folio's live sync protocol: the messages editors
// and readers exchange over one WebSocket at /v1/sync, their two codecs
// (subprotocol folio.v1.msgpack in binary frames, folio.v1.json in text
// frames), and the server side that serves them (Server, an
// http.Handler). docs/protocol.md is the specification; this package
// must stay true to it.
//
// The server reaches the rest of Folio through small consumer-side
// interfaces: Docs (drafts, checkpoints, restore), Events (persisted
// streams "doc:<id>", "run:<id>"), Authenticator and Access, and the
// assistants through Attrs and Assistant (attrs.go, assist.go). It never
// writes a body itself; every change goes through Docs or, for an
// accepted suggestion, the assistant's CommitChange. The wire types
// (Change, VersionInfo, DraftUpdated, the assistant's, ...) are the
// package's own: it imports neither the repository, the store nor an
// assistant (TestProtocolImportsNoStorage), and internal/server/syncrepo
// adapts the repository to Docs and Events.
//
// Invariants:
//   - A reply carries the id of the request it answers; events carry the
//     stream and its cursor (the event's sequence number in that stream).
//   - Events of one stream reach a connection in cursor order, each once.
//     A new event is read from the store once and encoded once per codec
//     for every caught-up subscription (subs.go); a replaying or lagging
//     subscription reads the store itself. Nothing is buffered per
//     connection beyond the bounded send queue, so a slow reader cannot
//     grow server memory: when the queue stays full the connection is
//     closed with CloseSlowConsumer and the client resumes from its last
//     cursor.
//   - A draft.ack is sent only after Docs.SaveDraft returned, that is after
//     the save is durable.
//   - Replies and events share one FIFO send queue, and a reply about a
//     document (draft.ack, draft.conflict, checkpoint.done, restore.done)
//     is queued only after every event of its stream stored before it
//     (sub.catchUp): an ack of seq S follows every draft.updated below S.
//   - A connection is served on a goroutine of its own after the upgrade,
//     over small buffers of ours (transport.go); its writer sends the
//     frames waiting in its queue together, in one write to the socket.
//   - A bad frame gets an error reply with a stable Code; the connection
//     stays usable. Decoding a frame is bounded (package bounded): every
//     declared length is checked against the frame's remaining bytes
//     before anything is allocated, what a frame decodes into is bounded
//     by its size, and nothing is decoded into interface values (stored
//     event data of unknown types passes through as bytes). Only
//     authentication, revocation, slow consumers, shutdown, a storage
//     failure (FailStop, CloseStorageFailed) and oversized frames close
//     it, each with its own close code.
package syncproto
