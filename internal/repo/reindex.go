package repo

import (
	"context"
	"errors"
	"fmt"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// Reindex rebuilds every projection of document doc from its head ref and
// the versions it reaches: the document record, log and label indexes, the
// block-revision index, and a clean draft at the head. It is how a
// document restored from objects and refs (packs, backups) becomes usable,
// and how fsck problems in projections are repaired. A document that has
// a record keeps its owner; one without gets owner (a user id; "" leaves
// it to nobody until an admin reassigns it). The authors its versions
// record are history and never decide who owns it.
func (r *Repo) Reindex(ctx context.Context, doc, owner string) error {
	return r.ReindexWith(ctx, doc, owner, nil)
}

// ReindexWith is Reindex telling progress of the versions read and indexed.
func (r *Repo) ReindexWith(ctx context.Context, doc, owner string, progress Progress) error {
	release, err := r.writing(ctx, doc)
	if err != nil {
		return err
	}
	defer release()
	head, err := r.refs.Get(HeadRef(doc))
	if errors.Is(err, refs.ErrNotFound) {
		return &NotFoundError{What: "document", Name: doc}
	}
	if err != nil {
		return err
	}
	b := r.db.NewBatch()
	defer b.Close()
	if err := r.indexInto(ctx, b, doc, head, owner, progress.orNop()); err != nil {
		return err
	}
	err = r.db.Apply(b, kv.Sync)
	r.docs.forget(doc)
	if err == nil {
		r.OutboxCommitted()
	}
	return err
}

// IndexInto adds to b what Reindex writes, for head as the document's
// head: the caller moves the head ref to head in the same batch (through
// refs.Update, whose compare-and-swap refuses the batch if another writer
// moved it meanwhile), so that a document's head and its projections
// never disagree, even across a crash. Pack imports use it.
func (r *Repo) IndexInto(ctx context.Context, b *kv.Batch, doc string, head objstore.ID, owner string) error {
	return r.indexInto(ctx, b, doc, head, owner, Progress(nil).orNop())
}

func (r *Repo) indexInto(ctx context.Context, b *kv.Batch, doc string, head objstore.ID, owner string, progress Progress) error {
	// Walk first parents back to the first version.
	var chain []*objstore.Version
	var ids []objstore.ID
	for id := head; ; {
		if err := ctxErr(ctx); err != nil {
			return err
		}
		v, err := r.objs.GetVersion(id)
		if err != nil {
			return fmt.Errorf("reindex %s: %w", doc, err)
		}
		chain = append(chain, v)
		ids = append(ids, id)
		progress("versions read", int64(len(chain)), 0)
		if len(v.Parents) == 0 {
			break
		}
		id = v.Parents[0]
	}
	var old docRec
	hadRec, err := getRec(r.db, docKey(doc), &old)
	if err != nil {
		return err
	}
	for _, p := range [][]byte{vlogPrefix(doc), append(kv.TableKey("vlabel", doc), 0), append(kv.TableKey("bidx", doc), 0)} {
		if err := b.DeleteRange(p, kv.PrefixEnd(p)); err != nil {
			return err
		}
	}
	first := chain[len(chain)-1]
	d := docRec{ID: doc, Owner: owner, Created: first.Time}
	if hadRec {
		d.Owner, d.LegacyOwner, d.Created = old.Owner, old.LegacyOwner, old.Created
	}
	var prev *objstore.Version
	contents := map[objstore.ID]bool{} // every content the history names, for its assets
	for i := len(chain) - 1; i >= 0; i-- {
		v, id := chain[i], ids[i]
		major, rev, err := ParseLabel(v.Label)
		if err != nil {
			return fmt.Errorf("reindex %s: version %s: %w", doc, id.Short(), err)
		}
		lr := logRec{Label: v.Label, Kind: v.Kind, Reason: v.Reason, Hash: id, Author: v.Author,
			Time: v.Time, Message: v.Message, Fingerprint: v.Fingerprint, RestoredFrom: v.RestoredFrom,
			Blocks: len(v.Blocks)}
		if err := setRec(b, vlogKey(doc, v.Seq), lr); err != nil {
			return err
		}
		if err := b.Set(vlabelKey(doc, v.Label), kv.Uint64(nil, v.Seq)); err != nil {
			return err
		}
		for _, e := range blockEvents(prev, v.Blocks, "") {
			switch e.Op {
			case objstore.EventAdd, objstore.EventModify:
				contents[e.After] = true
				err = b.Set(bidxKey(doc, e.BlockID, v.Seq), bidxInVersion)
			case objstore.EventDelete:
				err = b.Set(bidxKey(doc, e.BlockID, v.Seq), nil)
			}
			if err != nil {
				return err
			}
		}
		d.Seq, d.Label, d.Major, d.Revision, d.Head, d.Title = v.Seq, v.Label, major, rev, id, v.Attrs.Title
		prev = v
		progress("versions indexed", int64(len(chain)-i), int64(len(chain)))
	}
	if err := setRec(b, docKey(doc), d); err != nil {
		return err
	}
	if err := r.EnqueueDoc(b, doc); err != nil {
		return err
	}
	if err := r.grantAssets(b, d.Owner, contents); err != nil {
		return fmt.Errorf("reindex %s: %w", doc, err)
	}
	hv := chain[0]
	var prevDraft draftRec // its header is enough: the seq
	hadDraft, err := getRec(r.db, draftKey(doc), &prevDraft)
	if err != nil {
		return err
	}
	r.drafts.forget(doc)
	r.docs.forget(doc)
	dr := draftRec{Seq: 1, Attrs: hv.Attrs, AttrsSeq: 1, Fingerprint: hv.Fingerprint, Base: head,
		BaseLabel: hv.Label, BaseFP: hv.Fingerprint, BaseAttrs: hv.Attrs, Boot: r.boot,
		LastChange: hv.Time}
	if hadDraft {
		dr.Seq = prevDraft.Seq + 1 // seqs only grow, so editors' cursors stay meaningful
		dr.AttrsSeq = dr.Seq
	}
	body, err := r.materialize(hv.Blocks)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", doc, err)
	}
	for i, e := range hv.Blocks {
		size, count, nested := blockMeta(body.Blocks[i])
		dr.Blocks = append(dr.Blocks, draftBlock{ID: e.ID, Content: e.Content, Seq: dr.Seq, Size: size, Count: count, Nested: nested})
	}
	// The draft is written whole: first the keys of the one it replaces go.
	for _, p := range [][]byte{dblkPrefix(doc), dtombPrefix(doc)} {
		if err := b.DeleteRange(p, kv.PrefixEnd(p)); err != nil {
			return err
		}
	}
	return putDraftAll(b, doc, &dr)
}
