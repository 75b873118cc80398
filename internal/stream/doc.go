// Package stream holds Folio's persisted event streams ("doc:<id>",
// "run:<id>", "task:<id>") under the "e/" prefix.
//
// An event is appended inside the caller's Pebble batch, so it becomes
// durable exactly when the change it describes does. Sequence numbers are
// per stream, start at 1 and have no gaps: the appender holds the lock that
// serializes the stream's writers (the document lock for "doc:" streams,
// the task transition for "task:" streams) and asks Last for the next
// number inside that lock.
//
// Readers replay from the store after a cursor, then wait on the Hub. The
// Hub wakes them, and keeps the last few events its writers published of
// each stream so that live readers (Hub.Read, Hub.Last) are answered from
// memory; the store is always the source of truth, and the tail only ever
// holds a contiguous run of committed events (see Hub). Trim removes a
// stream's oldest events; a cursor older than the first retained event
// must resync (ErrTrimmed).
//
// An event may be stored by reference (AppendEventAs, Event.Ref): its
// stored data names what the payload is made of elsewhere in the store,
// and the stream's owner rebuilds it before anyone reads it (the
// document streams: repo.Repo.ReadEvents, docs/objects.md §4.2). The Hub
// only ever holds events as published.
package stream
