// Package server is Folio's HTTP wiring: the JSON API under /v1 (see
// docs/api.md), /healthz, /metrics, and the mount point of the WebSocket
// sync server at /v1/sync.
//
// Every endpoint except /healthz, /metrics and the public API under
// /v1/public needs "Authorization: Bearer <token>" (package auth). An author sees and changes only their own
// documents: another user's document is answered exactly as a missing one
// (404, code not_found, the same message), so ids do not leak; for the same
// reason document ids are chosen by the server, and only admins may choose
// one. Ownership is by user id, never by name; admins reassign documents
// (PUT /v1/docs/{id}/owner, Chown). Admins see every document and manage
// users and tokens. Backup tokens may only read.
//
// Connections (Serve): a listener gate caps the connections open at once,
// in all and per client address, closing the oldest connection on which no
// request has authenticated to make room, and answering 503 only when
// every other connection has; headers, bodies and idle connections have
// deadlines; an answer given before a body was read closes its connection
// without reading the rest. Metric labels come from fixed sets, never from
// what clients send. docs/api.md, Connections, has the numbers.
//
// Errors are JSON objects {"error": {"code": ..., "kind": ..., "message":
// ...}}: the kind, the status and the code come from package errs (the
// table in docs/api.md), the same as the sync protocol's, and a client
// rebuilds the error with errs.Remote, as the CLI's --server mode does.
// Repository errors keep their fields (the latest label of a missing
// version, the problems of an invalid document, the server's side of a
// conflict). Internal errors are logged with the request id and answered
// without their details.
//
// The writing assistant's endpoints (assist.go) call assistant.Service
// (Config.Assistant) after the same document check: a run, suggestion or
// session on a document the caller does not reach — or another user's run
// or session — is answered exactly like a missing one. A run's events are
// served as JSON pages and as Server-Sent Events that resume with
// Last-Event-ID and end with the run, after MaxStream, or at shutdown.
//
// The read side of the CLI goes through here too: exports of packs, heads
// and git streams (statistics in HTTP trailers), the usage report and the
// AI check, which the daemon runs with its own configuration.
//
// Publishing (publish.go, public.go): the authenticated publish,
// unpublish, visibility, category and tag endpoints over package
// internal/repo/publish, and the public read API without a token. Every
// article a visitor may not read is answered by publicMissing, from the
// requested slug alone, so that private, password-protected, draft-only,
// unpublished and unknown articles are byte-identical 404s. Rendered
// representations are cached by version (renderCache, an LRU bounded by
// bytes); the publication check runs on every request before it.
// The attributes assistant (attrs.go) is served over HTTP and, through
// syncAttrs, over the socket, by one function (SuggestAttrs); the reading
// assistant (reading.go) streams Server-Sent Events. The writing
// assistant's endpoints (assist.go) are served over the socket too, by
// syncAssist (assist_sync.go), with the same service calls and the same
// rule of who reaches a run, suggestion or session; it also decides who
// may follow a run's stream "run:<id>".
//
// The content service is a dependency through an interface: the server
// holds a Content (content.go: small interfaces by use — Documents,
// Drafts, History, Maintenance, Bounds, Storage, Streams, Packs — that
// *repo.Repo implements), never the repository itself, and reaches the
// store's health, the event streams and the stores of exports through
// its methods, not through the store or the hub. Package syncrepo adapts
// the same Content to the sync protocol. TestContentOnlyThroughInterface
// keeps it so.
//
// Lifecycle: New wires the handlers; Serve runs on a listener; Shutdown
// stops accepting, lets requests in flight finish (a draft save that began
// is committed and answered), shuts the sync server down (it seals leave
// checkpoints and closes sockets with a resumable close code) and returns.
// The caller closes the repository afterwards.
//
// Storage: writes refused for lack of space answer 507 storage_full (reads
// go on; /healthz stays 200 and says "storage":"full"). Once the store has
// failed (Content.Failure), every request is answered 503 storage_failed and
// /healthz 503 with the cause; FailStop then closes the sync sessions with
// syncproto.CloseStorageFailed, and the caller exits after a grace period
// without closing the repository.
package server
