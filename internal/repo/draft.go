package repo

import (
	"context"
	"errors"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
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
	unlock := r.lock(doc)
	defer unlock()
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
func (r *Repo) SaveDraft(ctx context.Context, p SaveParams) (SaveResult, error) {
	if err := ctxErr(ctx); err != nil {
		return SaveResult{}, err
	}
	if p.Body == nil && len(p.Changes) == 0 && p.Attrs == nil {
		return SaveResult{}, fmt.Errorf("%w: a save needs a body, changes or attributes", ErrInvalid)
	}
	if p.Body != nil && len(p.Changes) > 0 {
		return SaveResult{}, fmt.Errorf("%w: a save carries a full body or changes, not both", ErrInvalid)
	}
	if p.Attrs != nil {
		if ps := validateAttrs(*p.Attrs); len(ps) > 0 {
			return SaveResult{}, invalid(ps)
		}
	}
	unlock := r.lock(p.Doc)
	defer unlock()
	if _, err := r.loadDoc(p.Doc); err != nil {
		return SaveResult{}, err
	}
	dr, err := r.loadDraft(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	if p.BaseSeq > dr.Seq {
		return SaveResult{}, fmt.Errorf("%w: baseSeq %d is ahead of the draft (seq %d); reopen the document", ErrInvalid, p.BaseSeq, dr.Seq)
	}
	cur, err := r.materialize(draftEntries(dr))
	if err != nil {
		return SaveResult{}, err
	}
	var next flowdoc.Document
	var touched []string
	if p.Body != nil {
		next = *p.Body
		touched = touchedByBody(cur, next)
	} else {
		next, touched, err = applyChanges(cur, p.Changes)
		if errors.Is(err, ErrConflict) {
			return SaveResult{}, &ConflictError{Doc: p.Doc, Seq: dr.Seq, Reason: err.Error(),
				Blocks: r.staleBlocks(dr, cur, touched, p.BaseSeq)}
		}
		if err != nil {
			return SaveResult{}, err
		}
	}
	if conflict := r.staleBlocks(dr, cur, touched, p.BaseSeq); len(conflict) > 0 {
		return SaveResult{}, &ConflictError{Doc: p.Doc, Seq: dr.Seq, Reason: "blocks changed since baseSeq", Blocks: conflict}
	}
	attrs := dr.Attrs
	if p.Attrs != nil {
		if dr.AttrsSeq > p.BaseSeq && !attrsEqual(*p.Attrs, dr.Attrs) {
			return SaveResult{}, &ConflictError{Doc: p.Doc, Seq: dr.Seq, Reason: "attributes changed since baseSeq"}
		}
		attrs = *p.Attrs
	}
	if next, err = r.normalize(next); err != nil {
		return SaveResult{}, err
	}
	b := r.db.NewBatch()
	defer b.Close()
	entries, err := r.putBlocks(b, next.Blocks)
	if err != nil {
		return SaveResult{}, err
	}
	if fingerprintOf(entries) == dr.Fingerprint && attrsEqual(attrs, dr.Attrs) {
		// Nothing changed: acknowledge without a new seq.
		return SaveResult{Seq: dr.Seq, Fingerprint: dr.Fingerprint, Unsealed: dr.Unsealed}, nil
	}
	ev, err := r.events(p.Doc)
	if err != nil {
		return SaveResult{}, err
	}
	now := r.now().UnixMilli()
	de := r.advanceDraft(dr, entries, next, attrs, now, p.Actor, p.Session)
	if err := setRec(b, draftKey(p.Doc), dr); err != nil {
		return SaveResult{}, err
	}
	if err := ev.add(b, EventDraftUpdated, now, de); err != nil {
		return SaveResult{}, err
	}
	if err := b.Commit(kv.Sync); err != nil {
		return SaveResult{}, fmt.Errorf("save draft %s: %w", p.Doc, err)
	}
	r.hub.Notify(Stream(p.Doc))
	changed := make([]string, len(de.Blocks))
	for i, eb := range de.Blocks {
		changed[i] = eb.ID
	}
	return SaveResult{Seq: dr.Seq, Fingerprint: dr.Fingerprint, Unsealed: dr.Unsealed, Changed: changed}, nil
}

// touchedByBody lists the blocks whose presence or content differs
// between cur and next.
func touchedByBody(cur, next flowdoc.Document) []string {
	old := map[string][32]byte{}
	for _, b := range cur.Blocks {
		old[b.ID] = flowdoc.ContentHash(b)
	}
	var out []string
	seen := map[string]bool{}
	for _, b := range next.Blocks {
		seen[b.ID] = true
		if h, ok := old[b.ID]; !ok || h != flowdoc.ContentHash(b) {
			out = append(out, b.ID)
		}
	}
	for _, b := range cur.Blocks {
		if !seen[b.ID] {
			out = append(out, b.ID)
		}
	}
	return out
}

// applyChanges applies block-level changes to a copy of cur. It returns
// the ids the changes touch: changed, deleted and moved blocks and the
// anchors they are placed after.
func applyChanges(cur flowdoc.Document, changes []DraftChange) (flowdoc.Document, []string, error) {
	blocks := append([]flowdoc.Block(nil), cur.Blocks...)
	index := func(id string) int {
		for i, b := range blocks {
			if b.ID == id {
				return i
			}
		}
		return -1
	}
	var touched []string
	insertAfter := func(b flowdoc.Block, after *string, i int) error {
		pos := len(blocks)
		if after != nil {
			if *after == "" {
				pos = 0
			} else {
				j := index(*after)
				if j < 0 {
					return fmt.Errorf("%w: changes[%d].after: block %q is not in the draft", ErrConflict, i, *after)
				}
				touched = append(touched, *after)
				pos = j + 1
			}
		}
		blocks = append(blocks[:pos], append([]flowdoc.Block{b}, blocks[pos:]...)...)
		return nil
	}
	for i, c := range changes {
		switch c.Op {
		case ChangeUpsert:
			if c.Block == nil {
				return cur, nil, fmt.Errorf("%w: changes[%d]: upsert needs a block", ErrInvalid, i)
			}
			b := c.Block.Clone()
			touched = append(touched, b.ID)
			if j := index(b.ID); j >= 0 {
				if c.After != nil {
					blocks = append(blocks[:j], blocks[j+1:]...)
					if err := insertAfter(b, c.After, i); err != nil {
						return cur, touched, err
					}
				} else {
					blocks[j] = b
				}
			} else if err := insertAfter(b, c.After, i); err != nil {
				return cur, touched, err
			}
		case ChangeDelete:
			j := index(c.BlockID)
			touched = append(touched, c.BlockID)
			if j < 0 {
				continue // already gone: the tombstone check decides whether that is a conflict
			}
			blocks = append(blocks[:j], blocks[j+1:]...)
		case ChangeMove:
			j := index(c.BlockID)
			touched = append(touched, c.BlockID)
			if j < 0 {
				return cur, touched, fmt.Errorf("%w: changes[%d]: block %q is not in the draft", ErrConflict, i, c.BlockID)
			}
			if c.After == nil {
				return cur, nil, fmt.Errorf("%w: changes[%d]: move needs after", ErrInvalid, i)
			}
			b := blocks[j]
			blocks = append(blocks[:j], blocks[j+1:]...)
			if err := insertAfter(b, c.After, i); err != nil {
				return cur, touched, err
			}
		default:
			return cur, nil, fmt.Errorf("%w: changes[%d].op %q (want upsert, delete or move)", ErrInvalid, i, c.Op)
		}
	}
	return flowdoc.Document{SchemaVersion: cur.SchemaVersion, Blocks: blocks}, touched, nil
}

// staleBlocks returns the server's state of every touched block that
// changed after baseSeq (or was deleted after it).
func (r *Repo) staleBlocks(dr *draftRec, cur flowdoc.Document, touched []string, baseSeq uint64) []ConflictBlock {
	seqs := map[string]int{}
	for i, b := range dr.Blocks {
		seqs[b.ID] = i
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
		if i, ok := seqs[id]; ok {
			if dr.Blocks[i].Seq > baseSeq {
				b := cur.Blocks[i].Clone()
				out = append(out, ConflictBlock{ID: id, Block: &b, Seq: dr.Blocks[i].Seq})
			}
		} else if s, ok := tombs[id]; ok && s > baseSeq {
			out = append(out, ConflictBlock{ID: id, Seq: s})
		}
	}
	return out
}
