package repo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// VersionEvent is the payload of a "version.created" event.
type VersionEvent struct {
	Label        string              `msgpack:"label" json:"label"`
	Seq          uint64              `msgpack:"seq" json:"seq"`
	Kind         string              `msgpack:"kind" json:"kind"`
	Reason       string              `msgpack:"reason,omitempty" json:"reason,omitempty"`
	Hash         objstore.ID         `msgpack:"hash" json:"hash"`
	Author       string              `msgpack:"author" json:"author"`
	Fingerprint  flowdoc.Fingerprint `msgpack:"fp" json:"fingerprint"`
	RestoredFrom string              `msgpack:"from,omitempty" json:"restoredFrom,omitempty"`
}

// DraftEvent is the payload of a "draft.updated" event: what another
// editor needs to bring its copy from Seq-1 to Seq.
type DraftEvent struct {
	Seq         uint64              `msgpack:"seq" json:"seq"`
	Actor       string              `msgpack:"actor" json:"actor"`
	Session     string              `msgpack:"session,omitempty" json:"session,omitempty"`
	Fingerprint flowdoc.Fingerprint `msgpack:"fp" json:"fingerprint"`
	Unsealed    bool                `msgpack:"unsealed" json:"unsealed"`
	Blocks      []EventBlock        `msgpack:"blocks,omitempty" json:"blocks,omitempty"` // changed or deleted blocks
	Order       []string            `msgpack:"order,omitempty" json:"order,omitempty"`   // the full block order, when it changed
	Attrs       *flowdoc.Attributes `msgpack:"attrs,omitempty" json:"attrs,omitempty"`   // when they changed
	// Authors, for a save merged inside blocks, are the users whose
	// edits the merged blocks combine (the saving actor included), sorted.
	Authors []string `msgpack:"authors,omitempty" json:"authors,omitempty"`
}

// EventBlock is one block of a DraftEvent; Block nil means deleted.
type EventBlock struct {
	ID    string         `msgpack:"id" json:"id"`
	Block *flowdoc.Block `msgpack:"block,omitempty" json:"block,omitempty"`
}

// events appends to a document's stream inside one batch; publish hands
// what it appended to the hub once the batch committed.
type events struct {
	doc      string
	next     uint64
	keep     uint64         // retention; 0 keeps everything
	out      []stream.Event // appended, for the hub
	trimmed  uint64         // the first retained event after a trim in this batch (0: none)
	sealing  uint64         // a draft.updated stored by reference, awaiting its version.created (0: none)
	sealedAt int64          // and its time, which is its version's
}

// events starts appending to doc's stream; call it under the document
// lock. The stream's head comes from the hub's tail when it has one (the
// lock's previous holder published it), else from the store.
func (r *Repo) events(doc string) (*events, error) {
	last, err := r.hub.Last(r.db, Stream(doc))
	if err != nil {
		return nil, err
	}
	return &events{doc: doc, next: last + 1, keep: r.keep}, nil
}

func (e *events) add(b *kv.Batch, typ string, timeMs int64, data any) error {
	ev, err := stream.AppendEvent(b, Stream(e.doc), e.next, typ, timeMs, data)
	if err != nil {
		return err
	}
	return e.appended(b, ev)
}

// appended records ev, just added to b, and trims the stream when due.
func (e *events) appended(b *kv.Batch, ev stream.Event) error {
	// Trim in steps of trimEvery so that most commits pay nothing for it.
	if e.keep > 0 && e.next > e.keep && e.next%trimEvery == 0 {
		if err := stream.Trim(b, Stream(e.doc), e.next-e.keep+1); err != nil {
			return err
		}
		e.trimmed = e.next - e.keep + 1
	}
	e.out = append(e.out, ev)
	e.next++
	return nil
}

// publish wakes the document's readers after ev's batch committed, still
// under the document lock, handing the hub the events it appended.
func (r *Repo) publish(ev *events) {
	r.hub.Publish(Stream(ev.doc), ev.trimmed, ev.out...)
}

// trimEvery is how often (in events) a document stream is trimmed.
const trimEvery = 64

// versionSpec is a version to write: the new body and how it came to be.
type versionSpec struct {
	kind, reason, actor, message string
	major                        bool
	restoredFrom                 string
	idemKey, suggestionID        string
	value                        any // ChangeParams.Value, for the hook
	baseFP                       flowdoc.Fingerprint
	origBase                     objstore.ID         // a carried-over change's own baseline (CarryOver)
	origBaseFP                   flowdoc.Fingerprint // and its fingerprint
	entries                      []objstore.BlockEntry
	fp                           flowdoc.Fingerprint // of entries, when the caller has it
	attrs                        flowdoc.Attributes
	restoreBlock                 string   // the block a block restore brought back
	changed                      []string // blocks the change advanced in the draft (for the hook)
	bodyChanged                  bool     // the draft's fingerprint moved in this change
}

// writeVersion seals spec as the document's next version, under the
// document lock. It adds the version, txn, indexes, records and the
// version.created event to b, then commits b (synced) through a
// compare-and-swap of the head ref. dr is the draft after the change; it
// is marked sealed and written. b is closed on return.
func (r *Repo) writeVersion(dr0 *docRec, dr *draftRec, spec versionSpec, b *kv.Batch, ev *events) (VersionInfo, error) {
	d := *dr0
	now := r.now().UnixMilli()
	if ev.sealing != 0 {
		now = ev.sealedAt // sealed at the time of the save it seals (eventref.go)
	}
	if spec.fp.IsZero() {
		spec.fp = fingerprintOf(spec.entries)
	}
	var head *objstore.Version
	if !d.Head.IsZero() {
		var err error
		if head, err = r.headOf(d.ID, d.Head); err != nil {
			b.Close()
			return VersionInfo{}, fmt.Errorf("read head of %s: %w", d.ID, err)
		}
	}
	major, rev := 1, 0
	if head != nil {
		if spec.major {
			major, rev = d.Major+1, 0
		} else {
			major, rev = d.Major, d.Revision+1
		}
	}
	label := fmt.Sprintf("v%d.r%d", major, rev)
	txnEvents := blockEvents(head, spec.entries, spec.restoreBlock)
	txn := &objstore.Txn{
		Doc: d.ID, Actor: spec.actor, Kind: spec.kind, Reason: spec.reason,
		BaseFingerprint: spec.baseFP, IdempotencyKey: spec.idemKey,
		SuggestionID: spec.suggestionID, Time: now, Events: txnEvents,
		OrigBase: spec.origBase, OrigBaseFP: spec.origBaseFP,
	}
	var parents []objstore.ID
	if head != nil {
		txn.BaseVersion = d.Head
		parents = []objstore.ID{d.Head}
	}
	txnID, err := r.objs.PutTxn(b, txn)
	if err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	v := &objstore.Version{
		Doc: d.ID, Seq: d.Seq + 1, Label: label, Kind: spec.kind, Reason: spec.reason,
		Parents: parents, Blocks: spec.entries, Attrs: spec.attrs,
		Fingerprint: spec.fp, Txn: txnID, Author: spec.actor,
		Time: now, Message: spec.message, RestoredFrom: spec.restoredFrom,
	}
	vid, err := r.objs.PutVersion(b, v)
	if err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	for _, e := range txnEvents {
		switch e.Op {
		case objstore.EventAdd, objstore.EventModify, objstore.EventRestore:
			err = b.Set(bidxKey(d.ID, e.BlockID, v.Seq), bidxInVersion)
		case objstore.EventDelete:
			err = b.Set(bidxKey(d.ID, e.BlockID, v.Seq), nil)
		}
		if err != nil {
			b.Close()
			return VersionInfo{}, err
		}
	}
	lr := logRec{Label: label, Kind: v.Kind, Reason: v.Reason, Hash: vid, Author: v.Author,
		Time: now, Message: v.Message, Fingerprint: v.Fingerprint, RestoredFrom: v.RestoredFrom,
		Blocks: len(v.Blocks)}
	if err := setRec(b, vlogKey(d.ID, v.Seq), lr); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	if err := b.Set(vlabelKey(d.ID, label), kv.Uint64(nil, v.Seq)); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	if spec.idemKey != "" {
		if err := b.Set(idemKey(d.ID, spec.idemKey), vid[:]); err != nil {
			b.Close()
			return VersionInfo{}, err
		}
	}
	old := d.Head
	d.Seq, d.Label, d.Major, d.Revision, d.Head, d.Title = v.Seq, label, major, rev, vid, spec.attrs.Title
	if err := setRec(b, docKey(d.ID), d); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	dr.Base, dr.BaseLabel, dr.BaseFP, dr.BaseAttrs = vid, label, v.Fingerprint, spec.attrs
	dr.Unsealed, dr.UnsealedSince = false, 0
	if err := putDraftHeader(b, d.ID, dr); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	info := infoOf(d.ID, v.Seq, lr)
	if err := ev.addVersion(b, now, vid, v); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	if err := r.callHook(b, ev, &Change{Doc: d.ID, Actor: spec.actor, Kind: spec.kind, Changed: spec.changed,
		BodyChanged: spec.bodyChanged, Version: &info, SuggestionID: spec.suggestionID, Value: spec.value, Blocks: spec.entries,
		Events: txnEvents, Time: now, Carried: !spec.origBase.IsZero(), BaseVersion: old, BaseLabel: dr0.Label, BaseFingerprint: spec.baseFP}); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	if err := r.EnqueueDoc(b, d.ID); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	// The version log entry above is this move's log: the head's reflog
	// would hold the same id, time and label a second time.
	err = r.refs.Update(b, []refs.Update{{Name: HeadRef(d.ID), Old: old, New: vid, LoggedElsewhere: true}}, spec.kind+" "+label)
	if err != nil {
		// The head moved under the lock (a pack import), or the commit
		// failed: the next change reads the record from the store.
		r.docs.forget(d.ID)
	}
	if errors.Is(err, refs.ErrConflict) {
		return VersionInfo{}, &folio.ConflictError{Doc: d.ID, Check: folio.CheckHeadMoved, Reason: "head moved during the commit"}
	}
	if err != nil {
		return VersionInfo{}, fmt.Errorf("commit %s %s: %w", d.ID, label, err)
	}
	r.docs.set(&d)
	r.setHead(d.ID, vid, v)
	r.keepDraft(d.ID, dr)
	r.cp.sealed(d.ID)
	r.publish(ev)
	r.OutboxCommitted()
	r.notify(Event{Doc: d.ID, Kind: spec.kind, Actor: spec.actor, Version: label, Changed: spec.changed,
		BodyChanged: spec.bodyChanged, SuggestionID: spec.suggestionID, Time: now})
	return info, nil
}

func infoOf(doc string, seq uint64, lr logRec) VersionInfo {
	return VersionInfo{Doc: doc, Label: lr.Label, Seq: seq, Kind: lr.Kind, Reason: lr.Reason,
		Hash: lr.Hash, Author: lr.Author, Time: lr.Time, Message: lr.Message,
		Fingerprint: lr.Fingerprint, RestoredFrom: lr.RestoredFrom, Blocks: lr.Blocks}
}

// blockEvents lists the block-level changes from head to entries: adds,
// deletes, modifications (restoreBlock's is a restore) and moves (blocks
// outside a longest increasing subsequence of old positions).
func blockEvents(head *objstore.Version, entries []objstore.BlockEntry, restoreBlock string) []objstore.TxnEvent {
	if head != nil && sameOrder(head.Blocks, entries) {
		// The common case (edits in place): no adds, deletes or moves.
		var out []objstore.TxnEvent
		for i, e := range entries {
			if prev := head.Blocks[i].Content; prev != e.Content {
				op := objstore.EventModify
				if e.ID == restoreBlock {
					op = objstore.EventRestore
				}
				out = append(out, objstore.TxnEvent{Op: op, BlockID: e.ID, Before: prev, After: e.Content})
			}
		}
		return out
	}
	old := map[string]objstore.ID{}
	oldPos := map[string]int{}
	if head != nil {
		for i, e := range head.Blocks {
			old[e.ID], oldPos[e.ID] = e.Content, i
		}
	}
	var out []objstore.TxnEvent
	inNew := make(map[string]bool, len(entries))
	var common []string
	for _, e := range entries {
		inNew[e.ID] = true
		prev, ok := old[e.ID]
		switch {
		case !ok:
			op := objstore.EventAdd
			if e.ID == restoreBlock {
				op = objstore.EventRestore
			}
			out = append(out, objstore.TxnEvent{Op: op, BlockID: e.ID, After: e.Content})
		case prev != e.Content:
			op := objstore.EventModify
			if e.ID == restoreBlock {
				op = objstore.EventRestore
			}
			out = append(out, objstore.TxnEvent{Op: op, BlockID: e.ID, Before: prev, After: e.Content})
			common = append(common, e.ID)
		default:
			common = append(common, e.ID)
		}
	}
	if head != nil {
		for _, e := range head.Blocks {
			if !inNew[e.ID] {
				out = append(out, objstore.TxnEvent{Op: objstore.EventDelete, BlockID: e.ID, Before: e.Content})
			}
		}
	}
	pos := make([]int, len(common))
	for i, id := range common {
		pos[i] = oldPos[id]
	}
	keep := lis(pos)
	var now map[string]objstore.ID // content in entries, built when a block moved
	for i, id := range common {
		if !keep[i] {
			if now == nil {
				now = make(map[string]objstore.ID, len(entries))
				for _, e := range entries {
					now[e.ID] = e.Content
				}
			}
			out = append(out, objstore.TxnEvent{Op: objstore.EventMove, BlockID: id, Before: old[id], After: now[id]})
		}
	}
	return out
}

func sameOrder(a, b []objstore.BlockEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// lis marks the elements of a that belong to one longest strictly
// increasing subsequence.
func lis(a []int) []bool {
	n := len(a)
	keep := make([]bool, n)
	if n == 0 {
		return keep
	}
	tails := []int{} // index into a of the smallest tail of each length
	prev := make([]int, n)
	for i, x := range a {
		j := sort.Search(len(tails), func(k int) bool { return a[tails[k]] >= x })
		if j > 0 {
			prev[i] = tails[j-1]
		} else {
			prev[i] = -1
		}
		if j == len(tails) {
			tails = append(tails, i)
		} else {
			tails[j] = i
		}
	}
	for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
		keep[i] = true
	}
	return keep
}

// CreateDoc creates a document with its first version v1.r0 (kind create)
// and a clean draft.
func (r *Repo) CreateDoc(ctx context.Context, p CreateParams) (VersionInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return VersionInfo{}, err
	}
	if p.ID == "" {
		p.ID = NewDocID()
	}
	if !ValidDocID(p.ID) {
		return VersionInfo{}, errs.E(errs.Invalid, "document id %q must be 1-64 characters of A-Z a-z 0-9 _ -", p.ID)
	}
	var f fieldErrors
	checkAttrs(&f, p.Attrs)
	f.text("message", p.Message, MaxMessageBytes, true)
	if err := f.err(); err != nil {
		return VersionInfo{}, err
	}
	var c flowdoc.Counts
	if err := c.Add(p.Body.Blocks, r.req.Decode()); err != nil {
		return VersionInfo{}, LimitError(err)
	}
	body, err := r.normalize(p.Body)
	if err != nil {
		return VersionInfo{}, err
	}
	slots := slotsOf(body)
	if err := encodeSlots(ctx, slots); err != nil {
		return VersionInfo{}, err
	}
	release, err := r.writing(ctx, p.ID)
	if err != nil {
		return VersionInfo{}, err
	}
	defer release()
	if ok, err := kv.Has(r.db, docKey(p.ID)); err != nil {
		return VersionInfo{}, err
	} else if ok {
		return VersionInfo{}, errs.E(errs.Conflict, "document %s already exists; choose another id, or none for a generated one", p.ID)
	}
	now := r.now().UnixMilli()
	b := r.db.NewBatch()
	entries, err := r.putSlots(b, p.Owner, slots)
	if err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	d := &docRec{ID: p.ID, Owner: p.Owner, Title: p.Attrs.Title, Created: now}
	dr := &draftRec{Seq: 1, Attrs: p.Attrs, AttrsSeq: 1, Fingerprint: fingerprintOf(entries), LastChange: now, LastActor: p.Author, Boot: r.boot,
		unstored: true}
	dr.Blocks = make([]draftBlock, len(slots)) // kept between changes (draftCache): no spare capacity
	for i, s := range slots {
		s.Seq = 1
		dr.Blocks[i] = s.draftBlock
	}
	ev := &events{doc: p.ID, next: 1, keep: r.keep}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	return r.writeVersion(d, dr, versionSpec{kind: objstore.KindCreate, actor: p.Author,
		message: p.Message, entries: entries, attrs: p.Attrs, changed: ids, bodyChanged: true}, b, ev)
}

// Checkpoint seals the draft into a new revision when it is unsealed, at
// a client's request: reason is manual, publish or ai (the other reasons
// are the server's own, see Seal). It returns the head and false when
// there was nothing to seal.
func (r *Repo) Checkpoint(ctx context.Context, doc, reason, actor, message string) (VersionInfo, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return VersionInfo{}, false, err
	}
	var f fieldErrors
	checkReason(&f, "reason", reason)
	f.text("message", message, MaxMessageBytes, true)
	if err := f.err(); err != nil {
		return VersionInfo{}, false, err
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return VersionInfo{}, false, err
	}
	defer release()
	return r.checkpointLocked(doc, reason, actor, message)
}

// Seal is Checkpoint for the server's own boundaries: reason is idle,
// max_duration or leave. Requests never reach it.
func (r *Repo) Seal(ctx context.Context, doc, reason, actor string) (VersionInfo, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return VersionInfo{}, false, err
	}
	if !slices.Contains(serverReasons, reason) {
		return VersionInfo{}, false, errs.E(errs.Invalid, "seal reason %q (want idle, max_duration or leave)", reason)
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return VersionInfo{}, false, err
	}
	defer release()
	return r.checkpointLocked(doc, reason, actor, "")
}

func (r *Repo) checkpointLocked(doc, reason, actor, message string) (VersionInfo, bool, error) {
	d, err := r.lockedDoc(doc)
	if err != nil {
		return VersionInfo{}, false, err
	}
	dr, err := r.loadDraft(doc)
	if err != nil {
		return VersionInfo{}, false, err
	}
	if !dr.Unsealed {
		r.keepDraft(doc, dr)
		info, err := r.versionInfo(doc, d.Seq)
		return info, false, err
	}
	kind := objstore.KindCheckpoint
	if reason == objstore.ReasonRecovery {
		kind = objstore.KindRecovery
	}
	ev, err := r.events(doc)
	if err != nil {
		return VersionInfo{}, false, err
	}
	entries := make([]objstore.BlockEntry, len(dr.Blocks))
	for i, blk := range dr.Blocks {
		entries[i] = objstore.BlockEntry{ID: blk.ID, Content: blk.Content}
	}
	info, err := r.writeVersion(d, dr, versionSpec{kind: kind, reason: reason, actor: actor,
		message: message, baseFP: dr.BaseFP, entries: entries, fp: dr.Fingerprint, attrs: dr.Attrs}, r.db.NewBatch(), ev)
	if err != nil {
		return VersionInfo{}, false, err
	}
	return info, true, nil
}

// CommitChange applies structured operations against a baseline and seals
// the result as a new version: a revision, or a new major when the change
// replaces the whole document. Under the document lock it checks that the
// base version is the head, the base fingerprint is the current body's,
// every target block still has its expected content, and that the
// idempotency key is unseen (a repeat returns the first result).
func (r *Repo) CommitChange(ctx context.Context, p ChangeParams) (VersionInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return VersionInfo{}, err
	}
	switch p.Kind {
	case objstore.KindAcceptSuggestion, objstore.KindRestore, objstore.KindImport:
	case "":
		p.Kind = objstore.KindAcceptSuggestion
	default:
		return VersionInfo{}, errs.E(errs.Invalid, "change kind %q (want accept_suggestion, restore or import)", p.Kind)
	}
	if len(p.Ops) == 0 {
		return VersionInfo{}, errs.E(errs.Invalid, "a change needs at least one operation")
	}
	release, err := r.writing(ctx, p.Doc)
	if err != nil {
		return VersionInfo{}, err
	}
	defer release()
	d, err := r.lockedDoc(p.Doc)
	if err != nil {
		return VersionInfo{}, err
	}
	if p.IdempotencyKey != "" {
		if v, err := kv.Get(r.db, idemKey(p.Doc, p.IdempotencyKey)); err == nil {
			var id objstore.ID
			copy(id[:], v)
			return r.infoByHash(p.Doc, id)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return VersionInfo{}, err
		}
	}
	dr, err := r.loadDraft(p.Doc)
	if err != nil {
		return VersionInfo{}, err
	}
	moved := p.BaseVersion != d.Head || p.BaseFingerprint != dr.Fingerprint
	if !p.CarryOver || !moved {
		if p.BaseVersion != d.Head {
			return VersionInfo{}, &folio.ConflictError{Doc: p.Doc, Check: folio.CheckBaseVersion,
				Expected: p.BaseVersion.Short(), Actual: d.Label,
				Reason: fmt.Sprintf("base version %s is not the head %s", p.BaseVersion.Short(), d.Label)}
		}
		if p.BaseFingerprint != dr.Fingerprint {
			return VersionInfo{}, &folio.ConflictError{Doc: p.Doc, Check: folio.CheckFingerprint, Seq: dr.Seq,
				Expected: p.BaseFingerprint.String(), Actual: dr.Fingerprint.String(),
				Reason: "the body changed since the baseline (fingerprint differs)"}
		}
	}
	cur := map[string]int{}
	for i, blk := range dr.Blocks {
		cur[blk.ID] = i
	}
	var stale []folio.ConflictBlock
	ids := make([]string, 0, len(p.TargetBlocks))
	for id := range p.TargetBlocks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		i, ok := cur[id]
		if !ok {
			stale = append(stale, folio.ConflictBlock{ID: id})
			continue
		}
		if dr.Blocks[i].Content != p.TargetBlocks[id] {
			blk, err := r.block(dr.Blocks[i].Content, id)
			if err != nil {
				return VersionInfo{}, err
			}
			stale = append(stale, folio.ConflictBlock{ID: id, Block: &blk, Seq: dr.Blocks[i].Seq})
		}
	}
	if len(stale) > 0 {
		return VersionInfo{}, &folio.ConflictError{Doc: p.Doc, Check: folio.CheckTargetBlocks, Seq: dr.Seq,
			Reason: "target blocks changed since the baseline", Blocks: stale}
	}
	var origBase objstore.ID
	var origFP flowdoc.Fingerprint
	if moved {
		// Carried over: every block the change names is as it was, so
		// the current head and draft become its baseline, against which
		// the checks above (version, fingerprint, targets) now hold.
		origBase, origFP = p.BaseVersion, p.BaseFingerprint
		p.BaseVersion, p.BaseFingerprint = d.Head, dr.Fingerprint
	}
	spec := versionSpec{kind: p.Kind, actor: p.Actor,
		message: p.Message, idemKey: p.IdempotencyKey, suggestionID: p.SuggestionID, value: p.Value,
		baseFP: p.BaseFingerprint, origBase: origBase, origBaseFP: origFP}
	if p.Kind != objstore.KindImport {
		if info, ok, err := r.commitInPlace(d, dr, p.Ops, spec); ok {
			return info, err
		}
	}
	body, err := r.materialize(draftEntries(dr))
	if err != nil {
		return VersionInfo{}, err
	}
	next, err := flowdoc.Apply(body, p.Ops, r.limits)
	if err != nil && moved {
		return VersionInfo{}, &folio.ConflictError{Doc: p.Doc, Check: folio.CheckOperations, Seq: dr.Seq, Detail: err.Error(),
			Reason: fmt.Sprintf("the operations no longer apply to the current article (%v)", err)}
	}
	if err != nil {
		return VersionInfo{}, errs.E(errs.Invalid, "%w", err)
	}
	major := false
	for _, op := range p.Ops {
		if op.Op == flowdoc.ReplaceDocument {
			major = true
		}
	}
	if p.Kind == objstore.KindImport {
		major = true
	}
	spec.major = major
	if major {
		return r.commitBody(p.Doc, d, dr, next, dr.Attrs, spec)
	}
	return r.commitSlots(p.Doc, d, dr, slotsOfChange(dr, next, touchedBy(p.Ops)), dr.Attrs, spec)
}

// commitInPlace commits a change that rewrites one top-level block in
// place — a single replace_block or replace_selection, the accept of a
// block or selection suggestion — in proportion to that block: the
// operation is applied to the block alone, which is validated, encoded
// and hashed alone, the limits are checked from the draft's running
// count and size, and the draft advances in place as a save in place
// does. ok is false, with nothing done, when the change is not of that
// shape or does not apply cleanly (a refused operation, a limit, a block
// that would hold nested blocks): CommitChange then applies it to the
// whole body, which gives the refusal its document-wide paths.
func (r *Repo) commitInPlace(d *docRec, dr *draftRec, ops []flowdoc.Op, spec versionSpec) (VersionInfo, bool, error) {
	if len(ops) != 1 || (ops[0].Op != flowdoc.ReplaceBlock && ops[0].Op != flowdoc.ReplaceSelection) || dr.unstored {
		return VersionInfo{}, false, nil
	}
	dr.index()
	i, ok := dr.pos(ops[0].BlockID)
	if !ok {
		return VersionInfo{}, false, nil
	}
	old, err := r.block(dr.Blocks[i].Content, dr.Blocks[i].ID)
	if err != nil {
		return VersionInfo{}, true, err
	}
	one, err := flowdoc.Apply(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{old}}, ops, r.limits)
	if err != nil || len(one.Blocks) != 1 || one.Blocks[0].ID != old.ID {
		return VersionInfo{}, false, nil
	}
	nb := encodeBlock(one.Blocks[0])
	changes := []preparedChange{{DraftChange: DraftChange{Op: ChangeUpsert}, nb: nb}}
	if len(nb.nested) > 0 || !changesContent(dr, changes) || len(r.checkLimitsInPlace(dr, changes)) > 0 {
		return VersionInfo{}, false, nil
	}
	b := r.db.NewBatch()
	ev, err := r.events(d.ID)
	if err != nil {
		b.Close()
		return VersionInfo{}, true, err
	}
	now := r.now().UnixMilli()
	fp := dr.Fingerprint
	de, err := r.advanceInPlace(b, d.ID, d.Owner, dr, changes, dr.Attrs, now, spec.actor, "")
	if err != nil {
		b.Close()
		return VersionInfo{}, true, err
	}
	de.Unsealed = false // sealed by the version written in this same batch
	if err := ev.add(b, EventDraftUpdated, now, de); err != nil {
		b.Close()
		return VersionInfo{}, true, err
	}
	spec.changed, spec.bodyChanged = eventBlockIDs(de), dr.Fingerprint != fp
	spec.entries, spec.attrs, spec.fp = draftEntries(dr), dr.Attrs, dr.Fingerprint
	info, err := r.writeVersion(d, dr, spec, b, ev)
	return info, true, err
}

// touchedBy returns the ids of the blocks ops name (targets, anchors, the
// blocks they bring); with a replace_document it returns nil: every
// block may change.
func touchedBy(ops []flowdoc.Op) map[string]bool {
	t := map[string]bool{}
	for _, op := range ops {
		if op.Op == flowdoc.ReplaceDocument {
			return nil
		}
		t[op.BlockID] = true
		if op.Block != nil {
			t[op.Block.ID] = true
		}
		for _, b := range op.Blocks {
			t[b.ID] = true
		}
	}
	return t
}

// slotsOfChange makes slots for the body a change produced, encoding
// only the blocks it may have changed: a top-level block of the draft
// that no operation names, by its id or the id of a block nested in it,
// is the same block (an operation changes only what it names), so it
// keeps its draft state and content id without being encoded or hashed
// again; an accept costs what it changes, not the article's size. With
// touched nil every block is encoded, as slotsAgainst does.
func slotsOfChange(dr *draftRec, body flowdoc.Document, touched map[string]bool) []slot {
	old := make(map[string]int, len(dr.Blocks))
	for i, b := range dr.Blocks {
		old[b.ID] = i
	}
	out := make([]slot, len(body.Blocks))
	for i, blk := range body.Blocks {
		out[i].ID = blk.ID
		j, ok := old[blk.ID]
		var ob draftBlock
		if ok {
			ob = dr.Blocks[j]
			out[i].draftBlock, out[i].prev = ob, ob.Content
		}
		if ok && touched != nil && !touched[blk.ID] && !anyTouched(ob.Nested, touched) {
			continue // unchanged: Block stays nil, the draft entry as it is
		}
		out[i].give(encodeBlock(blk))
	}
	return out
}

func anyTouched(ids []string, touched map[string]bool) bool {
	for _, id := range ids {
		if touched[id] {
			return true
		}
	}
	return false
}

func draftEntries(dr *draftRec) []objstore.BlockEntry {
	out := make([]objstore.BlockEntry, len(dr.Blocks))
	for i, b := range dr.Blocks {
		out[i] = objstore.BlockEntry{ID: b.ID, Content: b.Content}
	}
	return out
}

// commitBody makes body the draft and seals it as a version in one batch:
// the draft advances one seq (changed blocks take it), a draft.updated
// event tells editors, and writeVersion seals.
func (r *Repo) commitBody(doc string, d *docRec, dr *draftRec, body flowdoc.Document, attrs flowdoc.Attributes, spec versionSpec) (VersionInfo, error) {
	return r.commitSlots(doc, d, dr, slotsAgainst(dr, encodeBody(body)), attrs, spec)
}

// commitSlots is commitBody of a body already made into slots.
func (r *Repo) commitSlots(doc string, d *docRec, dr *draftRec, slots []slot, attrs flowdoc.Attributes, spec versionSpec) (VersionInfo, error) {
	b := r.db.NewBatch()
	entries, err := r.putSlots(b, d.Owner, slots)
	if err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	ev, err := r.events(doc)
	if err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	now := r.now().UnixMilli()
	fp := dr.Fingerprint
	oldBlocks, oldTombs := dr.Blocks, slices.Clone(dr.Tombs)
	de := r.advanceDraft(dr, slots, attrs, now, spec.actor, "")
	de.Unsealed = false // sealed by the version written in this same batch
	if err := putDraftDiff(b, doc, oldBlocks, oldTombs, dr); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	if err := ev.addSealedDraft(b, now, de); err != nil {
		b.Close()
		return VersionInfo{}, err
	}
	spec.changed, spec.bodyChanged = eventBlockIDs(de), dr.Fingerprint != fp
	spec.entries, spec.attrs = entries, attrs
	return r.writeVersion(d, dr, spec, b, ev)
}

// slotsAgainst makes slots for a whole new body, keeping the draft state
// of blocks whose content did not change.
func slotsAgainst(dr *draftRec, body []*newBlock) []slot {
	old := make(map[string]draftBlock, len(dr.Blocks))
	for _, b := range dr.Blocks {
		old[b.ID] = b
	}
	out := make([]slot, len(body))
	for i, nb := range body {
		out[i].ID = nb.blk.ID
		if ob, ok := old[nb.blk.ID]; ok {
			out[i].draftBlock, out[i].prev = ob, ob.Content
		}
		out[i].give(nb)
	}
	return out
}

// encodeBody encodes every block of a sanitized and validated body.
func encodeBody(body flowdoc.Document) []*newBlock {
	out := make([]*newBlock, len(body.Blocks))
	for i, b := range body.Blocks {
		out[i] = encodeBlock(b)
	}
	return out
}

// advanceDraft makes slots the draft's body as one new draft seq: blocks
// whose content changed take the seq, removed ones leave tombstones. It
// returns the event that describes the step.
func (r *Repo) advanceDraft(dr *draftRec, slots []slot, attrs flowdoc.Attributes, now int64, actor, session string) DraftEvent {
	seq := dr.Seq + 1
	old := make(map[string]objstore.ID, len(dr.Blocks))
	for _, blk := range dr.Blocks {
		old[blk.ID] = blk.Content
	}
	de := DraftEvent{Seq: seq, Actor: actor, Session: session}
	blocks := make([]draftBlock, len(slots))
	inNew := make(map[string]bool, len(slots))
	orderChanged := len(slots) != len(dr.Blocks)
	for i, s := range slots {
		inNew[s.ID] = true
		if !orderChanged && dr.Blocks[i].ID != s.ID {
			orderChanged = true
		}
		blocks[i] = s.draftBlock
		if c, ok := old[s.ID]; ok && c == s.Content {
			continue
		}
		blocks[i].Seq = seq
		var blk flowdoc.Block
		if s.Block != nil {
			blk = s.Block.Clone()
		} else if b, err := r.block(s.Content, s.ID); err == nil {
			blk = b
		}
		de.Blocks = append(de.Blocks, EventBlock{ID: s.ID, Block: &blk})
	}
	for _, blk := range dr.Blocks {
		if !inNew[blk.ID] {
			dr.Tombs = append(dr.Tombs, tomb{ID: blk.ID, Seq: seq})
			de.Blocks = append(de.Blocks, EventBlock{ID: blk.ID})
		}
	}
	// A block that came back is no longer a tombstone.
	kept := dr.Tombs[:0]
	for _, t := range dr.Tombs {
		if !inNew[t.ID] {
			kept = append(kept, t)
		}
	}
	dr.Tombs = kept
	if len(dr.Tombs) > maxTombs {
		dr.Tombs = dr.Tombs[len(dr.Tombs)-maxTombs:]
	}
	if orderChanged {
		de.Order = make([]string, len(slots))
		for i, s := range slots {
			de.Order[i] = s.ID
		}
	}
	if !attrsEqual(attrs, dr.Attrs) {
		a := attrs
		de.Attrs = &a
		dr.AttrsSeq = seq
	}
	dr.Seq, dr.Blocks, dr.Attrs, dr.idx, dr.LastActor = seq, blocks, attrs, nil, actor
	dr.stamp(now, r.boot)
	de.Fingerprint, de.Unsealed = dr.Fingerprint, dr.Unsealed
	return de
}

// eventBlockIDs lists the ids of a draft event's blocks.
func eventBlockIDs(de DraftEvent) []string {
	out := make([]string, len(de.Blocks))
	for i, eb := range de.Blocks {
		out[i] = eb.ID
	}
	return out
}

func attrsEqual(a, b flowdoc.Attributes) bool {
	if a.Title != b.Title || a.Summary != b.Summary || a.Slug != b.Slug || a.Category != b.Category ||
		a.Status != b.Status || a.Visibility != b.Visibility || len(a.Tags) != len(b.Tags) {
		return false
	}
	for i := range a.Tags {
		if a.Tags[i] != b.Tags[i] {
			return false
		}
	}
	return true
}

// Restore appends a new major version of kind restore whose body and
// attributes are those of version label. An unsealed draft is sealed
// first (reason restore), so nothing typed is lost.
func (r *Repo) Restore(ctx context.Context, doc, label, actor string) (VersionInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return VersionInfo{}, err
	}
	var f fieldErrors
	checkLabel(&f, "label", label)
	if err := f.err(); err != nil {
		return VersionInfo{}, err
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return VersionInfo{}, err
	}
	defer release()
	src, err := r.versionByLabel(doc, label)
	if err != nil {
		return VersionInfo{}, err
	}
	d, dr, err := r.sealForRestore(doc, actor)
	if err != nil {
		return VersionInfo{}, err
	}
	body, err := r.materialize(src.Blocks)
	if err != nil {
		return VersionInfo{}, err
	}
	return r.commitBody(doc, d, dr, body, src.Attrs, versionSpec{kind: objstore.KindRestore,
		reason: objstore.ReasonRestore, actor: actor, major: true, restoredFrom: src.Label,
		baseFP: dr.Fingerprint, message: "restore " + src.Label})
}

// sealForRestore seals an unsealed draft (reason restore) so that a
// restore loses nothing typed, and returns the document and draft after.
func (r *Repo) sealForRestore(doc, actor string) (*docRec, *draftRec, error) {
	if _, _, err := r.checkpointLocked(doc, objstore.ReasonRestore, actor, ""); err != nil {
		return nil, nil, err
	}
	d, err := r.lockedDoc(doc)
	if err != nil {
		return nil, nil, err
	}
	dr, err := r.loadDraft(doc)
	return d, dr, err
}

// RestoreBlock brings one block back to its content at version label, as a
// new revision of kind restore. A block deleted since comes back after the
// nearest block that preceded it at label and still exists.
func (r *Repo) RestoreBlock(ctx context.Context, doc, label, blockID, actor string) (VersionInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return VersionInfo{}, err
	}
	var f fieldErrors
	checkLabel(&f, "label", label)
	if !flowdoc.ValidID(blockID) {
		f.add("block", "a block id is 1-64 characters of A-Z a-z 0-9 _ -")
	}
	if err := f.err(); err != nil {
		return VersionInfo{}, err
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return VersionInfo{}, err
	}
	defer release()
	src, err := r.versionByLabel(doc, label)
	if err != nil {
		return VersionInfo{}, err
	}
	at := -1
	for i, e := range src.Blocks {
		if e.ID == blockID {
			at = i
		}
	}
	if at < 0 {
		return VersionInfo{}, &NotFoundError{What: "block", Doc: doc, Name: blockID, Label: label}
	}
	d, dr, err := r.sealForRestore(doc, actor)
	if err != nil {
		return VersionInfo{}, err
	}
	entries := draftEntries(dr)
	target := src.Blocks[at]
	found := false
	for i, e := range entries {
		if e.ID == blockID {
			if e.Content == target.Content {
				return VersionInfo{}, errs.E(errs.Invalid, "block %s already has its content of %s", blockID, label)
			}
			entries[i].Content, found = target.Content, true
		}
	}
	if !found {
		pos := 0
		present := map[string]int{}
		for i, e := range entries {
			present[e.ID] = i
		}
		for j := at - 1; j >= 0; j-- {
			if i, ok := present[src.Blocks[j].ID]; ok {
				pos = i + 1
				break
			}
		}
		entries = append(entries[:pos], append([]objstore.BlockEntry{target}, entries[pos:]...)...)
	}
	body, err := r.materialize(entries)
	if err != nil {
		return VersionInfo{}, err
	}
	if body, err = r.normalize(body); err != nil {
		return VersionInfo{}, err
	}
	return r.commitBody(doc, d, dr, body, dr.Attrs, versionSpec{kind: objstore.KindRestore,
		reason: objstore.ReasonRestore, actor: actor, restoredFrom: src.Label, restoreBlock: blockID,
		baseFP: dr.Fingerprint, message: "restore block " + blockID + " from " + src.Label})
}
