package repo

import (
	"context"
	"errors"
	"fmt"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// EventOwnerChanged is the type of the event Chown appends to a
// document's stream.
const EventOwnerChanged = "owner.changed"

// OwnerEvent is the payload of an "owner.changed" event. From and To are
// user ids (From is empty when the document belonged to nobody); the names
// are labels as they were at the time.
type OwnerEvent struct {
	From     string `msgpack:"from,omitempty" json:"from,omitempty"`
	FromName string `msgpack:"fromName,omitempty" json:"fromName,omitempty"`
	To       string `msgpack:"to" json:"to"`
	ToName   string `msgpack:"toName,omitempty" json:"toName,omitempty"`
	Actor    string `msgpack:"actor" json:"actor"`
}

// ChownParams reassign a document.
type ChownParams struct {
	Doc string
	// Owner is the new owner's user id; OwnerName its name, recorded in
	// the event.
	Owner     string
	OwnerName string
	// PrevName is the previous owner's name when it still exists ("" for
	// nobody), recorded in the event.
	PrevName string
	// Actor is who reassigns it (a name, as history records actors).
	Actor string
}

// Chown makes p.Owner the owner of p.Doc and appends an owner.changed
// event to the document's stream in the same synced batch. Versions are
// untouched: their author fields are history, not ownership. It returns
// the previous owner's id; reassigning a document to its owner changes
// nothing and appends no event. Errors: *NotFoundError, errs.Invalid (an
// empty owner).
func (r *Repo) Chown(ctx context.Context, p ChownParams) (prev string, err error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if p.Owner == "" {
		return "", errs.E(errs.Invalid, "chown %s: the new owner must be a user", p.Doc)
	}
	release, err := r.writing(ctx, p.Doc)
	if err != nil {
		return "", err
	}
	defer release()
	d, err := r.lockedDoc(p.Doc)
	if err != nil {
		return "", err
	}
	prev = d.Owner
	if prev == p.Owner {
		return prev, nil
	}
	ev, err := r.events(p.Doc)
	if err != nil {
		return "", err
	}
	b := r.db.NewBatch()
	defer b.Close()
	d.Owner, d.LegacyOwner = p.Owner, ""
	if err := setRec(b, docKey(p.Doc), d); err != nil {
		return "", err
	}
	if err := r.grantDocAssets(b, p.Doc, p.Owner); err != nil {
		return "", fmt.Errorf("chown %s: %w", p.Doc, err)
	}
	e := OwnerEvent{From: prev, FromName: p.PrevName, To: p.Owner, ToName: p.OwnerName, Actor: p.Actor}
	if err := ev.add(b, EventOwnerChanged, r.now().UnixMilli(), e); err != nil {
		return "", err
	}
	if err := r.EnqueueDoc(b, p.Doc); err != nil {
		return "", err
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		r.docs.forget(p.Doc)
		return "", fmt.Errorf("chown %s: %w", p.Doc, err)
	}
	r.docs.set(d)
	r.publish(ev)
	r.OutboxCommitted()
	r.notify(Event{Doc: p.Doc, Kind: ChangeChown, Actor: p.Actor, Time: r.now().UnixMilli()})
	return prev, nil
}

// UserIDs is what MigrateOwners needs of the user table (package auth's
// Store implements it).
type UserIDs interface {
	// AssignIDs adds to b an id for every user that has none and returns
	// the id of every user by name; users with an id keep it.
	AssignIDs(ctx context.Context, b *kv.Batch) (map[string]string, error)
}

// MigrateReport says what MigrateOwners did.
type MigrateReport struct {
	Done     bool     // the store was migrated before: nothing was read or written
	Docs     int      // document records whose owner name became a user id
	Orphaned []string // documents whose owner name named no user: they belong to nobody now
}

// ownersKey marks a store whose document owners are user ids.
func ownersKey() []byte { return kv.TableKey("meta", "owner-ids") }

// MigrateOwners turns the owner names of a store written before users had
// ids into user ids: every user without an id gets one, and every
// document record's owner name becomes the id of the user of that name at
// the time of the migration (none: the document belongs to nobody until an
// admin reassigns it). Users, documents and the marker that says it is
// done are one synced batch, so a crash leaves the store either untouched
// or migrated, and once the marker is there MigrateOwners reads one key
// and returns. Every process that opens a store runs it before serving.
// Below the disk's reserve the batch is written only when it is small
// (kv.DB.ApplyReserved); otherwise the error is errs.StorageFull and
// nothing is written.
func (r *Repo) MigrateOwners(ctx context.Context, users UserIDs) (MigrateReport, error) {
	if ok, err := kv.Has(r.db, ownersKey()); err != nil || ok {
		return MigrateReport{Done: ok}, err
	}
	release := r.db.Exclusive() // no writer rewrites a record meanwhile
	defer release()
	b := r.db.NewBatch()
	defer b.Close()
	ids, err := users.AssignIDs(ctx, b)
	if err != nil {
		return MigrateReport{}, fmt.Errorf("migrate owners: %w", err)
	}
	var rep MigrateReport
	p := kv.TableKey("doc")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return MigrateReport{}, err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			it.Close()
			return MigrateReport{}, err
		}
		var d docRec
		if err := kv.Unmarshal(it.Value(), &d); err != nil {
			it.Close()
			return MigrateReport{}, fmt.Errorf("migrate owners: decode document record %s: %w", it.Key(), err)
		}
		if d.LegacyOwner == "" {
			continue
		}
		if d.Owner == "" {
			d.Owner = ids[d.LegacyOwner]
		}
		if d.Owner == "" {
			rep.Orphaned = append(rep.Orphaned, d.ID)
		}
		d.LegacyOwner = ""
		if err := setRec(b, docKey(d.ID), &d); err != nil {
			it.Close()
			return MigrateReport{}, err
		}
		if err := r.EnqueueDoc(b, d.ID); err != nil {
			it.Close()
			return MigrateReport{}, err
		}
		rep.Docs++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return MigrateReport{}, err
	}
	if err := b.Set(ownersKey(), []byte{1}); err != nil {
		return MigrateReport{}, err
	}
	// On a fresh store (and on most old ones) this is the marker alone, a
	// few bytes written once: it may dip into the disk's reserve, so that
	// a daemon starts on a disk below the reserve. A migration too big for
	// that (kv.MaxReservedWrite) is refused with errs.StorageFull and waits
	// until writes resume.
	err = r.db.ApplyReserved(b, kv.Sync)
	r.docs.forgetAll() // records rewritten without their documents' locks
	if err != nil {
		return MigrateReport{}, fmt.Errorf("migrate owners: %w", err)
	}
	return rep, nil
}
