package repo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
)

// A sealing change stores its two events by reference (stream.Event.Ref):
// everything they say about the new version is in the version object
// written in the same batch, and a document's history is what its
// stream would otherwise hold a second time (a block's text in
// draft.updated and its content object; a version's label, kind,
// author and fingerprint in version.created and the version).
//
//   - version.created is stored as versionEventRef: the version's seq.
//     The rest is read from the document's version log (vlog), which
//     holds every field of the event; not even the version's id is
//     stored twice, as the block index does not (a hash is what no
//     compressor shrinks).
//   - a draft.updated sealed by the version.created that follows it (the
//     next event of the stream, in the same batch) is stored as
//     draftEventRef: its block ids without their content and no
//     fingerprint. A block the version holds has the content the version
//     gives it; one it does not hold was deleted; the fingerprint is the
//     version's.
//
// Neither stores its time: both are the version's (a sealing save seals
// its version at its own time).
//
// The version is in the document's history, so it is kept for as long as
// the document exists (gc keeps what its head reaches), and its seq names
// it for as long: a head only moves forward (imports refuse anything
// else), so reindex rebuilds the same log entry at that seq, and a purge
// trims the stream with the log. Repo.ReadEvents rebuilds both events as
// they were published; fsck checks that every one resolves. Stores
// written before hold both events whole (no Ref), and are read as they
// are.

// versionEventRef is the stored form of a version.created event.
type versionEventRef struct {
	Seq uint64 `msgpack:"seq"`
}

// draftEventRef is the stored form of a sealed draft.updated event.
type draftEventRef struct {
	Seq      uint64              `msgpack:"seq"`
	Actor    string              `msgpack:"actor"`
	Session  string              `msgpack:"session,omitempty"`
	Unsealed bool                `msgpack:"unsealed"`
	IDs      []string            `msgpack:"ids,omitempty"`   // the changed and deleted blocks
	Order    []string            `msgpack:"order,omitempty"` // as DraftEvent
	Attrs    *flowdoc.Attributes `msgpack:"attrs,omitempty"`
	Authors  []string            `msgpack:"authors,omitempty"`
}

func draftRefOf(de DraftEvent) draftEventRef {
	ids := make([]string, len(de.Blocks))
	for i, eb := range de.Blocks {
		ids[i] = eb.ID
	}
	return draftEventRef{Seq: de.Seq, Actor: de.Actor, Session: de.Session, Unsealed: de.Unsealed,
		IDs: ids, Order: de.Order, Attrs: de.Attrs, Authors: de.Authors}
}

// addSealedDraft appends de, a draft.updated that the version written
// next in this batch seals, stored by reference. writeVersion checks
// that its version.created is the very next event.
func (e *events) addSealedDraft(b *kv.Batch, now int64, de DraftEvent) error {
	ev, err := stream.AppendEventAs(b, Stream(e.doc), e.next, EventDraftUpdated, now, de, draftRefOf(de))
	if err != nil {
		return err
	}
	e.sealing, e.sealedAt = e.next, now
	return e.appended(b, ev)
}

// addVersion appends the version.created event of version v (id vid),
// stored by reference; now must be v's time (a reference-stored event's
// time is its version's).
func (e *events) addVersion(b *kv.Batch, now int64, vid objstore.ID, v *objstore.Version) error {
	if e.sealing != 0 && (e.sealing != e.next-1 || e.sealedAt != now) {
		return fmt.Errorf("repo: version.created of %s would be event %d at %d, its draft.updated is %d at %d", v.Label, e.next, now, e.sealing, e.sealedAt)
	}
	e.sealing = 0
	ve := VersionEvent{Label: v.Label, Seq: v.Seq, Kind: v.Kind, Reason: v.Reason, Hash: vid,
		Author: v.Author, Fingerprint: v.Fingerprint, RestoredFrom: v.RestoredFrom}
	ev, err := stream.AppendEventAs(b, Stream(e.doc), e.next, EventVersionCreated, now, ve, versionEventRef{Seq: v.Seq})
	if err != nil {
		return err
	}
	return e.appended(b, ev)
}

// errEventRef says a stored event's reference does not resolve.
var errEventRef = errors.New("repo: event stored by reference does not resolve")

// resolveEvents rebuilds the events of stream name in evs that are stored
// by reference (consecutive, in order, as stream.Read returns them).
func (r *Repo) resolveEvents(name string, evs []stream.Event) error {
	for i := range evs {
		if !evs[i].Ref {
			continue
		}
		var next *stream.Event
		if i+1 < len(evs) {
			next = &evs[i+1]
		}
		if err := r.resolveEvent(name, &evs[i], next); err != nil {
			return err
		}
	}
	return nil
}

// resolveEvent rebuilds e, stored by reference, in place; next is the
// event after it when the caller holds it (nil: read from the store).
func (r *Repo) resolveEvent(name string, e *stream.Event, next *stream.Event) error {
	var data any
	switch e.Type {
	case EventVersionCreated:
		var ref versionEventRef
		if err := kv.Unmarshal(e.Data, &ref); err != nil {
			return fmt.Errorf("%w: %s event %d: %v", errEventRef, name, e.Seq, err)
		}
		lr, err := r.eventLog(name, e.Seq, ref.Seq)
		if err != nil {
			return err
		}
		e.Time = lr.Time
		data = VersionEvent{Label: lr.Label, Seq: ref.Seq, Kind: lr.Kind, Reason: lr.Reason, Hash: lr.Hash,
			Author: lr.Author, Fingerprint: lr.Fingerprint, RestoredFrom: lr.RestoredFrom}
	case EventDraftUpdated:
		var ref draftEventRef
		if err := kv.Unmarshal(e.Data, &ref); err != nil {
			return fmt.Errorf("%w: %s event %d: %v", errEventRef, name, e.Seq, err)
		}
		if next == nil || next.Seq != e.Seq+1 {
			n, err := stream.Get(r.db, name, e.Seq+1)
			if err != nil {
				return fmt.Errorf("%w: %s event %d: its version: %v", errEventRef, name, e.Seq, err)
			}
			next = &n
		}
		vref, err := sealingVersion(next)
		if err != nil {
			return fmt.Errorf("%w: %s event %d: %v", errEventRef, name, e.Seq, err)
		}
		lr, err := r.eventLog(name, next.Seq, vref.Seq)
		if err != nil {
			return err
		}
		v, err := r.objs.GetVersion(lr.Hash)
		if err != nil {
			return fmt.Errorf("%w: %s event %d: version %s: %v", errEventRef, name, e.Seq, lr.Label, err)
		}
		content := make(map[string]objstore.ID, len(v.Blocks))
		for _, b := range v.Blocks {
			content[b.ID] = b.Content
		}
		e.Time = lr.Time // the version is sealed at the time of the save it seals
		de := DraftEvent{Seq: ref.Seq, Actor: ref.Actor, Session: ref.Session, Fingerprint: v.Fingerprint,
			Unsealed: ref.Unsealed, Order: ref.Order, Attrs: ref.Attrs, Authors: ref.Authors,
			Blocks: make([]EventBlock, len(ref.IDs))}
		for i, id := range ref.IDs {
			de.Blocks[i].ID = id
			if c, ok := content[id]; ok {
				blk, err := r.block(c, id)
				if err != nil {
					return fmt.Errorf("%w: %s event %d: %v", errEventRef, name, e.Seq, err)
				}
				de.Blocks[i].Block = &blk
			}
		}
		data = de
	default:
		return fmt.Errorf("%w: %s event %d: a %s event is never stored by reference", errEventRef, name, e.Seq, e.Type)
	}
	raw, err := kv.Marshal(data)
	if err != nil {
		return err
	}
	e.Data, e.Ref = raw, false
	return nil
}

// sealingVersion is the version a version.created event names, in either
// of its stored forms.
func sealingVersion(e *stream.Event) (versionEventRef, error) {
	if e.Type != EventVersionCreated {
		return versionEventRef{}, fmt.Errorf("event %d is %s, not the version.created that sealed it", e.Seq, e.Type)
	}
	var ref versionEventRef // a whole VersionEvent has the same seq key
	if err := kv.Unmarshal(e.Data, &ref); err != nil {
		return ref, err
	}
	return ref, nil
}

// eventLog reads the version log entry at seq of the document whose
// stream is name, which stored event ev names.
func (r *Repo) eventLog(name string, ev, seq uint64) (logRec, error) {
	var lr logRec
	ok, err := getRec(r.db, vlogKey(strings.TrimPrefix(name, "doc:"), seq), &lr)
	if err != nil {
		return lr, fmt.Errorf("%w: %s event %d: version %d: %v", errEventRef, name, ev, seq, err)
	}
	if !ok || !strings.HasPrefix(name, "doc:") {
		return lr, fmt.Errorf("%w: %s event %d: the document has no version %d", errEventRef, name, ev, seq)
	}
	return lr, nil
}
