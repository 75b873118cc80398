package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/flowdoc/merge"
	"github.com/foliodev/folio/syncproto"
)

// Editor keeps an editor's copy of one document by the client algorithm
// of docs/protocol.md ("The client algorithm"): a server copy at a seq,
// the save in flight (at most one per document) and the local changes
// not yet sent. Local changes always rest on the server copy's current
// content of the blocks they touch, so a save's baseSeq is simply the
// server copy's seq; an incoming update that touches a block with a local
// change is resolved locally (Resolve) before that change is sent.
//
// Wire it to a connection: give Dial an OnEvent that calls
// Editor.HandleEvent, then Open. After a disconnect dial again (with the
// same OnEvent) and call Reopen: the save whose answer was lost is sent
// again with its key, exactly as before, and the local changes follow.
//
// With EditorOptions.Merge the editor merges inside text blocks
// (docs/protocol.md "Merging inside a block"): its saves carry merge, it
// takes the merged blocks of an ack as the server's, and it rebases a
// pending change of a text block onto another editor's update of it with
// the same function the server uses (flowdoc/merge); only changes that
// overlap go to the Resolver.
//
// The Editor keeps and edits blocks only; the algorithm's rules for
// attributes (docs/protocol.md) are left to the caller, who saves them
// with Client.SaveMessage.
type Editor struct {
	doc     string
	resolve Resolver
	keyBase string
	merge   bool

	mu       sync.Mutex // guards the fields below
	c        *Client
	srv      copyState                // the server copy
	inflight *syncproto.Save          // sent, not answered; nil: none
	pending  []syncproto.Change       // local changes not yet sent, in order
	keyN     uint64                   // keys sent so far
	local    *copyState               // srv + inflight + pending; nil: recompute
	opening  bool                     // an open is waiting for its snapshot
	resync   bool                     // the subscription ended with resync: Reopen
	early    []syncproto.DraftUpdated // updates that arrived before the snapshot was taken in
	acked    func(*syncproto.Ack, *syncproto.Save)

	// Merging (merge only).
	sentBase map[string]*flowdoc.Block // the server copy's blocks the save in flight upserts, as sent (nil: absent)
	deferred map[string]bool           // blocks the save in flight upserts that an update changed: rebased at its answer
	hold     bool                      // Reopen is taking a new snapshot: updates are applied, rebased after
}

// Resolver decides a local change to block id that an update of another
// editor also touched. server is the block as the server has it now (nil:
// deleted), mine the local version (nil: deleted locally). It returns the
// block to save (nil: delete it) and keep; keep false drops the local
// change (the server's version stays).
type Resolver func(id string, server, mine *flowdoc.Block) (block *flowdoc.Block, keep bool)

// ServerWins is the default Resolver: the other editor's change stays and
// the local change to that block is dropped.
func ServerWins(string, *flowdoc.Block, *flowdoc.Block) (*flowdoc.Block, bool) { return nil, false }

// EditorOptions configure NewEditor.
type EditorOptions struct {
	// Resolve decides contested blocks; default ServerWins.
	Resolve Resolver
	// OnAck, when set, is called with every ack and the save it answers
	// (on the goroutine that called Flush).
	OnAck func(*syncproto.Ack, *syncproto.Save)
	// Merge opts in to merging inside text blocks: saves carry merge,
	// and pending changes are rebased onto updates of their block with
	// the merge function before anything goes to Resolve.
	Merge bool
}

// NewEditor returns an editor of doc; call Open next.
func NewEditor(doc string, o EditorOptions) *Editor {
	if o.Resolve == nil {
		o.Resolve = ServerWins
	}
	var b [9]byte
	rand.Read(b[:])
	return &Editor{doc: doc, resolve: o.Resolve, keyBase: hex.EncodeToString(b[:]), acked: o.OnAck, merge: o.Merge,
		deferred: map[string]bool{}}
}

// copyState is a document as a block order and contents, with the seq of
// the last change of each block and of the order as this copy knows them.
type copyState struct {
	seq      uint64
	order    []string
	blocks   map[string]flowdoc.Block
	blockSeq map[string]uint64
	orderSeq uint64
}

func (s *copyState) clone() *copyState {
	n := &copyState{seq: s.seq, order: slices.Clone(s.order), blocks: make(map[string]flowdoc.Block, len(s.blocks)),
		blockSeq: make(map[string]uint64, len(s.blockSeq)), orderSeq: s.orderSeq}
	for k, v := range s.blocks {
		n.blocks[k] = v
	}
	for k, v := range s.blockSeq {
		n.blockSeq[k] = v
	}
	return n
}

func (s *copyState) index(id string) int { return slices.Index(s.order, id) }

// errStale is a change that does not apply to a copy: its block or its
// anchor is not there.
var errStale = errors.New("client: change does not apply to the document")

// apply applies one change as the server does (docs/protocol.md
// "draft.save"): an upsert replaces the block in place, or moves it after
// after when after is set, or inserts it (at the end without after); a
// delete removes it; a move places it after after ("" = the start).
func (s *copyState) apply(c syncproto.Change, seq uint64, order bool) error {
	place := func(id string, after *string) error {
		at := len(s.order)
		if after != nil {
			if *after == "" {
				at = 0
			} else {
				i := s.index(*after)
				if i < 0 {
					return errStale
				}
				at = i + 1
			}
		}
		s.order = slices.Insert(s.order, at, id)
		return nil
	}
	switch c.Op {
	case "upsert":
		if c.Block == nil {
			return errStale
		}
		id := c.Block.ID
		i := s.index(id)
		if i < 0 && !order {
			return nil // a later order without it is newer: it was deleted since
		}
		if order {
			switch {
			case i >= 0 && c.After != nil:
				s.order = slices.Delete(s.order, i, i+1)
				if err := place(id, c.After); err != nil {
					return err
				}
			case i < 0:
				if err := place(id, c.After); err != nil {
					return err
				}
			}
		}
		if seq == 0 || s.blockSeq[id] <= seq {
			s.blocks[id] = *c.Block
			s.blockSeq[id] = seq
		}
	case "delete":
		if i := s.index(c.BlockID); i >= 0 && order {
			s.order = slices.Delete(s.order, i, i+1)
		} else if i < 0 && order {
			return errStale
		}
		if seq == 0 || s.blockSeq[c.BlockID] <= seq {
			delete(s.blocks, c.BlockID)
			s.blockSeq[c.BlockID] = seq
		}
	case "move":
		if !order {
			return nil
		}
		i := s.index(c.BlockID)
		if i < 0 || c.After == nil {
			return errStale
		}
		s.order = slices.Delete(s.order, i, i+1)
		if err := place(c.BlockID, c.After); err != nil {
			s.order = slices.Insert(s.order, i, c.BlockID)
			return err
		}
	default:
		return fmt.Errorf("client: unknown change op %q", c.Op)
	}
	return nil
}

// Open opens the document on c and takes its snapshot as the server copy.
//
// The events that follow the snapshot may be handled (HandleEvent)
// before Open has the snapshot: they are kept and applied after it.
func (e *Editor) Open(ctx context.Context, c *Client) (*syncproto.Snapshot, error) {
	e.mu.Lock()
	e.opening, e.early = true, nil
	e.mu.Unlock()
	snap, err := c.Open(ctx, e.doc)
	e.mu.Lock()
	defer e.mu.Unlock()
	early := e.early
	e.opening, e.early = false, nil
	if err != nil {
		return nil, err
	}
	e.resync = false
	e.c = c
	e.srv = copyState{seq: snap.Seq, blocks: map[string]flowdoc.Block{}, blockSeq: map[string]uint64{}, orderSeq: snap.Seq}
	for _, b := range snap.Body.Blocks {
		e.srv.order = append(e.srv.order, b.ID)
		e.srv.blocks[b.ID] = b
		e.srv.blockSeq[b.ID] = snap.Seq
	}
	e.local = nil
	for _, du := range early {
		e.updateLocked(du)
	}
	return snap, nil
}

// Reopen continues after a lost connection on a new one, c: it opens the
// document again (a fresh server copy), then sends the save whose answer
// was lost again, unchanged and with its key, so that the server answers
// its original ack when it was applied. The local changes stay pending.
//
// The pending changes rest on the old server copy with that save applied;
// every block that differs in the new one (changed while the connection
// was down) is resolved as if an update had touched it.
func (e *Editor) Reopen(ctx context.Context, c *Client) error {
	e.mu.Lock()
	old := e.srv.clone()
	s := e.inflight
	if s != nil {
		for _, ch := range s.Changes {
			old.apply(ch, 0, true)
		}
	}
	if e.merge {
		e.hold = true
	}
	e.mu.Unlock()
	if e.merge {
		return e.reopenMerging(ctx, c, old, s)
	}
	if _, err := e.Open(ctx, c); err != nil {
		return err
	}
	var err error
	if s != nil {
		if err = e.send(ctx, s); errors.As(err, new(*folio.ConflictError)) {
			err = nil // resolved; the changes left are pending
		}
	}
	e.mu.Lock()
	touched := map[string]*flowdoc.Block{}
	for id, b := range e.srv.blocks {
		if ob, ok := old.blocks[id]; !ok || !sameBlock(&ob, &b) {
			touched[id] = &b
		}
	}
	for id := range old.blocks {
		if _, ok := e.srv.blocks[id]; !ok {
			touched[id] = nil
		}
	}
	e.rebaseLocked(touched)
	e.mu.Unlock()
	return err
}

// reopenMerging is Reopen for a merging editor: the pending changes are
// rebased from the old copy (with the save in flight) onto the new one
// before the save in flight is sent again, except those of blocks that
// save upserts: they rest on it, and are rebased at its answer.
func (e *Editor) reopenMerging(ctx context.Context, c *Client, old *copyState, s *syncproto.Save) error {
	_, err := e.Open(ctx, c)
	e.mu.Lock()
	e.hold = false
	if err != nil {
		e.mu.Unlock()
		return err
	}
	bases, touched := map[string]*flowdoc.Block{}, map[string]*flowdoc.Block{}
	note := func(id string, now *flowdoc.Block) {
		if s != nil && upserts(s, id) {
			e.deferred[id] = true
			return
		}
		if ob, ok := old.blocks[id]; ok {
			bases[id] = &ob
		} else {
			bases[id] = nil
		}
		touched[id] = now
	}
	for id, b := range e.srv.blocks {
		if ob, ok := old.blocks[id]; !ok || !sameBlock(&ob, &b) {
			note(id, &b)
		}
	}
	for id := range old.blocks {
		if _, ok := e.srv.blocks[id]; !ok {
			note(id, nil)
		}
	}
	e.pending = e.rebaseChain(e.pending, bases, touched)
	e.fixPendingLocked()
	e.mu.Unlock()
	if s != nil {
		if err = e.send(ctx, s); errors.As(err, new(*folio.ConflictError)) {
			err = nil // resolved; the changes left are pending
		}
	}
	return err
}

// upserts reports whether s upserts block id.
func upserts(s *syncproto.Save, id string) bool {
	return slices.ContainsFunc(s.Changes, func(c syncproto.Change) bool { return c.Op == "upsert" && c.Block.ID == id })
}

// lastUpsert is the block of s's last upsert of id.
func lastUpsert(s *syncproto.Save, id string) *flowdoc.Block {
	var b *flowdoc.Block
	for _, c := range s.Changes {
		if c.Op == "upsert" && c.Block.ID == id {
			b = c.Block
		}
	}
	return b
}

// rebaseChain rebases ops onto the server's new blocks in target (nil:
// deleted): the changes of each block in target rest on its version in
// bases (nil: absent). An upsert of a text block is merged with the
// server's block (docs/protocol.md "Merging inside a block"), and the next
// change of that block rests on it in turn; one that does not merge, and
// every other change of a block in target, goes to the Resolver as in
// resolveOps. Without merge it is resolveOps.
func (e *Editor) rebaseChain(ops []syncproto.Change, bases, target map[string]*flowdoc.Block) []syncproto.Change {
	if !e.merge {
		return e.resolveOps(ops, target)
	}
	out := make([]syncproto.Change, 0, len(ops))
	for _, c := range ops {
		id := c.BlockID
		if c.Op == "upsert" {
			id = c.Block.ID
		}
		srvBlock, hit := target[id]
		if !hit {
			out = append(out, c)
			continue
		}
		if c.Op == "upsert" {
			if base, ok := bases[id]; ok && base != nil && srvBlock != nil {
				if m, err := merge.Block(*base, *srvBlock, *c.Block); err == nil {
					bases[id] = c.Block
					target[id] = &m
					out = append(out, syncproto.Change{Op: "upsert", Block: &m, After: c.After})
					continue
				}
			}
			delete(bases, id) // the block's next changes rest on what the Resolver keeps
		}
		out = append(out, e.resolveOps([]syncproto.Change{c}, map[string]*flowdoc.Block{id: srvBlock})...)
	}
	return out
}

// HandleEvent applies an event of the document's stream: a
// draft.updated whose seq is above the server copy's (others are already
// in it). Give it every event (OnEvent); others are ignored.
func (e *Editor) HandleEvent(ev *syncproto.Event) {
	if ev.Type != syncproto.TypeDraftUpdated || ev.Stream != syncproto.DocStream(e.doc) {
		return
	}
	var du syncproto.DraftUpdated
	if err := ev.DecodeData(&du); err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opening {
		e.early = append(e.early, du)
		return
	}
	e.updateLocked(du)
}

// HandleResync takes a resync of the document's stream: the server ended
// the subscription because this connection fell behind the stream's
// retention, so updates were missed. Give it every resync (OnResync);
// others are ignored. The caller then calls Reopen (the same connection
// will do): NeedsReopen reports it.
func (e *Editor) HandleResync(r *syncproto.Resync) {
	if r.Stream != syncproto.DocStream(e.doc) {
		return
	}
	e.mu.Lock()
	e.resync = true
	e.mu.Unlock()
}

// NeedsReopen reports that updates were missed (a resync): until Reopen,
// the server copy is stale and saves will conflict.
func (e *Editor) NeedsReopen() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.resync
}

// updateLocked applies a draft.updated to the server copy and rebases
// the pending changes on it.
func (e *Editor) updateLocked(du syncproto.DraftUpdated) {
	if du.Seq <= e.srv.seq {
		return // in the snapshot already, or an update before one of this copy's acks
	}
	e.srv.seq = du.Seq
	touched := map[string]*flowdoc.Block{}
	bases := map[string]*flowdoc.Block{}
	for _, b := range du.Blocks {
		if e.merge {
			if ob, ok := e.srv.blocks[b.ID]; ok {
				bases[b.ID] = &ob
			} else {
				bases[b.ID] = nil
			}
		}
		if b.Block != nil {
			e.srv.blocks[b.ID] = *b.Block
		} else {
			delete(e.srv.blocks, b.ID)
		}
		e.srv.blockSeq[b.ID] = du.Seq
		touched[b.ID] = b.Block
	}
	if du.Order != nil {
		e.srv.order = slices.Clone(du.Order)
		e.srv.orderSeq = du.Seq
	}
	if !e.merge {
		e.rebaseLocked(touched)
		return
	}
	if e.hold {
		e.local = nil // Reopen rebases from the old copy
		return
	}
	for id := range touched {
		// A change resting on the save in flight is rebased at its
		// answer, which says what the server made of that save.
		if e.inflight != nil && upserts(e.inflight, id) {
			e.deferred[id] = true
			delete(touched, id)
		}
	}
	e.pending = e.rebaseChain(e.pending, bases, touched)
	e.local = nil
	e.fixPendingLocked()
}

// rebaseLocked resolves the pending changes against the server copy after
// the blocks in touched changed on the server: a pending change of a
// touched block goes to the Resolver, and a change that no longer applies
// (its block or anchor is gone) is adjusted or dropped.
func (e *Editor) rebaseLocked(touched map[string]*flowdoc.Block) {
	e.pending = e.resolveOps(e.pending, touched)
	e.local = nil
	e.fixPendingLocked()
}

// resolveOps passes each change of a block in touched (its server
// version, nil when deleted) to the Resolver.
func (e *Editor) resolveOps(ops []syncproto.Change, touched map[string]*flowdoc.Block) []syncproto.Change {
	var out []syncproto.Change
	for _, c := range ops {
		id := c.BlockID
		if c.Op == "upsert" {
			id = c.Block.ID
		}
		srvBlock, hit := touched[id]
		if hit && c.Op != "move" {
			var mine *flowdoc.Block
			if c.Op == "upsert" {
				mine = c.Block
			}
			b, keep := e.resolve(id, srvBlock, mine)
			if !keep {
				continue
			}
			if b == nil {
				if srvBlock == nil {
					continue // deleted on both sides
				}
				c = syncproto.Change{Op: "delete", BlockID: id}
			} else {
				nb := *b
				c = syncproto.Change{Op: "upsert", Block: &nb, After: c.After}
			}
		}
		out = append(out, c)
	}
	return out
}

// fixPendingLocked drops or adjusts pending changes that do not apply on
// top of the server copy and the save in flight: a delete or move of a
// block that is gone is dropped, an upsert placed after a block that is
// gone goes to the end.
func (e *Editor) fixPendingLocked() {
	st := e.srv.clone()
	if e.inflight != nil {
		for _, c := range e.inflight.Changes {
			st.apply(c, 0, true)
		}
	}
	out := e.pending[:0]
	for _, c := range e.pending {
		if err := st.apply(c, 0, true); err != nil {
			if c.Op != "upsert" {
				continue
			}
			c.After = nil
			if st.apply(c, 0, true) != nil {
				continue
			}
		}
		out = append(out, c)
	}
	e.pending = out
	e.local = st
}

// Change records local changes (upsert, delete, move as in draft.save).
// They must apply to the local copy (Document); they are sent by Flush.
// Changes computed from a Document read earlier may rest on content an
// update has changed since: use Edit for those.
func (e *Editor) Change(changes ...syncproto.Change) error {
	return e.Edit(func(flowdoc.Document) []syncproto.Change { return changes })
}

// Edit is Change with changes made from the local copy: fn gets the
// copy and returns the changes, with no update applied in between (fn
// runs under the editor's lock and must not call its methods).
func (e *Editor) Edit(fn func(flowdoc.Document) []syncproto.Change) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.localLocked().clone()
	changes := fn(docOf(st))
	for i, c := range changes {
		if err := st.apply(c, 0, true); err != nil {
			return fmt.Errorf("client: change %d (%s): %w", i, c.Op, err)
		}
	}
	e.pending = append(e.pending, changes...)
	e.local = st
	return nil
}

func (e *Editor) localLocked() *copyState {
	if e.local == nil {
		e.fixPendingLocked()
	}
	return e.local
}

// Document returns the local copy: the server copy with the save in
// flight and the pending changes applied.
func (e *Editor) Document() flowdoc.Document {
	e.mu.Lock()
	defer e.mu.Unlock()
	return docOf(e.localLocked())
}

// Server returns the server copy and its seq.
func (e *Editor) Server() (flowdoc.Document, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return docOf(&e.srv), e.srv.seq
}

// Pending reports whether local changes are not yet acknowledged.
func (e *Editor) Pending() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inflight != nil || len(e.pending) > 0
}

func docOf(s *copyState) flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: 1, Blocks: make([]flowdoc.Block, 0, len(s.order))}
	for _, id := range s.order {
		d.Blocks = append(d.Blocks, s.blocks[id])
	}
	return d
}

// Flush sends the pending changes as one draft.save with baseSeq the
// server copy's seq and a new key, and handles the answer. It does
// nothing when a save is in flight (saves of a document are not
// pipelined) or nothing is pending. A draft.conflict is resolved (the
// contested changes go to the Resolver) and returned as *folio.ConflictError;
// call Flush again to send what is left.
func (e *Editor) Flush(ctx context.Context) error {
	e.mu.Lock()
	if e.inflight != nil || len(e.pending) == 0 {
		e.mu.Unlock()
		return nil
	}
	e.keyN++
	s := &syncproto.Save{Doc: e.doc, BaseSeq: e.srv.seq, Key: e.keyBase + "-" + strconv.FormatUint(e.keyN, 36),
		Changes: e.pending, Merge: e.merge}
	if e.merge {
		e.sentBase = map[string]*flowdoc.Block{}
		for _, c := range s.Changes {
			if c.Op == "upsert" {
				if b, ok := e.srv.blocks[c.Block.ID]; ok {
					e.sentBase[c.Block.ID] = &b
				} else {
					e.sentBase[c.Block.ID] = nil
				}
			}
		}
	}
	e.pending = nil
	e.inflight = s
	e.mu.Unlock()
	return e.send(ctx, s)
}

// send sends the save in flight and handles its answer. A lost answer
// (the connection ended) leaves it in flight for Reopen.
func (e *Editor) send(ctx context.Context, s *syncproto.Save) error {
	e.mu.Lock()
	c := e.c
	e.mu.Unlock()
	// A copy: the client sets the envelope.
	msg := *s
	msg.Envelope = syncproto.Envelope{}
	r, err := c.Request(ctx, &msg)
	if err != nil {
		var re *syncproto.RemoteError
		if errors.As(err, &re) {
			// Refused (invalid, too large, ...): nothing was stored. The
			// changes are dropped; the caller reports the error.
			e.mu.Lock()
			if e.inflight == s {
				e.inflight = nil
				e.local = nil
				e.settleDeferredLocked(s)
			}
			e.mu.Unlock()
		}
		return err
	}
	switch r := r.(type) {
	case *syncproto.Ack:
		e.onAck(s, r)
		return nil
	case *syncproto.Conflict:
		e.onConflict(s, r)
		return r.ConflictError()
	}
	return fmt.Errorf("client: unexpected reply %s", r.Env().Type)
}

// onAck applies the acknowledged save to the server copy: every update
// below its seq is in the copy already (the server sends the ack after
// them), and a block or order that an update above it changed keeps that
// newer state.
func (e *Editor) onAck(s *syncproto.Save, a *syncproto.Ack) {
	e.mu.Lock()
	if e.inflight == s {
		merged := map[string]*flowdoc.Block{}
		for _, b := range a.Merged {
			if b.Block != nil {
				merged[b.ID] = b.Block
			}
		}
		for _, c := range s.Changes {
			if c.Op == "upsert" && merged[c.Block.ID] != nil {
				m := merged[c.Block.ID]
				c.Block = m // the server merged it: its content is the server's
				e.deferred[m.ID] = true
			}
			e.srv.apply(c, a.Seq, e.srv.orderSeq < a.Seq)
		}
		e.srv.seq = max(e.srv.seq, a.Seq)
		e.inflight = nil
		e.local = nil
		e.settleDeferredLocked(s)
	}
	e.mu.Unlock()
	if e.acked != nil {
		e.acked(a, s)
	}
}

// onConflict takes the server's contested blocks into the server copy and
// puts the save's changes back in front of the pending ones, resolving
// those the conflict names: a change equal to the server's block is
// dropped (it was applied, by this save or an earlier one whose ack was
// lost), the others go to the Resolver.
func (e *Editor) onConflict(s *syncproto.Save, cf *syncproto.Conflict) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inflight != s {
		return
	}
	e.inflight = nil
	touched := map[string]*flowdoc.Block{}
	for _, b := range cf.Blocks {
		if e.srv.blockSeq[b.ID] < b.Seq {
			if b.Block != nil {
				e.srv.blocks[b.ID] = *b.Block
			} else {
				delete(e.srv.blocks, b.ID)
				if i := e.srv.index(b.ID); i >= 0 {
					e.srv.order = slices.Delete(e.srv.order, i, i+1)
				}
			}
			e.srv.blockSeq[b.ID] = b.Seq
		}
		touched[b.ID] = b.Block
	}
	e.srv.seq = max(e.srv.seq, cf.Seq)
	// The save's changes rest on the copy at its baseSeq: every block the
	// copy has seen change since is contested, named in the conflict or
	// not (a conflict may stop at the first change that fails).
	since := map[string]*flowdoc.Block{}
	for id, seq := range e.srv.blockSeq {
		if seq > s.BaseSeq {
			if b, ok := e.srv.blocks[id]; ok {
				since[id] = &b
			} else {
				since[id] = nil
			}
		}
	}
	var back []syncproto.Change
	defer clear(e.deferred)
	for _, c := range s.Changes {
		if c.Op == "upsert" {
			if sb, ok := touched[c.Block.ID]; ok && sb != nil && sameBlock(sb, c.Block) {
				continue
			}
		}
		if c.Op == "delete" {
			if sb, ok := touched[c.BlockID]; ok && sb == nil {
				continue
			}
		}
		back = append(back, c)
	}
	if e.merge {
		// The save's changes rest on the copy as it was sent, the
		// pending ones on the save: one chain per block, from the
		// blocks as sent to the server's.
		bases, target := map[string]*flowdoc.Block{}, map[string]*flowdoc.Block{}
		for _, c := range back {
			id := c.BlockID
			if c.Op == "upsert" {
				id = c.Block.ID
				if b, ok := e.sentBase[id]; ok {
					bases[id] = b
				}
			}
			if sb, ok := since[id]; ok {
				target[id] = sb
			}
		}
		e.pending = e.rebaseChain(append(back, e.pending...), bases, target)
		e.local = nil
		e.fixPendingLocked()
		return
	}
	e.pending = append(e.resolveOps(back, since), e.pending...)
	e.rebaseLocked(touched)
}

// settleDeferredLocked rebases, once the save in flight s is answered,
// the pending changes of the blocks it upserts that the server's copy now
// holds differently (merged by the server, or changed by an update):
// they rest on s's block.
func (e *Editor) settleDeferredLocked(s *syncproto.Save) {
	if !e.merge || len(e.deferred) == 0 {
		return
	}
	bases, target := map[string]*flowdoc.Block{}, map[string]*flowdoc.Block{}
	for id := range e.deferred {
		mine := lastUpsert(s, id)
		if mine == nil {
			continue
		}
		now, ok := e.srv.blocks[id]
		if ok && sameBlock(&now, mine) {
			continue
		}
		bases[id] = mine
		if ok {
			target[id] = &now
		} else {
			target[id] = nil
		}
	}
	clear(e.deferred)
	e.pending = e.rebaseChain(e.pending, bases, target)
	e.local = nil
}

func sameBlock(a, b *flowdoc.Block) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
