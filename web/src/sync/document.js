// DocSync: docs/protocol.md's "client algorithm" for one open document, in
// prosemirror-collab's discipline. The server is the authority; this module
// keeps
//
//   - the server copy (copy): the draft as the server had it at copy.seq,
//     with each block's and the order's seq;
//   - at most one save in flight (inflight): sent, not yet answered, with
//     its key, kept unchanged for a resend after a reconnect;
//   - the pending changes, which are not stored as a list but are exactly
//     the difference between what the view shows and base() (the server
//     copy with the save in flight applied). A block whose local change met
//     another editor's change is held in conflicts until the user chooses;
//     it is not sent meanwhile. With merging (opts.merge, on by default)
//     saves carry merge (docs/protocol.md "Merging inside a block"): a text
//     block changed both here and by another editor is first merged with
//     sync/merge.js, the server's function, and is a conflict only when
//     the two edits overlap; the merged blocks of an ack rebase the view
//     the same way.
//
// It knows nothing of the DOM. The view is an object with:
//   read()            the blocks the user sees, canonical, in order
//   write(set, order) make the view show those blocks: set maps id -> block
//                     (null: deleted) for the blocks to replace, order is
//                     the full order (or null: unchanged); must not move
//                     the caret of blocks it does not replace
//   composing()       true during an IME composition: nothing is saved,
//                     rebased or re-rendered then; call resume() after it
//   readAttrs()       the article attributes the user sees ({} when none)
//   writeAttrs(a)     show attributes a
//   changed(state)    the status changed (see status())
// The connection (sync/connection.js) is given as conn with request(msg,
// onReply) and the document's messages are given to handle(msg).

import { blockKey, canon } from '../editor/codec.js';
import { applyChanges, cloneState, diffStates } from './changes.js';
import { mergeBlock, MergeConflict } from './merge.js';

const SAVE_EVERY_MS = 1200;

export class DocSync {
  constructor(conn, doc, view, opts = {}) {
    this.conn = conn;
    this.doc = doc;
    this.view = view;
    this.saveEvery = opts.saveEvery ?? SAVE_EVERY_MS;
    this.keyPrefix = opts.keyPrefix || randomKey();
    this.keyCount = 0;
    this.merge = opts.merge ?? true;
    this.copy = null; // null until the first snapshot
    this.inflight = null;
    this.conflicts = new Map(); // id -> {mine, theirs}
    this.early = []; // events before the snapshot
    this.deferred = []; // messages that arrived during a composition
    this.timer = null;
    this.dirty = false;
    this.blocked = null; // an error that stops saving until the next edit
    this.retryTimer = null;
    this.head = '';
    this.unsealed = false;
    this.opening = false;
    this.closed = false;
    this.lastAck = 0;
    this.onEvent = opts.onEvent || (() => {});
    // held stops sending saves (changes stay pending) while true: the
    // tests use it to make "another editor's save arrives before mine is
    // sent" happen on purpose.
    this.held = false;
  }

  // open asks for the snapshot (on first use and after every reconnect).
  open() {
    if (this.closed) return;
    this.opening = true;
    this.notify();
    this.conn.request({ type: 'open', doc: this.doc }, (m) => this.handle(m));
  }

  // close leaves the document.
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    if (this.conn.connected()) this.conn.request({ type: 'leave', doc: this.doc }, () => {});
  }

  // edited is called by the view after every local change.
  edited() {
    this.dirty = true;
    this.blocked = null;
    if (!this.timer) this.timer = setTimeout(() => { this.timer = null; this.save(); }, this.saveEvery);
    this.notify();
  }

  // flush saves now what is pending (Checkpoint, tests, leaving).
  flush() {
    clearTimeout(this.timer);
    this.timer = null;
    this.save();
  }

  // resume is called by the view when a composition ends.
  resume() {
    const q = this.deferred;
    this.deferred = [];
    for (const m of q) this.handle(m);
    if (this.dirty && !this.timer) this.save();
  }

  // status is what the page shows: saving, saved, offline, reconnecting,
  // conflict, error; with unsealed, head and the error message.
  status() {
    let state;
    if (!this.conn.connected()) state = this.conn.state === 'reconnecting' ? 'reconnecting' : 'offline';
    else if (this.opening || !this.copy) state = 'loading';
    else if (this.blocked) state = 'error';
    else if (this.conflicts.size) state = 'conflict';
    else if (this.inflight || this.dirty) state = 'saving';
    else state = 'saved';
    return { state, unsealed: this.unsealed, head: this.head, error: this.blocked, seq: this.copy ? this.copy.seq : 0 };
  }

  hasUnsaved() {
    return !!(this.inflight || this.dirty || this.conflicts.size);
  }

  notify() {
    this.view.changed(this.status());
    const w = this.waiters;
    if (w && w.length) {
      this.waiters = [];
      for (const fn of w) fn();
    }
  }

  // ---- incoming --------------------------------------------------------

  // handle takes every message of this document: the replies to its
  // requests and the events of its stream, in the order they arrived.
  handle(m) {
    if (this.closed) return;
    if (this.view.composing()) {
      this.deferred.push(m);
      return;
    }
    switch (m.type) {
      case 'snapshot': return this.onSnapshot(m);
      case 'draft.ack': return this.onAck(m);
      case 'draft.conflict': return this.onConflict(m);
      case 'draft.updated':
        if (!this.copy || this.opening) { this.early.push(m); return; }
        return this.onUpdated(m.data);
      case 'version.created':
        this.head = m.data.label;
        this.unsealed = false;
        this.onEvent(m);
        return this.notify();
      case 'resync':
        // Updates were missed: a fresh snapshot (rule 7).
        if (!this.opening) this.open();
        return;
      case 'error':
        return this.onError(m);
      default:
        this.onEvent(m);
    }
  }

  onSnapshot(m) {
    const first = !this.copy;
    const oldBase = first ? null : this.base();
    this.copy = stateFrom(m);
    this.head = m.head || '';
    this.unsealed = !!m.unsealed;
    this.opening = false;
    if (first) {
      this.view.write(null, null, this.copy);
      this.view.writeAttrs(this.copy.attrs);
      // The benchmark of time to editable reads this mark.
      if (globalThis.performance && performance.mark) performance.mark('folio:editable');
    } else {
      // After a reconnect: resend the save in flight unchanged, with its
      // key (Lost acks); then rebase what the user has on the new copy.
      if (this.inflight) this.send(this.inflight);
      this.rebase(oldBase, this.base());
    }
    const early = this.early;
    this.early = [];
    for (const e of early) this.handle(e);
    this.notify();
    if (this.dirty) this.save();
  }

  onUpdated(d) {
    if (d.seq <= this.copy.seq) return; // rule 2: already in the copy
    const oldBase = cloneState(this.base());
    const c = this.copy;
    for (const e of d.blocks || []) {
      if (e.block) c.blocks.set(e.id, { b: e.block, c: blockKey(e.block), seq: d.seq });
      else {
        c.blocks.delete(e.id);
        c.deleted.set(e.id, d.seq);
        const i = c.order.indexOf(e.id);
        if (i >= 0) c.order.splice(i, 1);
      }
    }
    if (d.order) {
      c.order = d.order.slice();
      c.orderSeq = d.seq;
    } else {
      for (const e of d.blocks || []) if (e.block && !c.order.includes(e.id)) c.order.push(e.id);
    }
    if (d.attrs) {
      c.attrs = d.attrs;
      c.attrsSeq = d.seq;
    }
    c.seq = d.seq;
    if (d.unsealed !== undefined) this.unsealed = d.unsealed;
    this.rebase(oldBase, this.base());
    if (d.attrs && canon(this.view.readAttrs()) === canon(oldBase.attrs)) this.view.writeAttrs(d.attrs);
    this.onEvent({ type: 'draft.updated', data: d });
    this.notify();
  }

  onAck(m) {
    const f = this.inflight;
    if (!f || m.id !== f.id) return;
    const S = m.seq;
    const c = this.copy;
    const oldBase = this.merge ? cloneState(this.base()) : null;
    // A block the server merged is stored as the ack's merged content.
    const merged = new Map((m.merged || []).filter((e) => e.block).map((e) => [e.id, e.block]));
    // Rule 4, change by change: a block the copy knows at a seq above S
    // (changed, or deleted, after this save, or in a snapshot taken after
    // it) keeps the copy's state; so does the order when orderSeq is.
    const newer = (id) => {
      const e = c.blocks.get(id);
      if (e) return e.seq > S;
      return (c.deleted.get(id) ?? -1) > S || c.snapSeq >= S;
    };
    const place = (id, after) => {
      if (c.orderSeq > S) return;
      const i = c.order.indexOf(id);
      if (i >= 0) c.order.splice(i, 1);
      const j = after === undefined ? -1 : after === '' ? 0 : c.order.indexOf(after) + 1;
      if (after === undefined || (after !== '' && j === 0)) c.order.push(id);
      else c.order.splice(j, 0, id);
    };
    for (const ch of f.changes || []) {
      if (ch.op === 'upsert') {
        const id = ch.block.id;
        if (newer(id)) continue;
        const known = c.blocks.has(id);
        const b = merged.get(id) || ch.block;
        c.blocks.set(id, { b, c: blockKey(b), seq: S });
        if (!known || ch.after !== undefined) place(id, ch.after);
      } else if (ch.op === 'delete') {
        if (newer(ch.blockId)) continue;
        c.blocks.delete(ch.blockId);
        c.deleted.set(ch.blockId, S);
        const i = c.order.indexOf(ch.blockId);
        if (i >= 0 && c.orderSeq <= S) c.order.splice(i, 1);
      } else if (ch.op === 'move') {
        if (c.blocks.has(ch.blockId)) place(ch.blockId, ch.after);
      }
    }
    if (f.attrs && (c.attrsSeq || 0) <= S) { c.attrs = f.attrs; c.attrsSeq = S; }
    c.seq = Math.max(c.seq, S);
    this.inflight = null;
    // What the user typed since rests on the save as sent: rebase it onto
    // the server's blocks (merged, or changed by an update after S).
    if (oldBase) this.rebase(oldBase, this.base());
    this.unsealed = !!m.unsealed;
    this.lastAck = Date.now();
    this.onEvent(m);
    this.notify();
    if (this.dirty) this.save();
  }

  onConflict(m) {
    const f = this.inflight;
    if (!f || m.id !== f.id) return;
    const c = this.copy;
    for (const e of m.blocks || []) {
      const own = c.blocks.get(e.id);
      if (own && own.seq >= e.seq) continue; // the copy's is newer
      if (e.block) {
        c.blocks.set(e.id, { b: e.block, c: blockKey(e.block), seq: e.seq });
        if (!c.order.includes(e.id)) c.order.push(e.id);
      } else {
        c.blocks.delete(e.id);
        c.deleted.set(e.id, e.seq);
        const i = c.order.indexOf(e.id);
        if (i >= 0) c.order.splice(i, 1);
      }
    }
    c.seq = Math.max(c.seq, m.seq);
    this.inflight = null;
    // Rule 5: each change of the save whose block changed since its
    // baseSeq goes to the user, unless the server holds it exactly as
    // sent (it was applied); the rest is simply sent again.
    const cur = new Map(this.view.read().map((b) => [b.id, b]));
    for (const ch of f.changes || []) {
      const id = ch.op === 'upsert' ? ch.block.id : ch.blockId;
      const server = c.blocks.get(id);
      // A block the copy did not hold when the save was sent is one this
      // editor inserts: nobody else can have changed it.
      const changedSince = server ? server.seq > f.baseSeq : f.existed.includes(id);
      if (!changedSince) continue;
      const mine = cur.get(id) || null;
      if ((mine ? blockKey(mine) : null) === (server ? server.c : null)) continue;
      if (!server && !c.order.includes(id) && ch.op === 'delete') continue;
      this.conflicts.set(id, { mine, theirs: server ? server.b : null });
    }
    this.dirty = true;
    this.view.showConflicts(this.conflicts);
    this.notify();
    this.save();
  }

  onError(m) {
    const f = this.inflight;
    if (f && m.id === f.id) {
      this.inflight = null;
      if (m.code === 'storage_full') {
        this.dirty = true;
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.save(), m.retryAfterMs || 1000);
      } else {
        // Rule 6: nothing was stored; the user fixes it (the next edit
        // tries again).
        this.blocked = m.message || m.code;
        this.dirty = true;
      }
      this.notify();
      return;
    }
    if (this.opening) {
      this.opening = false;
      this.blocked = m.message || m.code;
      this.onEvent({ type: 'open.error', error: m });
      this.notify();
    }
  }

  // ---- the user's choice on a conflict ----------------------------------

  // resolve ends the conflict on block id: "mine" keeps the local version
  // (it is saved on top of the server's), "theirs" takes the server's.
  resolve(id, choice) {
    const k = this.conflicts.get(id);
    if (!k) return;
    this.conflicts.delete(id);
    if (choice === 'theirs') {
      const set = new Map([[id, k.theirs]]);
      const base = this.base();
      this.view.write(set, base.order.includes(id) ? null : this.view.read().map((b) => b.id).filter((x) => x !== id));
    }
    this.view.showConflicts(this.conflicts);
    this.edited();
  }

  // ---- saving ----------------------------------------------------------

  // base is the server copy with the save in flight applied.
  base() {
    if (!this.inflight) return this.copy;
    const s = applyChanges(cloneState(this.copy), this.inflight.changes || [], Infinity);
    if (this.inflight.attrs) s.attrs = this.inflight.attrs;
    return s;
  }

  // save sends the pending changes as one draft.save (rule 3) when nothing
  // of this document is in flight, the connection is up and no composition
  // is going on.
  save() {
    if (this.closed || !this.copy || this.opening || this.inflight || this.blocked || this.held) return;
    if (!this.conn.connected() || this.view.composing()) { this.notify(); return; }
    const base = this.copy;
    const changes = diffStates(base, this.view.read(), new Set(this.conflicts.keys()));
    const attrs = this.view.readAttrs();
    const attrsChanged = canon(attrs) !== canon(base.attrs || {});
    this.dirty = false;
    if (!changes.length && !attrsChanged) { this.notify(); return; }
    const msg = { type: 'draft.save', doc: this.doc, baseSeq: base.seq, key: `${this.keyPrefix}-${++this.keyCount}` };
    if (changes.length) msg.changes = changes;
    if (this.merge && changes.length) msg.merge = true;
    if (attrsChanged) msg.attrs = attrs;
    const existed = changes.map((ch) => (ch.op === 'upsert' ? ch.block.id : ch.blockId)).filter((id) => base.blocks.has(id));
    this.inflight = { ...msg, id: this.conn.nextId() };
    Object.defineProperty(this.inflight, 'existed', { value: existed, enumerable: false });
    this.send(this.inflight);
    this.notify();
  }

  send(f) {
    const msg = { ...f };
    this.conn.request(msg, (m) => this.handle(m), f.id);
  }

  // ---- rebasing --------------------------------------------------------

  // rebase brings what the user sees from oldBase to newBase: a block the
  // user did not change takes the new content; one the user changed that
  // also changed on the server becomes a conflict (rule 2); the order
  // follows the server's unless the user moved blocks.
  rebase(oldBase, newBase) {
    const cur = this.view.read();
    const curMap = new Map(cur.map((b) => [b.id, blockKey(b)]));
    const set = new Map();
    const ids = new Set([...oldBase.blocks.keys(), ...newBase.blocks.keys()]);
    for (const id of ids) {
      const o = oldBase.blocks.get(id);
      const n = newBase.blocks.get(id);
      const oc = o ? o.c : null;
      const nc = n ? n.c : null;
      if (oc === nc) continue;
      const ec = curMap.has(id) ? curMap.get(id) : null;
      if (ec === oc) set.set(id, n ? n.b : null);
      else if (ec === nc) continue;
      else {
        const mine = cur.find((b) => b.id === id) || null;
        const m = this.merge && o && n && mine && !this.conflicts.has(id) ? tryMerge(o.b, n.b, mine) : null;
        if (m) set.set(id, m);
        else this.conflicts.set(id, { mine, theirs: n ? n.b : null });
      }
    }
    const curOrder = cur.map((b) => b.id);
    const order = rebaseOrder(oldBase.order, newBase.order, curOrder, set);
    const orderChanged = order.join('\n') !== curOrder.join('\n');
    if (set.size || orderChanged) this.view.write(set, orderChanged ? order : null);
    if (this.conflicts.size) this.view.showConflicts(this.conflicts);
  }
}

// rebaseOrder is the order the user sees after the server's order went from
// oldOrder to newOrder: the server's, with the user's new blocks after
// their predecessors; when the user moved blocks, the user's order with the
// server's new blocks placed after theirs.
export function rebaseOrder(oldOrder, newOrder, curOrder, set) {
  const oldSet = new Set(oldOrder);
  const newSet = new Set(newOrder);
  const curSet = new Set(curOrder);
  const deleted = (id) => set.has(id) && set.get(id) === null;
  const relCur = curOrder.filter((id) => oldSet.has(id));
  const relOld = oldOrder.filter((id) => curSet.has(id));
  let out;
  let extra;
  let extraOrder;
  if (relCur.join('\n') === relOld.join('\n')) {
    // No local moves: the server's order, less what the user deleted,
    out = newOrder.filter((id) => (curSet.has(id) || !oldSet.has(id)) && !deleted(id));
    // plus the user's new blocks.
    extra = curOrder.filter((id) => !oldSet.has(id) && !newSet.has(id));
    extraOrder = curOrder;
  } else {
    out = curOrder.filter((id) => !deleted(id));
    extra = newOrder.filter((id) => !oldSet.has(id) && !curSet.has(id));
    extraOrder = newOrder;
  }
  for (const id of extra) {
    const i = extraOrder.indexOf(id);
    let at = 0;
    for (let j = i - 1; j >= 0; j--) {
      const k = out.indexOf(extraOrder[j]);
      if (k >= 0) { at = k + 1; break; }
    }
    out.splice(at, 0, id);
  }
  return out;
}

// tryMerge is mergeBlock(base, server, mine), or null when the edits
// overlap (or the blocks are not text blocks).
function tryMerge(base, server, mine) {
  try {
    return mergeBlock(base, server, mine);
  } catch (e) {
    if (e instanceof MergeConflict) return null;
    throw e;
  }
}

function stateFrom(snap) {
  const blocks = new Map();
  const order = [];
  for (const b of (snap.body && snap.body.blocks) || []) {
    blocks.set(b.id, { b, c: blockKey(b), seq: snap.seq });
    order.push(b.id);
  }
  // deleted: the seq at which a block left the copy (rule 4 needs it);
  // snapSeq: a block absent from the snapshot left at or before it.
  return { seq: snap.seq, order, orderSeq: snap.seq, blocks, deleted: new Map(), snapSeq: snap.seq, attrs: snap.attrs || {}, attrsSeq: snap.seq };
}

function randomKey() {
  const b = new Uint8Array(6);
  globalThis.crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
