package repo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/flowdoc/merge"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// Draft change ops.
const (
	ChangeUpsert = "upsert"
	ChangeDelete = "delete"
	ChangeMove   = "move"
)

// Draft returns document doc's working copy.
func (r *Repo) Draft(ctx context.Context, doc string) (Draft, error) {
	if err := ctxErr(ctx); err != nil {
		return Draft{}, err
	}
	if _, err := r.loadDoc(doc); err != nil {
		return Draft{}, err
	}
	dr, err := r.readDraftSnapshot(doc)
	if err != nil {
		return Draft{}, err
	}
	return r.draftOf(doc, dr)
}

func (r *Repo) draftOf(doc string, dr *draftRec) (Draft, error) {
	body, err := r.materialize(draftEntries(dr))
	if err != nil {
		return Draft{}, err
	}
	return Draft{Doc: doc, Seq: dr.Seq, Body: body, Attrs: dr.Attrs, Fingerprint: dr.Fingerprint,
		Head: dr.BaseLabel, HeadID: dr.Base, Unsealed: dr.Unsealed,
		UnsealedSince: dr.UnsealedSince, LastChange: dr.LastChange, SavedBy: dr.LastActor}, nil
}

// OpenDraft returns the draft for an editor that opens doc. A draft left
// unsealed by an earlier session (a crash, or a previous process) is first
// sealed as a recovery checkpoint, whose info is returned; on a disk below
// its reserve (errs.StorageFull) the checkpoint waits and the draft is
// returned unsealed, as opening is a read.
func (r *Repo) OpenDraft(ctx context.Context, doc, actor string) (Draft, *VersionInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return Draft{}, nil, err
	}
	release, err := r.writing(ctx, doc)
	if err != nil {
		return Draft{}, nil, err
	}
	defer release()
	if _, err := r.lockedDoc(doc); err != nil {
		return Draft{}, nil, err
	}
	dr, err := r.loadDraft(doc)
	if err != nil {
		return Draft{}, nil, err
	}
	var sealed *VersionInfo
	if dr.Unsealed && dr.Boot != r.boot {
		info, _, err := r.checkpointLocked(doc, objstore.ReasonRecovery, actor, "recovered unsealed draft")
		switch {
		case kv.BelowReserve(err):
			// A recovery checkpoint is history, not a read: on a disk
			// below its reserve it waits, and the editor gets the draft
			// as it is (still unsealed); the first open after writes
			// resume seals it.
			r.cp.log.Warn("recovery checkpoint waits until writes resume: the disk is below its reserve", "doc", doc)
		case err != nil:
			return Draft{}, nil, err
		default:
			sealed = &info
			if dr, err = r.loadDraft(doc); err != nil {
				return Draft{}, nil, err
			}
		}
	}
	d, err := r.draftOf(doc, dr)
	r.keepDraft(doc, dr)
	return d, sealed, err
}

// SaveDraft stores a draft save durably and returns the new seq. With
// Changes, every block the save touches must be unchanged since BaseSeq;
// then the save is rebased onto the current draft. With Body, the same
// rule applies to every block whose content or presence differs. A
// touched block changed since BaseSeq is a *folio.ConflictError carrying the
// server's version of those blocks; nothing is merged inside a block.
//
// Cost: a save over the request limits (RequestLimits) is refused before
// any other work. Everything proportional to the save's input (checking
// fields, sanitizing, validating, encoding and hashing new blocks) is done
// before the document lock is taken; under it the save costs in proportion
// to the blocks it changes plus one pass over the draft's block list. A
// ctx cancelled before the commit stores nothing.
func (r *Repo) SaveDraft(ctx context.Context, p SaveParams) (SaveResult, error) {
	if err := ctxErr(ctx); err != nil {
		return SaveResult{}, err
	}
	if p.Align && p.Body == nil {
		return SaveResult{}, errs.E(errs.Invalid, "align needs a body")
	}
	var prep *savePrep
	var err error
	if !p.Align {
		// Checked and encoded before the lock; an aligned body only
		// once it has its ids, under the lock.
		if prep, err = r.prepareSave(ctx, p); err != nil {
			return SaveResult{}, err
		}
	}
	var pre map[string]premerged
	if p.Merge && prep != nil && prep.body == nil {
		pre = r.premerge(p, prep)
		if r.afterPremerge != nil {
			r.afterPremerge(p.Doc)
		}
	}
	release, err := r.writing(ctx, p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	defer release()
	d, err := r.lockedDoc(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	dr, err := r.loadDraft(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	if p.Align {
		cur, err := r.materialize(draftEntries(dr))
		if err != nil {
			return SaveResult{}, err
		}
		aligned := flowdoc.Align(cur, *p.Body)
		p.Body = &aligned
		if prep, err = r.prepareSave(ctx, p); err != nil {
			return SaveResult{}, err
		}
	}
	// dr goes back to the cache when this returns unless it was changed
	// and the change did not commit (keep is false then).
	keep := true
	defer func() {
		if keep {
			r.keepDraft(p.Doc, dr)
		}
	}()
	if p.BaseSeq > dr.Seq {
		return SaveResult{}, errs.E(errs.Invalid, "baseSeq %d is ahead of the draft (seq %d); reopen the document", p.BaseSeq, dr.Seq)
	}
	attrs := dr.Attrs
	if p.Attrs != nil {
		attrs = *p.Attrs
	}
	seq0 := dr.Seq
	var merged map[string]bool
	var mergedBlocks []EventBlock
	var authors []string
	if p.Merge && prep.body == nil {
		merged, mergedBlocks, authors = r.mergeStale(p, dr, prep, pre)
	}
	inPlace := prep.body == nil && changesInPlace(dr, prep.changes)
	var slots []slot
	if !inPlace {
		var touched []string
		switch {
		case prep.body != nil:
			slots = slotsAgainst(dr, prep.body)
			touched = touchedBySlots(dr, slots)
		case len(prep.changes) > 0:
			slots, touched, err = applyChanges(dr, prep.changes)
			var ce *folio.ConflictError
			if errors.As(err, &ce) {
				ce.Doc, ce.Seq, ce.BaseSeq = p.Doc, dr.Seq, p.BaseSeq
				ce.Blocks = r.staleBlocks(dr, without(touched, merged), p.BaseSeq)
				return SaveResult{}, ce
			}
			if err != nil {
				return SaveResult{}, err
			}
			if ps := r.checkLimits(slots); len(ps) > 0 {
				return SaveResult{}, invalid(ps)
			}
		default:
			slots = draftSlots(dr)
		}
		if conflict := r.staleBlocks(dr, without(touched, merged), p.BaseSeq); len(conflict) > 0 {
			return SaveResult{}, staleSave(p, dr, folio.CheckBlocks, "blocks changed since baseSeq", conflict)
		}
	} else {
		if conflict := r.staleInPlace(dr, prep.changes, p.BaseSeq, merged); len(conflict) > 0 {
			return SaveResult{}, staleSave(p, dr, folio.CheckBlocks, "blocks changed since baseSeq", conflict)
		}
		if ps := r.checkLimitsInPlace(dr, prep.changes); len(ps) > 0 {
			return SaveResult{}, invalid(ps)
		}
	}
	if p.Attrs != nil && dr.AttrsSeq > p.BaseSeq && !attrsEqual(*p.Attrs, dr.Attrs) {
		return SaveResult{}, staleSave(p, dr, folio.CheckAttrs, "attributes changed since baseSeq", nil)
	}
	b := r.db.NewBatch()
	owned := true // b is closed here unless writeVersion took it
	defer func() {
		if owned {
			b.Close()
		}
	}()
	res := SaveResult{Seq: dr.Seq, Fingerprint: dr.Fingerprint, Unsealed: dr.Unsealed}
	var changedBody bool
	var entries []objstore.BlockEntry
	if inPlace {
		changedBody = changesContent(dr, prep.changes) || !attrsEqual(attrs, dr.Attrs)
	} else {
		if entries, err = r.putSlots(b, d.Owner, slots); err != nil {
			return SaveResult{}, err
		}
		changedBody = fingerprintOf(entries) != dr.Fingerprint || !attrsEqual(attrs, dr.Attrs)
	}
	ev, err := r.events(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	at := r.now()
	now := at.UnixMilli()
	var changed []string
	bodyChanged := false
	// The revisions this save makes, for merging later saves (revs.go):
	// the state before of each block it changes, and the new state (zero
	// content: deleted).
	var olds, news []blockRev
	if changedBody {
		keep = false // dr changes now: it is kept again only once committed
		fp := dr.Fingerprint
		var de DraftEvent
		if inPlace {
			for _, c := range prep.changes {
				if db := dr.Blocks[dr.at(c.nb.blk.ID)]; db.Content != c.nb.content.ID {
					olds = append(olds, blockRev{id: db.ID, seq: db.Seq, content: db.Content})
					news = append(news, blockRev{id: db.ID, content: c.nb.content.ID, actor: p.Actor, blk: &c.nb.blk, size: c.nb.size})
				}
			}
		} else {
			kept := make(map[string]bool, len(slots))
			for _, s := range slots {
				kept[s.ID] = true
				if s.prev != s.Content {
					if !s.prev.IsZero() {
						olds = append(olds, blockRev{id: s.ID, seq: s.Seq, content: s.prev})
					}
					news = append(news, blockRev{id: s.ID, content: s.Content, actor: p.Actor, blk: s.Block, size: s.Size})
				}
			}
			for _, db := range dr.Blocks {
				if !kept[db.ID] {
					news = append(news, blockRev{id: db.ID, actor: p.Actor})
				}
			}
		}
		if inPlace {
			if de, err = r.advanceInPlace(b, p.Doc, d.Owner, dr, prep.changes, attrs, now, p.Actor, p.Session); err != nil {
				return SaveResult{}, err
			}
			if err := putDraftHeader(b, p.Doc, dr); err != nil {
				return SaveResult{}, err
			}
		} else {
			oldBlocks, oldTombs := dr.Blocks, slices.Clone(dr.Tombs)
			de = r.advanceDraft(dr, slots, attrs, now, p.Actor, p.Session)
			if err := putDraftDiff(b, p.Doc, oldBlocks, oldTombs, dr); err != nil {
				return SaveResult{}, err
			}
		}
		changed, bodyChanged = eventBlockIDs(de), dr.Fingerprint != fp
		de.Authors = authors
		if p.Seal != "" && dr.Unsealed {
			err = ev.addSealedDraft(b, now, de) // the version below seals it, in this batch
		} else {
			err = ev.add(b, EventDraftUpdated, now, de)
		}
		if err != nil {
			return SaveResult{}, err
		}
		res = SaveResult{Seq: dr.Seq, Fingerprint: dr.Fingerprint, Unsealed: dr.Unsealed}
		for _, eb := range de.Blocks {
			res.Changed = append(res.Changed, eb.ID)
		}
	}
	res.Merged = mergedBlocks
	if err := ctxErr(ctx); err != nil {
		return SaveResult{}, err // the caller is gone: store nothing it cannot be told of
	}
	if p.Seal != "" && dr.Unsealed {
		owned, keep = false, false // writeVersion keeps dr once it committed
		info, err := r.writeVersion(d, dr, versionSpec{kind: objstore.KindCheckpoint, reason: p.Seal, actor: p.Actor,
			message: p.Message, baseFP: dr.BaseFP, entries: draftEntries(dr), fp: dr.Fingerprint, attrs: dr.Attrs,
			changed: changed, bodyChanged: bodyChanged}, b, ev)
		if err != nil {
			return SaveResult{}, err
		}
		res.Unsealed, res.Version = false, &info
		return res, nil
	}
	if !changedBody {
		return res, nil // nothing changed: acknowledged without a new seq
	}
	if r.changeHook() != nil {
		if err := r.callHook(b, ev, &Change{Doc: p.Doc, Actor: p.Actor, Kind: ChangeDraft, Changed: changed,
			BodyChanged: bodyChanged, Time: now}); err != nil {
			return SaveResult{}, err
		}
	}
	if err := r.EnqueueDoc(b, p.Doc); err != nil {
		return SaveResult{}, err
	}
	if r.beforeSave != nil {
		r.beforeSave(b)
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return SaveResult{}, fmt.Errorf("save draft %s: %w", p.Doc, err)
	}
	keep = true
	r.revs.record(p.Doc, seq0, dr.Seq, olds, news)
	r.cp.saved(p.Doc, p.Actor, at, dr.Unsealed, time.UnixMilli(dr.UnsealedSince))
	r.publish(ev)
	r.OutboxCommitted()
	r.notify(Event{Doc: p.Doc, Kind: ChangeDraft, Actor: p.Actor, Changed: changed, BodyChanged: bodyChanged, Time: now})
	return res, nil
}

// maxProblems bounds the problems one refused save lists.
const maxProblems = 100

// savePrep is a save checked and encoded ahead of the document lock.
type savePrep struct {
	body    []*newBlock // a full body (nil: none)
	changes []preparedChange
}

// preparedChange is a change whose block (upsert) is ready to store.
type preparedChange struct {
	DraftChange
	nb *newBlock
}

// prepareSave does all of a save's work that does not depend on the
// draft, in this order: the request limits (before anything that costs in
// proportion to the input), the fields, then each new block sanitized,
// validated, encoded and hashed, checking ctx as it goes.
func (r *Repo) prepareSave(ctx context.Context, p SaveParams) (*savePrep, error) {
	if p.Body == nil && len(p.Changes) == 0 && p.Attrs == nil {
		return nil, errs.E(errs.Invalid, "a save needs a body, changes or attributes")
	}
	if p.Body != nil && len(p.Changes) > 0 {
		return nil, errs.E(errs.Invalid, "a save carries a full body or changes, not both")
	}
	if len(p.Changes) > r.req.MaxChanges {
		return nil, TooMany("changes", r.req.MaxChanges)
	}
	if p.Body != nil {
		var c flowdoc.Counts
		if err := c.Add(p.Body.Blocks, r.req.Decode()); err != nil {
			return nil, LimitError(err)
		}
	} else {
		blocks := make([]*flowdoc.Block, len(p.Changes))
		for i := range p.Changes {
			blocks[i] = p.Changes[i].Block
		}
		if err := r.req.checkCounts(blocks...); err != nil {
			return nil, err
		}
	}
	var f fieldErrors
	if p.Attrs != nil {
		checkAttrs(&f, *p.Attrs)
	}
	f.line("session", p.Session, MaxSessionBytes)
	f.text("message", p.Message, MaxMessageBytes, true)
	if p.Seal != "" {
		checkReason(&f, "seal", p.Seal)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	prep := &savePrep{}
	if p.Body != nil {
		body, err := r.normalize(*p.Body)
		if err != nil {
			return nil, err
		}
		prep.body = make([]*newBlock, len(body.Blocks))
		for i, b := range body.Blocks {
			if i%256 == 0 {
				if err := ctxErr(ctx); err != nil {
					return nil, err
				}
			}
			prep.body[i] = encodeBlock(b)
		}
		return prep, nil
	}
	var problems []flowdoc.Problem
	prep.changes = make([]preparedChange, len(p.Changes))
	for i, c := range p.Changes {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		prep.changes[i].DraftChange = c
		switch c.Op {
		case ChangeUpsert:
			if c.Block == nil {
				return nil, errs.E(errs.Invalid, "changes[%d]: upsert needs a block", i)
			}
			one, size, err := flowdoc.NormalizeSize(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{*c.Block}}, r.limits)
			var ve *flowdoc.ValidationError
			if errors.As(err, &ve) {
				for _, pr := range ve.Problems {
					pr.Path = fmt.Sprintf("changes[%d].block", i) + strings.TrimPrefix(pr.Path, "blocks[0]")
					problems = append(problems, pr)
				}
				if len(problems) >= maxProblems { // the answer stays small too
					problems = append(problems[:maxProblems], flowdoc.Problem{Path: "changes",
						Rule: fmt.Sprintf("more than %d problems; fix these first", maxProblems)})
					return nil, invalid(problems)
				}
				continue
			} else if err != nil {
				return nil, errs.E(errs.Invalid, "changes[%d]: %w", i, err)
			}
			if p.Merge && merge.Mergeable(one.Blocks[0].Type) {
				prep.changes[i].nb = hashSized(one.Blocks[0], size-emptyBodySize) // sealed by premerge or under the lock
			} else {
				prep.changes[i].nb = encodeSized(one.Blocks[0], size-emptyBodySize)
			}
		case ChangeDelete, ChangeMove:
			if c.BlockID == "" {
				return nil, errs.E(errs.Invalid, "changes[%d]: %s needs blockId", i, c.Op)
			}
			if c.Op == ChangeMove && c.After == nil {
				return nil, errs.E(errs.Invalid, "changes[%d]: move needs after (\"\" for the start)", i)
			}
		default:
			return nil, errs.E(errs.Invalid, "changes[%d].op %q (want upsert, delete or move)", i, c.Op)
		}
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	return prep, nil
}

// draftSlots makes slots that keep every block of the draft.
func draftSlots(dr *draftRec) []slot {
	out := make([]slot, len(dr.Blocks))
	for i, b := range dr.Blocks {
		out[i] = slot{draftBlock: b, prev: b.Content}
	}
	return out
}

// touchedBySlots lists the blocks whose presence or content differs
// between the draft and hashed slots.
func touchedBySlots(dr *draftRec, slots []slot) []string {
	old := make(map[string]objstore.ID, len(dr.Blocks))
	for _, b := range dr.Blocks {
		old[b.ID] = b.Content
	}
	var out []string
	seen := make(map[string]bool, len(slots))
	for _, s := range slots {
		seen[s.ID] = true
		if c, ok := old[s.ID]; !ok || c != s.Content {
			out = append(out, s.ID)
		}
	}
	for _, b := range dr.Blocks {
		if !seen[b.ID] {
			out = append(out, b.ID)
		}
	}
	return out
}

// checkLimits checks what a document-wide validation would, from the
// slots' meta: unique ids (nested ones included), the block count and the
// canonical JSON size.
func (r *Repo) checkLimits(slots []slot) []flowdoc.Problem {
	var ps []flowdoc.Problem
	seen := make(map[string]bool, len(slots))
	count, size := 0, emptyBodySize
	for i, s := range slots {
		for _, id := range append([]string{s.ID}, s.Nested...) {
			if seen[id] {
				ps = append(ps, flowdoc.Problem{Path: fmt.Sprintf("blocks[%d]", i), Rule: fmt.Sprintf("block id %q is used twice", id)})
			}
			seen[id] = true
		}
		count += s.Count
		size += s.Size
		if i > 0 {
			size++
		}
	}
	if r.limits.MaxBlocks > 0 && count > r.limits.MaxBlocks {
		ps = append(ps, flowdoc.Problem{Path: "blocks", Rule: fmt.Sprintf("document has %d blocks, the limit is %d", count, r.limits.MaxBlocks)})
	}
	if r.limits.MaxBytes > 0 && size > r.limits.MaxBytes {
		ps = append(ps, flowdoc.Problem{Path: "$", Rule: fmt.Sprintf("document is %d bytes, the limit is %d", size, r.limits.MaxBytes)})
	}
	return ps
}

// applyChanges applies prepared block-level changes to the draft's
// blocks, in time proportional to the draft's blocks plus the changes:
// the blocks are a linked list indexed by id, so finding, inserting,
// moving and deleting a block are constant time. checkLimits does the
// document-wide checks. It returns the ids the changes touch: changed,
// deleted and moved blocks and the anchors they are placed after.
func applyChanges(dr *draftRec, changes []preparedChange) ([]slot, []string, error) {
	l := newBlockList(dr)
	var touched []string
	// place links n after the block after names: at the end when nil, at
	// the start when "".
	place := func(n *blockLink, after *string, i int) error {
		at := l.head.prev
		if after != nil {
			if *after == "" {
				at = &l.head
			} else {
				touched = append(touched, *after)
				if at = l.byID[*after]; at == nil {
					return missingBlock(*after, fmt.Sprintf("changes[%d].after: block %q is not in the draft", i, *after))
				}
			}
		}
		l.insert(at, n)
		return nil
	}
	for i, c := range changes {
		switch c.Op {
		case ChangeUpsert:
			id := c.nb.blk.ID
			touched = append(touched, id)
			n := l.byID[id]
			switch {
			case n != nil && c.After == nil:
				n.s.give(c.nb)
			case n != nil:
				l.remove(n)
				n.s.give(c.nb)
				if err := place(n, c.After, i); err != nil {
					return nil, touched, err
				}
			default:
				n = &blockLink{s: slot{draftBlock: draftBlock{ID: id}}}
				n.s.give(c.nb)
				if err := place(n, c.After, i); err != nil {
					return nil, touched, err
				}
			}
		case ChangeDelete:
			touched = append(touched, c.BlockID)
			if n := l.byID[c.BlockID]; n != nil {
				l.remove(n)
			} // already gone: the tombstone check decides whether that is a conflict
		case ChangeMove:
			touched = append(touched, c.BlockID)
			n := l.byID[c.BlockID]
			if n == nil {
				return nil, touched, missingBlock(c.BlockID, fmt.Sprintf("changes[%d]: block %q is not in the draft", i, c.BlockID))
			}
			l.remove(n)
			if err := place(n, c.After, i); err != nil {
				return nil, touched, err
			}
		}
	}
	return l.slots(), touched, nil
}

// blockList is a draft's blocks as a doubly linked list indexed by id.
type blockList struct {
	head blockLink // sentinel: head.next is the first block, head.prev the last
	byID map[string]*blockLink
	n    int
}

type blockLink struct {
	s          slot
	prev, next *blockLink
}

func newBlockList(dr *draftRec) *blockList {
	l := &blockList{byID: make(map[string]*blockLink, len(dr.Blocks))}
	l.head.prev, l.head.next = &l.head, &l.head
	links := make([]blockLink, len(dr.Blocks))
	for i, b := range dr.Blocks {
		links[i].s = slot{draftBlock: b, prev: b.Content}
		l.insert(l.head.prev, &links[i])
	}
	return l
}

func (l *blockList) insert(at, n *blockLink) {
	n.prev, n.next = at, at.next
	at.next.prev = n
	at.next = n
	l.byID[n.s.ID] = n
	l.n++
}

func (l *blockList) remove(n *blockLink) {
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
	delete(l.byID, n.s.ID)
	l.n--
}

func (l *blockList) slots() []slot {
	out := make([]slot, 0, l.n)
	for n := l.head.next; n != &l.head; n = n.next {
		out = append(out, n.s)
	}
	return out
}

// staleBlocks returns the server's state of every touched block that
// changed after baseSeq (or was deleted after it).
func (r *Repo) staleBlocks(dr *draftRec, touched []string, baseSeq uint64) []folio.ConflictBlock {
	pos := make(map[string]int, len(dr.Blocks))
	for i, b := range dr.Blocks {
		pos[b.ID] = i
	}
	tombs := map[string]uint64{}
	for _, t := range dr.Tombs {
		tombs[t.ID] = t.Seq
	}
	var out []folio.ConflictBlock
	seen := map[string]bool{}
	for _, id := range touched {
		if seen[id] {
			continue
		}
		seen[id] = true
		if i, ok := pos[id]; ok {
			if db := dr.Blocks[i]; db.Seq > baseSeq {
				cb := folio.ConflictBlock{ID: id, Seq: db.Seq}
				if b, err := r.block(db.Content, id); err == nil {
					cb.Block = &b
				}
				out = append(out, cb)
			}
		} else if s, ok := tombs[id]; ok && s > baseSeq {
			out = append(out, folio.ConflictBlock{ID: id, Seq: s})
		}
	}
	return out
}

// Saves in place. Most saves (an editor's keystrokes) replace the
// content of blocks the draft has, where they are. Such a save is checked,
// applied and written in proportion to its changes, with the draft's
// index (draftIndex): no pass over the draft's blocks but the fingerprint.

// draftIndex indexes a draft's blocks for saves in place.
type draftIndex struct {
	// byID holds the indexes in Blocks of the top-level blocks, ordered
	// by block id: 4 bytes a block, where a map would take some 30, and
	// the index lives as long as the draft stays cached.
	byID  []int32
	count int // blocks, nested ones included
	size  int // what checkLimits sums for the body's canonical JSON
}

// index returns dr's index, building it when the block list changed.
func (dr *draftRec) index() *draftIndex {
	if dr.idx != nil {
		return dr.idx
	}
	x := &draftIndex{byID: make([]int32, len(dr.Blocks)), size: emptyBodySize}
	for i := range dr.Blocks {
		b := &dr.Blocks[i]
		x.byID[i] = int32(i)
		x.count += b.Count
		x.size += b.Size
		if i > 0 {
			x.size++
		}
	}
	slices.SortFunc(x.byID, func(a, b int32) int { return strings.Compare(dr.Blocks[a].ID, dr.Blocks[b].ID) })
	dr.idx = x
	return x
}

// pos returns the index in dr.Blocks of the top-level block id; dr's
// index must be built (index).
func (dr *draftRec) pos(id string) (int, bool) {
	x := dr.idx.byID
	j, ok := slices.BinarySearchFunc(x, id, func(i int32, id string) int { return strings.Compare(dr.Blocks[i].ID, id) })
	if !ok {
		return 0, false
	}
	return int(x[j]), true
}

// at returns the index in dr.Blocks of the top-level block id, which the
// draft holds (changesInPlace checked it).
func (dr *draftRec) at(id string) int {
	i, _ := dr.pos(id)
	return i
}

// changesInPlace reports whether every change upserts a block the draft
// has, where it is, once, with content that nests no block (so the ids of
// the body cannot collide).
func changesInPlace(dr *draftRec, changes []preparedChange) bool {
	if len(changes) == 0 || len(changes) > 64 || dr.unstored {
		return false // (an unstored draft has no order keys yet)
	}
	dr.index()
	for i, c := range changes {
		if c.Op != ChangeUpsert || c.After != nil || c.nb == nil || len(c.nb.nested) > 0 {
			return false
		}
		if _, ok := dr.pos(c.nb.blk.ID); !ok {
			return false
		}
		for _, o := range changes[:i] {
			if o.nb.blk.ID == c.nb.blk.ID {
				return false
			}
		}
	}
	return true
}

// staleInPlace is staleBlocks for a save in place.
func (r *Repo) staleInPlace(dr *draftRec, changes []preparedChange, baseSeq uint64, merged map[string]bool) []folio.ConflictBlock {
	var out []folio.ConflictBlock
	for _, c := range changes {
		id := c.nb.blk.ID
		if merged[id] {
			continue
		}
		if db := dr.Blocks[dr.at(id)]; db.Seq > baseSeq {
			cb := folio.ConflictBlock{ID: id, Seq: db.Seq}
			if b, err := r.block(db.Content, id); err == nil {
				cb.Block = &b
			}
			out = append(out, cb)
		}
	}
	return out
}

// checkLimitsInPlace is checkLimits for a save in place: the ids do not
// change, so only the block count and the size can break a limit.
func (r *Repo) checkLimitsInPlace(dr *draftRec, changes []preparedChange) []flowdoc.Problem {
	count, size := dr.idx.count, dr.idx.size
	for _, c := range changes {
		old := &dr.Blocks[dr.at(c.nb.blk.ID)]
		count += c.nb.count - old.Count
		size += c.nb.size - old.Size
	}
	var ps []flowdoc.Problem
	if r.limits.MaxBlocks > 0 && count > r.limits.MaxBlocks {
		ps = append(ps, flowdoc.Problem{Path: "blocks", Rule: fmt.Sprintf("document has %d blocks, the limit is %d", count, r.limits.MaxBlocks)})
	}
	if r.limits.MaxBytes > 0 && size > r.limits.MaxBytes {
		ps = append(ps, flowdoc.Problem{Path: "$", Rule: fmt.Sprintf("document is %d bytes, the limit is %d", size, r.limits.MaxBytes)})
	}
	return ps
}

// changesContent reports whether a save in place changes any block.
func changesContent(dr *draftRec, changes []preparedChange) bool {
	for _, c := range changes {
		if dr.Blocks[dr.at(c.nb.blk.ID)].Content != c.nb.content.ID {
			return true
		}
	}
	return false
}

// advanceInPlace is advanceDraft for a save in place: it applies the
// changes to dr as one new draft seq, adds the new content objects and
// the changed block entries to b, and returns the event. The block list
// and the tombstones stay as they are.
func (r *Repo) advanceInPlace(b *kv.Batch, doc, owner string, dr *draftRec, changes []preparedChange, attrs flowdoc.Attributes, now int64, actor, session string) (DraftEvent, error) {
	seq := dr.Seq + 1
	x := dr.idx
	de := DraftEvent{Seq: seq, Actor: actor, Session: session}
	at := make([]int, 0, len(changes))
	for _, c := range changes {
		if i := dr.at(c.nb.blk.ID); dr.Blocks[i].Content != c.nb.content.ID {
			at = append(at, i)
		}
	}
	slices.Sort(at) // the event lists blocks in body order, as advanceDraft does
	var buf []byte
	for _, i := range at {
		blk := &dr.Blocks[i]
		var nb *newBlock
		for _, c := range changes {
			if c.nb.blk.ID == blk.ID {
				nb = c.nb
			}
		}
		nb.seal()
		if err := r.objs.PutEncoded(b, nb.content); err != nil {
			return DraftEvent{}, err
		}
		if err := r.noteAssets(owner, &nb.blk); err != nil {
			return DraftEvent{}, err
		}
		x.count += nb.count - blk.Count
		x.size += nb.size - blk.Size
		blk.Content, blk.Size, blk.Count, blk.Nested, blk.Seq = nb.content.ID, nb.size, nb.count, nil, seq
		buf = appendDraftBlock(buf[:0], blk)
		if err := b.Set(dblkKey(doc, blk.key), buf); err != nil {
			return DraftEvent{}, err
		}
		// nb is this save's own copy, encoded into the event in this
		// batch and never changed: no clone.
		de.Blocks = append(de.Blocks, EventBlock{ID: blk.ID, Block: &nb.blk})
	}
	if !attrsEqual(attrs, dr.Attrs) {
		a := attrs
		de.Attrs = &a
		dr.AttrsSeq = seq
	}
	dr.Seq, dr.Attrs, dr.LastActor = seq, attrs, actor
	dr.stamp(now, r.boot)
	de.Fingerprint, de.Unsealed = dr.Fingerprint, dr.Unsealed
	return de, nil
}

// stamp brings dr's fingerprint, time, session and sealed state up to
// date after its blocks or attributes changed at now.
func (dr *draftRec) stamp(now int64, boot string) {
	dr.Fingerprint = draftFingerprint(dr.Blocks)
	dr.LastChange, dr.Boot = now, boot
	dr.Unsealed = dr.Fingerprint != dr.BaseFP || !attrsEqual(dr.Attrs, dr.BaseAttrs)
	if dr.Unsealed && dr.UnsealedSince == 0 {
		dr.UnsealedSince = now
	}
	if !dr.Unsealed {
		dr.UnsealedSince = 0
	}
}

// draftFingerprint is fingerprintOf the draft's blocks, without the
// intermediate lists.
func draftFingerprint(blocks []draftBlock) flowdoc.Fingerprint {
	f := flowdoc.NewBodyHasher()
	for i := range blocks {
		f.Add(blocks[i].ID, blocks[i].Content)
	}
	return f.Sum()
}

// staleSave is the conflict of save p against draft dr: check failed.
func staleSave(p SaveParams, dr *draftRec, check folio.Check, reason string, blocks []folio.ConflictBlock) *folio.ConflictError {
	return &folio.ConflictError{Doc: p.Doc, Check: check, Reason: reason, Seq: dr.Seq, BaseSeq: p.BaseSeq, Blocks: blocks}
}

// missingBlock is the conflict of a change that names block id, which is
// not in the draft; the caller fills in the document and the draft's side.
func missingBlock(id, reason string) *folio.ConflictError {
	return &folio.ConflictError{Check: folio.CheckMissingBlock, Missing: id, Reason: reason}
}
