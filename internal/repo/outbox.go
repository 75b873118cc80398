package repo

import (
	"context"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// OutboxDoc is the kind of the outbox entries (kv.PrefixOutbox) the
// repository writes: "the document named by the entry's id changed".
// Every change of a document's owner, deleted mark, head or draft puts
// one in the change's own batch, so a projection that applies the
// entries (package search) never misses a change, whatever the
// transport, and a crash between the commit and the projection's update
// leaves the entry for the next start. docs/objects.md §9 describes them.
const OutboxDoc = "repo.doc"

// OutboxStream is the hub stream notified after every commit that wrote
// an OutboxDoc entry (no events are appended to it): an applier watches
// it (WatchEvents) to apply the entry at once instead of at its next
// poll.
const OutboxStream = "outbox:repo.doc"

// OutboxEntry is the value of an outbox entry, a msgpack map shared by
// every kind: k the kind, id what changed.
type OutboxEntry struct {
	Kind string `msgpack:"k"`
	ID   string `msgpack:"id"`
}

// EnqueueDoc adds to b an OutboxDoc entry for doc; b must hold the
// change, so that both commit together. The repository's own changes
// do it; a package above that changes what a projection of doc reads
// (publishing: the published version, the visibility) does it in its
// batch too, and calls OutboxCommitted after the commit.
func (r *Repo) EnqueueDoc(b *kv.Batch, doc string) error {
	k, err := r.db.OutboxKey()
	if err != nil {
		return err
	}
	v, err := kv.Marshal(OutboxEntry{Kind: OutboxDoc, ID: doc})
	if err != nil {
		return err
	}
	return b.Set(k, v)
}

// OutboxCommitted wakes the appliers after a batch holding OutboxDoc
// entries committed.
func (r *Repo) OutboxCommitted() { r.hub.Notify(OutboxStream) }

// DocChange is a pending OutboxDoc entry: its sequence number in the
// outbox and the document it names.
type DocChange struct {
	Seq uint64
	Doc string
}

// DocChanges lists the pending OutboxDoc entries, oldest first (other
// kinds are other indexes'). An entry stays until AckDocChanges deletes
// it.
func (r *Repo) DocChanges(ctx context.Context) ([]DocChange, error) {
	p := []byte(kv.PrefixOutbox)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []DocChange
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		if len(it.Key()) != len(p)+8 {
			continue
		}
		var e OutboxEntry
		if err := kv.Unmarshal(it.Value(), &e); err != nil {
			return nil, errs.E(errs.Corrupt, "outbox entry %x: %w", it.Key(), err)
		}
		if e.Kind == OutboxDoc {
			out = append(out, DocChange{Seq: kv.ParseUint64(it.Key()), Doc: e.ID})
		}
	}
	return out, it.Error()
}

// AckDocChanges deletes the entries cs (from DocChanges) once the
// projection that applied them has their changes durably. The delete is
// not synced: a crash may bring entries back, and applying one twice is
// harmless.
func (r *Repo) AckDocChanges(ctx context.Context, cs []DocChange) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if len(cs) == 0 {
		return nil
	}
	b := r.db.NewBatch()
	defer b.Close()
	for _, c := range cs {
		if err := b.Delete(kv.Uint64([]byte(kv.PrefixOutbox), c.Seq)); err != nil {
			return err
		}
	}
	return r.db.Apply(b, kv.NoSync)
}
