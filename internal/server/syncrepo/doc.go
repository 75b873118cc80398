// Package syncrepo adapts the content repository to the sync protocol:
// Docs implements syncproto.Docs over the content service (the
// repository's draft, checkpoint and restore operations, through the
// Content interface) and Events implements syncproto.Events over the
// persisted streams (through the Streams interface). It is the one place where repository types become
// wire types, so package syncproto imports neither the repository nor
// the store, and a change of a storage form never changes the protocol.
package syncrepo
