// Package folio is the service floor of Folio (DESIGN.md §2): the plain
// types the services and the transports share, so that a transport
// encodes what a service says from its fields and never from its text.
//
// It holds, for now, the one conflict error (ConflictError): every stale
// baseline a service refuses — a draft save, a CommitChange — is a
// *ConflictError naming which check failed (Check) and the values it
// compared, and every transport (HTTP, WebSocket, the Go sync client)
// carries that same type. The package imports only the document model
// and the error taxonomy; the interfaces of the services are to join it.
package folio
