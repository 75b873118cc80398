// Block-level changes between two states of a document, in the shape of
// docs/protocol.md's draft.save, and their application with the server's
// semantics (internal/repo applyChanges).
//
// A state is {order: [id…], blocks: Map id -> {b: block, c: canon, seq}}.

import { blockKey } from '../editor/codec.js';

// cloneState copies a state (the blocks themselves are immutable values).
export function cloneState(s) {
  return { ...s, order: s.order.slice(), blocks: new Map(s.blocks), deleted: new Map(s.deleted || []) };
}

// applyChanges applies draft.save changes to state s in place, as the server
// does: an upsert replaces the block (and moves it when `after` is given) or
// inserts it (after `after`; at the start for ""; at the end when absent), a
// delete removes, a move places after `after`. An anchor that is missing
// puts the block at the end (the server would answer a conflict).
export function applyChanges(s, changes, seq) {
  const place = (id, after) => {
    const i = s.order.indexOf(id);
    if (i >= 0) s.order.splice(i, 1);
    if (after === undefined || after === null) s.order.push(id);
    else if (after === '') s.order.unshift(id);
    else {
      const j = s.order.indexOf(after);
      if (j < 0) s.order.push(id);
      else s.order.splice(j + 1, 0, id);
    }
  };
  for (const ch of changes) {
    if (ch.op === 'upsert') {
      const id = ch.block.id;
      const known = s.blocks.has(id);
      s.blocks.set(id, { b: ch.block, c: blockKey(ch.block), seq });
      if (!known || ch.after !== undefined) place(id, ch.after);
    } else if (ch.op === 'delete') {
      s.blocks.delete(ch.blockId);
      const i = s.order.indexOf(ch.blockId);
      if (i >= 0) s.order.splice(i, 1);
    } else if (ch.op === 'move') {
      if (s.blocks.has(ch.blockId)) place(ch.blockId, ch.after);
    }
  }
  return s;
}

// diffStates returns the changes that turn state base into the blocks cur
// (an array of canonical blocks in order), skipping the ids in skip (they
// keep base's content and place). Blocks are compared by canon; the order
// by a longest increasing subsequence of base positions, so that moving
// one block is one move.
export function diffStates(base, cur, skip = new Set()) {
  const baseIdx = new Map(base.order.map((id, i) => [id, i]));
  const items = [];
  for (const b of cur) {
    if (skip.has(b.id)) {
      if (baseIdx.has(b.id)) items.push({ id: b.id, keep: true });
      continue;
    }
    items.push({ id: b.id, b, c: blockKey(b) });
  }
  const curIds = new Set(items.map((it) => it.id));
  const common = items.filter((it) => baseIdx.has(it.id));
  const inOrder = lis(common.map((it) => baseIdx.get(it.id)));
  const kept = new Set(inOrder.map((k) => common[k].id));
  const changes = [];
  let prev = '';
  for (const it of items) {
    const old = base.blocks.get(it.id);
    if (!old) {
      changes.push({ op: 'upsert', block: it.b, after: prev });
    } else if (!kept.has(it.id)) {
      if (!it.keep && it.c !== old.c) changes.push({ op: 'upsert', block: it.b, after: prev });
      else changes.push({ op: 'move', blockId: it.id, after: prev });
    } else if (!it.keep && it.c !== old.c) {
      changes.push({ op: 'upsert', block: it.b });
    }
    prev = it.id;
  }
  for (const id of base.order) {
    if (!curIds.has(id) && !skip.has(id)) changes.push({ op: 'delete', blockId: id });
  }
  return changes;
}

// lis returns the indexes of a longest strictly increasing subsequence of a.
function lis(a) {
  const tails = [];
  const prevIdx = new Array(a.length);
  for (let i = 0; i < a.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[tails[mid]] < a[i]) lo = mid + 1;
      else hi = mid;
    }
    prevIdx[i] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = i;
  }
  const out = [];
  for (let k = tails.length ? tails[tails.length - 1] : -1; k >= 0; k = prevIdx[k]) out.push(k);
  return out.reverse();
}
