package repo

import (
	"context"
	"fmt"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/refs"
	"time"
)

// A deleted document is hidden, not gone: its record is marked (docRec
// Deleted) and every read and write answers as for a missing document,
// but its versions, draft, refs and indexes stay, so an admin can bring
// it back (UndeleteDoc). GC purges the documents deleted longer ago than
// its Prune: their records, indexes and refs go in one batch, and the
// objects only they reached are collected in the same run.

// DeletedDoc describes a deleted document (ListDeleted, DeleteDoc).
type DeletedDoc struct {
	DocInfo
	Deleted   time.Time `json:"deleted"` // UTC; RFC 3339 in JSON
	DeletedBy string    `json:"deletedBy"`
}

// DeleteDoc hides doc from every list and read (a soft delete) on behalf
// of actor; its history stays until GC purges it. Errors: a
// *NotFoundError for a missing or already deleted document.
func (r *Repo) DeleteDoc(ctx context.Context, doc, actor string) (DeletedDoc, error) {
	return r.setDeleted(ctx, doc, actor, true)
}

// UndeleteDoc brings back a document DeleteDoc hid, as it was. Errors: a
// *NotFoundError when no document doc exists (or it was purged), and
// errs.Conflict when it is not deleted.
func (r *Repo) UndeleteDoc(ctx context.Context, doc, actor string) (DeletedDoc, error) {
	return r.setDeleted(ctx, doc, actor, false)
}

func (r *Repo) setDeleted(ctx context.Context, doc, actor string, deleted bool) (DeletedDoc, error) {
	if err := ctxErr(ctx); err != nil {
		return DeletedDoc{}, err
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return DeletedDoc{}, err
	}
	defer release()
	d, err := r.readDoc(doc) // deleted ones too
	if err != nil {
		return DeletedDoc{}, err
	}
	switch {
	case deleted && d.Deleted != 0:
		return DeletedDoc{}, &NotFoundError{What: "document", Name: doc}
	case !deleted && d.Deleted == 0:
		return DeletedDoc{}, errs.E(errs.Conflict, "document %s is not deleted; nothing to restore", doc)
	}
	out := DeletedDoc{Deleted: time.UnixMilli(d.Deleted).UTC(), DeletedBy: d.DeletedBy}
	if deleted {
		d.Deleted, d.DeletedBy = r.now().UnixMilli(), actor
		out.Deleted, out.DeletedBy = time.UnixMilli(d.Deleted).UTC(), actor
	} else {
		d.Deleted, d.DeletedBy = 0, ""
	}
	b := r.db.NewBatch()
	defer b.Close()
	if err := setRec(b, docKey(doc), d); err != nil {
		return DeletedDoc{}, err
	}
	if err := r.EnqueueDoc(b, doc); err != nil {
		return DeletedDoc{}, err
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		r.docs.forget(doc)
		return DeletedDoc{}, fmt.Errorf("delete %s: %w", doc, err)
	}
	r.docs.set(d)
	r.OutboxCommitted()
	kind := ChangeUndeleteDoc
	if deleted {
		kind = ChangeDeleteDoc
	}
	r.notify(Event{Doc: doc, Kind: kind, Actor: actor, Time: r.now().UnixMilli()})
	dr, err := r.readDraftHeader(doc)
	if err != nil {
		return DeletedDoc{}, err
	}
	if out.DocInfo, err = r.docInfo(d, dr); err != nil {
		return DeletedDoc{}, err
	}
	return out, nil
}

// ListDeleted lists the deleted documents, all when owner is "", else
// those of the user whose id is owner, in id order.
func (r *Repo) ListDeleted(ctx context.Context, owner string) ([]DeletedDoc, error) {
	var out []DeletedDoc
	err := r.eachDoc(ctx, func(d *docRec) error {
		if d.Deleted == 0 || owner != "" && d.Owner != owner {
			return nil
		}
		dr, err := r.readDraftHeader(d.ID)
		if err != nil {
			return err
		}
		info, err := r.docInfo(d, dr)
		if err != nil {
			return err
		}
		out = append(out, DeletedDoc{DocInfo: info, Deleted: time.UnixMilli(d.Deleted).UTC(), DeletedBy: d.DeletedBy})
		return nil
	})
	return out, err
}

// eachDoc calls fn with every document record, deleted ones included, in
// id order.
func (r *Repo) eachDoc(ctx context.Context, fn func(*docRec) error) error {
	p := kv.TableKey("doc")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			return err
		}
		var d docRec
		if err := kv.Unmarshal(it.Value(), &d); err != nil {
			return fmt.Errorf("decode document record %s: %w", it.Key(), err)
		}
		if err := fn(&d); err != nil {
			return err
		}
	}
	return it.Error()
}

// purgeDeleted removes, for GC, every document deleted before cutoff (Unix
// ms): its record, draft, log, labels, block and idempotency indexes, its
// refs and their reflogs, one batch a document. It returns the names of
// the refs it removed, whose reflogs then keep nothing, and the number of
// documents purged. With dryRun it removes nothing and reports the same.
func (r *Repo) purgeDeleted(ctx context.Context, cutoff int64, dryRun bool) (map[string]bool, int, error) {
	var docs []string
	if err := r.eachDoc(ctx, func(d *docRec) error {
		if d.Deleted != 0 && d.Deleted < cutoff {
			docs = append(docs, d.ID)
		}
		return nil
	}); err != nil {
		return nil, 0, err
	}
	gone := map[string]bool{}
	for _, doc := range docs {
		names, err := r.purgeDoc(ctx, doc, cutoff, dryRun)
		if err != nil {
			return nil, 0, fmt.Errorf("purge deleted document %s: %w", doc, err)
		}
		for _, n := range names {
			gone[n] = true
		}
	}
	return gone, len(docs), nil
}

func (r *Repo) purgeDoc(ctx context.Context, doc string, cutoff int64, dryRun bool) ([]string, error) {
	release, err := r.writing(ctx, doc)
	if err != nil {
		return nil, err
	}
	defer release()
	d, err := r.readDoc(doc)
	if err != nil || d.Deleted == 0 || d.Deleted >= cutoff { // undeleted or purged meanwhile
		return nil, nil
	}
	refPrefix := "docs/" + doc + "/"
	_, names, err := r.refs.List(refPrefix)
	if err != nil {
		return nil, err
	}
	if dryRun {
		return names, nil
	}
	b := r.db.NewBatch()
	defer b.Close()
	for _, k := range [][]byte{docKey(doc), draftKey(doc)} {
		if err := b.Delete(k); err != nil {
			return nil, err
		}
	}
	for _, table := range []string{"dblk", "dtomb", "vlog", "vlabel", "bidx", "idem"} {
		p := append(kv.TableKey(table, doc), 0)
		if err := b.DeleteRange(p, kv.PrefixEnd(p)); err != nil {
			return nil, err
		}
	}
	for _, n := range names {
		if err := b.Delete(refs.Key(n)); err != nil {
			return nil, err
		}
		p := append(append([]byte(kv.PrefixReflog), n...), 0)
		if err := b.DeleteRange(p, kv.PrefixEnd(p)); err != nil {
			return nil, err
		}
	}
	// The stream goes with the history its events describe (some are
	// stored by reference to the version log, eventref.go): every event
	// is trimmed, and its numbering kept, so that a cursor into it gets
	// ErrTrimmed rather than the events of a later document of that id.
	last, err := stream.Last(r.db, Stream(doc))
	if err != nil {
		return nil, err
	}
	if err := stream.Trim(b, Stream(doc), last+1); err != nil {
		return nil, err
	}
	if err := r.EnqueueDoc(b, doc); err != nil {
		return nil, err
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return nil, err
	}
	r.hub.Notify(Stream(doc)) // forgets the stream's tail
	r.docs.forget(doc)
	r.drafts.take(doc)
	r.OutboxCommitted()
	r.notify(Event{Doc: doc, Kind: ChangePurge, Time: r.now().UnixMilli()})
	return names, nil
}
