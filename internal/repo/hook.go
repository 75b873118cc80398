package repo

import (
	"context"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// ChangeDraft is Change.Kind for a draft save that sealed no version.
const ChangeDraft = "draft"

// Change is what a ChangeHook learns about one change of a document.
type Change struct {
	Doc   string
	Actor string
	// Kind is ChangeDraft for a draft save that sealed nothing, else the
	// kind of the version the change sealed (checkpoint, recovery,
	// accept_suggestion, restore, create).
	Kind string
	// Changed lists the blocks whose content changed, that were added or
	// that were deleted by the change, in the order of the draft event.
	Changed []string
	// BodyChanged reports whether the body fingerprint changed (a save of
	// attributes alone leaves it).
	BodyChanged bool
	// Version is the version the change sealed; nil for a draft save.
	Version *VersionInfo
	// SuggestionID names the suggestion an accept_suggestion change
	// applies.
	SuggestionID string
	// Value is the ChangeParams.Value of a CommitChange (nil otherwise).
	Value any
	// Blocks is the body after the change, as (block id, content id),
	// for a change that sealed a version; nil for a draft save, which
	// costs in proportion to its changes (Changed names those). The hook
	// must not modify it.
	Blocks []objstore.BlockEntry
	// Events are the block-level events of the version's transaction
	// (what changed since the previous version, with both content ids);
	// nil for a draft save. The hook must not modify them.
	Events []objstore.TxnEvent
	// Time is the change's time, Unix ms.
	Time int64
	// BaseVersion, BaseLabel and BaseFingerprint are, for a change that
	// sealed a version, the head it was made on and the fingerprint it
	// was checked against; Carried says a CommitChange was carried over
	// to them from an older baseline (ChangeParams.CarryOver).
	BaseVersion     objstore.ID
	BaseLabel       string
	BaseFingerprint flowdoc.Fingerprint
	Carried         bool

	emit func(typ string, data any) error
}

// Emit appends an event to the document's stream ("doc:<id>") in the
// change's batch, after the change's own events.
func (c *Change) Emit(typ string, data any) error { return c.emit(typ, data) }

// ChangeHook lets a package above repo keep its records consistent with
// every change of a document without repo importing it (the assistant
// marks suggestions whose baseline a change moved as conflicted).
type ChangeHook interface {
	// DocChanged is called for every draft save that changed the draft
	// and every version sealed, whatever the transport: inside the
	// change's batch b, under the document's lock, before b commits. What
	// it adds to b commits with the change. An error aborts the change:
	// nothing is written and the caller of the change gets the error
	// (wrapped). It must not call the Repo's write methods or Locked.
	DocChanged(b *kv.Batch, c *Change) error
}

type hookBox struct{ h ChangeHook }

// SetHook installs h, called for every change from then on (nil removes
// it). Install it before the Repo serves writers.
func (r *Repo) SetHook(h ChangeHook) { r.hook.Store(&hookBox{h}) }

func (r *Repo) changeHook() ChangeHook {
	if b := r.hook.Load(); b != nil {
		return b.h
	}
	return nil
}

// callHook runs the installed hook, if any, for c inside b.
func (r *Repo) callHook(b *kv.Batch, ev *events, c *Change) error {
	h := r.changeHook()
	if h == nil {
		return nil
	}
	c.emit = func(typ string, data any) error { return ev.add(b, typ, c.Time, data) }
	if err := h.DocChanged(b, c); err != nil {
		return fmt.Errorf("document %s: %w", c.Doc, err)
	}
	return nil
}

// DocTx is the state of a document seen under its lock by Locked.
type DocTx struct {
	Doc string
	// Head is the head version and HeadLabel its label.
	Head      objstore.ID
	HeadLabel string
	// Fingerprint is the draft body's fingerprint; Unsealed whether the
	// draft is newer than the head; Seq the draft's seq.
	Fingerprint flowdoc.Fingerprint
	Unsealed    bool
	Seq         uint64

	ev      *events
	emitted bool
	r       *Repo
}

// Blocks returns the current content of the draft's top-level blocks
// named by ids (block id -> content id); a block the draft does not hold
// is absent. It looks each id up in the draft's block index (the draft
// usually comes from memory).
func (tx *DocTx) Blocks(ids []string) (map[string]objstore.ID, error) {
	dr, err := tx.r.loadDraft(tx.Doc)
	if err != nil {
		return nil, err
	}
	dr.index()
	out := make(map[string]objstore.ID, len(ids))
	for _, id := range ids {
		if i, ok := dr.pos(id); ok {
			out[id] = dr.Blocks[i].Content
		}
	}
	return out, nil
}

// Emit appends an event to the document's stream in b. Use one batch per
// Locked call (the events are published as that batch's); subscribers are
// woken when Locked returns.
func (tx *DocTx) Emit(b *kv.Batch, typ string, timeMs int64, data any) error {
	tx.emitted = true
	return tx.ev.add(b, typ, timeMs, data)
}

// Locked runs fn under document doc's lock (after a write pass) with the
// document's current state, for a caller that commits its own records
// atomically with respect to every change of the document: nothing can
// change the body, the draft or the head between fn's reads and its
// commit. fn must commit what it writes before returning and must not
// call the Repo's write methods (the lock is not reentrant). Events fn
// appends with DocTx.Emit wake subscribers when fn returns nil.
func (r *Repo) Locked(ctx context.Context, doc string, fn func(tx *DocTx) error) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return err
	}
	defer release()
	d, err := r.lockedDoc(doc)
	if err != nil {
		return err
	}
	dr, err := r.readDraftHeader(doc)
	if err != nil {
		return err
	}
	ev, err := r.events(doc)
	if err != nil {
		return err
	}
	tx := &DocTx{Doc: doc, Head: d.Head, HeadLabel: d.Label, Fingerprint: dr.Fingerprint,
		Unsealed: dr.Unsealed, Seq: dr.Seq, ev: ev, r: r}
	err = fn(tx)
	switch {
	case tx.emitted && err == nil:
		r.publish(ev)
	case tx.emitted:
		// fn may have committed before it failed: the hub forgets the
		// stream's tail, and the next writer reads the head from the store.
		r.hub.Notify(Stream(doc))
	}
	return err
}
