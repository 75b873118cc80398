package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/foliodev/folio/flowdoc"
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
	dr, err := r.loadDraft(doc)
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
		UnsealedSince: dr.UnsealedSince, LastChange: dr.LastChange}, nil
}

// OpenDraft returns the draft for an editor that opens doc. A draft left
// unsealed by an earlier session (a crash, or a previous process) is first
// sealed as a recovery checkpoint, whose info is returned.
func (r *Repo) OpenDraft(ctx context.Context, doc, actor string) (Draft, *VersionInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return Draft{}, nil, err
	}
	defer r.writing(doc)()
	if _, err := r.loadDoc(doc); err != nil {
		return Draft{}, nil, err
	}
	dr, err := r.loadDraft(doc)
	if err != nil {
		return Draft{}, nil, err
	}
	var sealed *VersionInfo
	if dr.Unsealed && dr.Boot != r.boot {
		info, _, err := r.checkpointLocked(doc, objstore.ReasonRecovery, actor, "recovered unsealed draft")
		if err != nil {
			return Draft{}, nil, err
		}
		sealed = &info
		if dr, err = r.loadDraft(doc); err != nil {
			return Draft{}, nil, err
		}
	}
	d, err := r.draftOf(doc, dr)
	return d, sealed, err
}

// SaveDraft stores a draft save durably and returns the new seq. With
// Changes, every block the save touches must be unchanged since BaseSeq;
// then the save is rebased onto the current draft. With Body, the same
// rule applies to every block whose content or presence differs. A
// touched block changed since BaseSeq is a *ConflictError carrying the
// server's version of those blocks; nothing is merged inside a block.
// A save of changes costs in proportion to the blocks it changes, not to
// the document.
func (r *Repo) SaveDraft(ctx context.Context, p SaveParams) (SaveResult, error) {
	if err := ctxErr(ctx); err != nil {
		return SaveResult{}, err
	}
	if p.Body == nil && len(p.Changes) == 0 && p.Attrs == nil {
		return SaveResult{}, errs.E(errs.Invalid, "a save needs a body, changes or attributes")
	}
	if p.Body != nil && len(p.Changes) > 0 {
		return SaveResult{}, errs.E(errs.Invalid, "a save carries a full body or changes, not both")
	}
	if p.Attrs != nil {
		if ps := validateAttrs(*p.Attrs); len(ps) > 0 {
			return SaveResult{}, invalid(ps)
		}
	}
	var body flowdoc.Document
	if p.Body != nil {
		var err error
		if body, err = r.normalize(*p.Body); err != nil {
			return SaveResult{}, err
		}
	}
	if p.Seal != "" && !validReason(p.Seal) {
		return SaveResult{}, errs.E(errs.Invalid, "checkpoint reason %q", p.Seal)
	}
	defer r.writing(p.Doc)()
	d, err := r.loadDoc(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	dr, err := r.loadDraft(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	if p.BaseSeq > dr.Seq {
		return SaveResult{}, errs.E(errs.Invalid, "baseSeq %d is ahead of the draft (seq %d); reopen the document", p.BaseSeq, dr.Seq)
	}
	var slots []slot
	var touched []string
	switch {
	case p.Body != nil:
		slots = r.slotsAgainst(dr, body)
		if err := r.hashSlots(slots); err != nil {
			return SaveResult{}, err
		}
		touched = touchedBySlots(dr, slots)
	case len(p.Changes) > 0:
		slots, touched, err = r.applyChanges(dr, p.Changes)
		if errors.Is(err, ErrConflict) {
			return SaveResult{}, &ConflictError{Doc: p.Doc, Seq: dr.Seq, Reason: err.Error(),
				Blocks: r.staleBlocks(dr, touched, p.BaseSeq)}
		}
		if err != nil {
			return SaveResult{}, err
		}
		if err := r.hashSlots(slots); err != nil {
			return SaveResult{}, err
		}
		if ps := r.checkLimits(slots); len(ps) > 0 {
			return SaveResult{}, invalid(ps)
		}
	default:
		slots = draftSlots(dr)
	}
	if conflict := r.staleBlocks(dr, touched, p.BaseSeq); len(conflict) > 0 {
		return SaveResult{}, &ConflictError{Doc: p.Doc, Seq: dr.Seq, Reason: "blocks changed since baseSeq", Blocks: conflict}
	}
	attrs := dr.Attrs
	if p.Attrs != nil {
		if dr.AttrsSeq > p.BaseSeq && !attrsEqual(*p.Attrs, dr.Attrs) {
			return SaveResult{}, &ConflictError{Doc: p.Doc, Seq: dr.Seq, Reason: "attributes changed since baseSeq"}
		}
		attrs = *p.Attrs
	}
	b := r.db.NewBatch()
	owned := true // b is closed here unless writeVersion took it
	defer func() {
		if owned {
			b.Close()
		}
	}()
	entries, err := r.putSlots(b, slots)
	if err != nil {
		return SaveResult{}, err
	}
	res := SaveResult{Seq: dr.Seq, Fingerprint: dr.Fingerprint, Unsealed: dr.Unsealed}
	changedBody := fingerprintOf(entries) != dr.Fingerprint || !attrsEqual(attrs, dr.Attrs)
	ev, err := r.events(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	now := r.now().UnixMilli()
	var changed []string
	bodyChanged := false
	if changedBody {
		fp := dr.Fingerprint
		de := r.advanceDraft(dr, slots, attrs, now, p.Actor, p.Session)
		changed, bodyChanged = eventBlockIDs(de), dr.Fingerprint != fp
		if err := setRec(b, draftKey(p.Doc), dr); err != nil {
			return SaveResult{}, err
		}
		if err := ev.add(b, EventDraftUpdated, now, de); err != nil {
			return SaveResult{}, err
		}
		res = SaveResult{Seq: dr.Seq, Fingerprint: dr.Fingerprint, Unsealed: dr.Unsealed}
		for _, eb := range de.Blocks {
			res.Changed = append(res.Changed, eb.ID)
		}
	}
	if p.Seal != "" && dr.Unsealed {
		kind := objstore.KindCheckpoint
		if p.Seal == objstore.ReasonRecovery {
			kind = objstore.KindRecovery
		}
		owned = false
		info, err := r.writeVersion(d, dr, versionSpec{kind: kind, reason: p.Seal, actor: p.Actor,
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
			BodyChanged: bodyChanged, Blocks: draftEntries(dr), Time: now}); err != nil {
			return SaveResult{}, err
		}
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return SaveResult{}, fmt.Errorf("save draft %s: %w", p.Doc, err)
	}
	r.hub.Notify(Stream(p.Doc))
	return res, nil
}

// draftSlots makes slots that keep every block of the draft.
func draftSlots(dr *draftRec) []slot {
	out := make([]slot, len(dr.Blocks))
	for i, b := range dr.Blocks {
		out[i] = slot{draftBlock: b, prev: b.Content}
	}
	return out
}

// hashSlots computes the content id and meta of every slot with new
// content (putSlots then writes only the new objects).
func (r *Repo) hashSlots(slots []slot) error {
	for i := range slots {
		s := &slots[i]
		if s.Block != nil {
			s.Content = objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(*s.Block))
			s.Size, s.Count, s.Nested = blockMeta(*s.Block)
		}
	}
	return nil
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
	count, size := 0, len(`{"schemaVersion":1,"blocks":[]}`)
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

// applyChanges applies block-level changes to the draft's blocks. Each
// new block is sanitized and validated on its own (paths name the
// change); checkLimits does the document-wide checks. It returns the ids
// the changes touch: changed, deleted and moved blocks and the anchors
// they are placed after.
func (r *Repo) applyChanges(dr *draftRec, changes []DraftChange) ([]slot, []string, error) {
	slots := draftSlots(dr)
	index := func(id string) int {
		for i := range slots {
			if slots[i].ID == id {
				return i
			}
		}
		return -1
	}
	var touched []string
	var problems []flowdoc.Problem
	insertAfter := func(s slot, after *string, i int) error {
		pos := len(slots)
		if after != nil {
			if *after == "" {
				pos = 0
			} else {
				j := index(*after)
				touched = append(touched, *after)
				if j < 0 {
					return errs.E(errs.Conflict, "changes[%d].after: block %q is not in the draft", i, *after)
				}
				pos = j + 1
			}
		}
		slots = append(slots[:pos], append([]slot{s}, slots[pos:]...)...)
		return nil
	}
	for i, c := range changes {
		switch c.Op {
		case ChangeUpsert:
			if c.Block == nil {
				return nil, nil, errs.E(errs.Invalid, "changes[%d]: upsert needs a block", i)
			}
			one, err := flowdoc.Normalize(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{*c.Block}}, r.limits)
			var ve *flowdoc.ValidationError
			if errors.As(err, &ve) {
				for _, pr := range ve.Problems {
					pr.Path = fmt.Sprintf("changes[%d].block", i) + strings.TrimPrefix(pr.Path, "blocks[0]")
					problems = append(problems, pr)
				}
				continue
			} else if err != nil {
				return nil, nil, errs.E(errs.Invalid, "changes[%d]: %w", i, err)
			}
			blk := one.Blocks[0]
			touched = append(touched, blk.ID)
			j := index(blk.ID)
			switch {
			case j >= 0 && c.After == nil:
				slots[j].Block = &blk
			case j >= 0:
				s := slots[j]
				s.Block = &blk
				slots = append(slots[:j], slots[j+1:]...)
				if err := insertAfter(s, c.After, i); err != nil {
					return nil, touched, err
				}
			default:
				if err := insertAfter(slot{draftBlock: draftBlock{ID: blk.ID}, Block: &blk}, c.After, i); err != nil {
					return nil, touched, err
				}
			}
		case ChangeDelete:
			touched = append(touched, c.BlockID)
			if j := index(c.BlockID); j >= 0 {
				slots = append(slots[:j], slots[j+1:]...)
			} // already gone: the tombstone check decides whether that is a conflict
		case ChangeMove:
			touched = append(touched, c.BlockID)
			j := index(c.BlockID)
			if j < 0 {
				return nil, touched, errs.E(errs.Conflict, "changes[%d]: block %q is not in the draft", i, c.BlockID)
			}
			if c.After == nil {
				return nil, nil, errs.E(errs.Invalid, "changes[%d]: move needs after", i)
			}
			s := slots[j]
			slots = append(slots[:j], slots[j+1:]...)
			if err := insertAfter(s, c.After, i); err != nil {
				return nil, touched, err
			}
		default:
			return nil, nil, errs.E(errs.Invalid, "changes[%d].op %q (want upsert, delete or move)", i, c.Op)
		}
	}
	if len(problems) > 0 {
		return nil, nil, invalid(problems)
	}
	return slots, touched, nil
}

// staleBlocks returns the server's state of every touched block that
// changed after baseSeq (or was deleted after it).
func (r *Repo) staleBlocks(dr *draftRec, touched []string, baseSeq uint64) []ConflictBlock {
	pos := make(map[string]int, len(dr.Blocks))
	for i, b := range dr.Blocks {
		pos[b.ID] = i
	}
	tombs := map[string]uint64{}
	for _, t := range dr.Tombs {
		tombs[t.ID] = t.Seq
	}
	var out []ConflictBlock
	seen := map[string]bool{}
	for _, id := range touched {
		if seen[id] {
			continue
		}
		seen[id] = true
		if i, ok := pos[id]; ok {
			if db := dr.Blocks[i]; db.Seq > baseSeq {
				cb := ConflictBlock{ID: id, Seq: db.Seq}
				if b, err := r.block(db.Content, id); err == nil {
					cb.Block = &b
				}
				out = append(out, cb)
			}
		} else if s, ok := tombs[id]; ok && s > baseSeq {
			out = append(out, ConflictBlock{ID: id, Seq: s})
		}
	}
	return out
}
