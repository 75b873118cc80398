// The sync module against a model server that keeps docs/protocol.md's
// rules (per-block seqs, a save conflicts when a block it touches changed
// since its baseSeq, keyed saves answered once, draft.updated to the other
// connections, replies and events of a connection in one FIFO queue).
// Several editors edit at random with delayed delivery and cut
// connections; at the end every editor shows the server's draft, and no
// acknowledged change is lost: every token an editor typed whose save was
// acknowledged (draft.ack) is in the final draft, unless a later save the
// server acknowledged replaced or deleted its block without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DocSync } from '../src/sync/document.js';
import { applyChanges, diffStates } from '../src/sync/changes.js';
import { blockKey } from '../src/editor/codec.js';

function para(id, text) {
  return { id, type: 'paragraph', richText: text ? [{ text }] : undefined };
}

class ModelServer {
  constructor(blocks) {
    this.seq = 1;
    this.order = blocks.map((b) => b.id);
    this.blocks = new Map(blocks.map((b) => [b.id, { b, seq: 1 }]));
    this.tomb = new Map(); // deleted id -> seq
    this.conns = new Set();
    this.keys = new Map();
    this.calls = 0;
    this.log = []; // every applied save: {seq, changes}
  }
  body() { return { schemaVersion: 1, blocks: this.order.map((id) => this.blocks.get(id).b) }; }
  handle(conn, m) {
    // A client that resends the same refused save for ever fails the test
    // rather than hanging it.
    if (++this.calls > 20000) { throw new Error("runaway saves: " + JSON.stringify(m).slice(0, 600) + " last=" + JSON.stringify(this.last).slice(0, 600)); }
    this.last = m;
    if (m.type === 'open') {
      conn.open = true;
      return conn.push({ type: 'snapshot', id: m.id, doc: 'd', seq: this.seq, body: this.body(), attrs: {}, head: 'v1.r0' });
    }
    if (m.type !== 'draft.save') return;
    const k = this.keys.get(m.key);
    if (k) return conn.push({ ...k, id: m.id });
    const touched = new Set();
    for (const c of m.changes) {
      touched.add(c.op === 'upsert' ? c.block.id : c.blockId);
      if (c.after) touched.add(c.after);
    }
    const stale = [];
    for (const id of touched) {
      const e = this.blocks.get(id);
      const s = e ? e.seq : this.tomb.get(id);
      if (s !== undefined && s > m.baseSeq) stale.push(e ? { id, block: e.b, seq: e.seq } : { id, seq: s });
    }
    // An anchor must exist when its change is applied (earlier changes of
    // the save may insert it).
    const present = new Set(this.blocks.keys());
    for (const c of m.changes) {
      if (c.after && !present.has(c.after)) stale.push({ id: c.after, seq: this.tomb.get(c.after) || this.seq });
      if (c.op === 'upsert') present.add(c.block.id);
      if (c.op === 'delete') present.delete(c.blockId);
    }
    if (stale.length) return conn.push({ type: 'draft.conflict', id: m.id, doc: 'd', seq: this.seq, blocks: stale });
    const seq = ++this.seq;
    const st = { order: this.order, blocks: new Map([...this.blocks].map(([id, e]) => [id, { b: e.b, c: blockKey(e.b), seq: e.seq }])) };
    const before = this.order.join();
    applyChanges(st, m.changes, seq);
    const changed = [];
    for (const c of m.changes) {
      if (c.op === 'upsert') { this.blocks.set(c.block.id, { b: c.block, seq }); changed.push({ id: c.block.id, block: c.block }); }
      if (c.op === 'delete') { this.blocks.delete(c.blockId); this.tomb.set(c.blockId, seq); changed.push({ id: c.blockId }); }
    }
    this.order = st.order;
    this.log.push({ seq, changes: m.changes });
    const ack = { type: 'draft.ack', doc: 'd', seq, unsealed: true, changed: changed.map((c) => c.id) };
    this.keys.set(m.key, ack);
    const data = { doc: 'd', seq, blocks: changed };
    if (this.order.join() !== before) data.order = this.order.slice();
    for (const other of this.conns) if (other !== conn && other.open) other.push({ type: 'draft.updated', stream: 'doc:d', data });
    conn.push({ ...ack, id: m.id });
  }
}

// A model connection: what the client sends reaches the server at once,
// what the server sends waits in a queue the test delivers from.
class ModelConn {
  constructor(server) {
    this.server = server;
    this.queue = [];
    this.waiting = new Map();
    this.n = 0;
    this.up = false;
    this.open = false;
    this.state = 'offline';
  }
  connected() { return this.up; }
  nextId() { return `r${++this.n}`; }
  push(m) { this.queue.push(m); }
  request(msg, onReply, id) {
    if (!this.up) return false;
    const rid = id || this.nextId();
    this.waiting.set(rid, onReply);
    this.server.handle(this, { ...msg, id: rid });
    return true;
  }
  deliverOne() {
    const m = this.queue.shift();
    if (!m) return false;
    // What the editor takes as acknowledged: the save in flight whose
    // draft.ack it is handed (onAck clears inflight when it accepts it).
    const f = this.sync.inflight;
    if (m.id && this.waiting.has(m.id)) { const fn = this.waiting.get(m.id); this.waiting.delete(m.id); fn(m); }
    else if (m.stream) this.sync.handle(m);
    if (m.type === 'draft.ack' && f && f.id === m.id && this.sync.inflight !== f && this.onAcked) this.onAcked(f, m.seq);
    return true;
  }
  connect() { this.up = true; this.state = 'online'; this.server.conns.add(this); this.sync.open(); }
  cut() { this.up = false; this.open = false; this.state = 'reconnecting'; this.queue = []; this.waiting.clear(); this.server.conns.delete(this); this.sync.notify(); }
}

// A model view: the blocks the user sees; conflicts are resolved by
// keeping the local version, as a person pressing "Keep mine".
class ModelView {
  constructor() { this.blocks = []; this.attrs = {}; this.sync = null; }
  read() { return this.blocks; }
  write(set, order, state) {
    if (!set) { this.blocks = state.order.map((id) => state.blocks.get(id).b); return; }
    const map = new Map(this.blocks.map((b) => [b.id, b]));
    for (const [id, b] of set) { if (b) map.set(id, b); else map.delete(id); }
    const ord = order || this.blocks.map((b) => b.id);
    for (const [id, b] of set) if (b && !ord.includes(id)) ord.push(id);
    this.blocks = ord.filter((id) => map.has(id)).map((id) => map.get(id));
  }
  composing() { return false; }
  showConflicts() {}
  readAttrs() { return this.attrs; }
  writeAttrs(a) { this.attrs = a; }
  changed() {}
}

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
}

for (const seed of Array.from({ length: 40 }, (_, i) => i + 1)) {
  test(`model: 4 editors, random edits, delays and cuts (seed ${seed})`, () => {
    const rand = rng(seed);
    const initial = Array.from({ length: 6 }, (_, i) => para(`b${i}`, `block ${i}`));
    const server = new ModelServer(initial);
    const editors = [];
    const acked = []; // {token, id, seq, editor}: tokens of acknowledged saves
    for (let e = 0; e < 4; e++) {
      const conn = new ModelConn(server);
      const view = new ModelView();
      const sync = new DocSync(conn, 'd', view, { saveEvery: 1e9, keyPrefix: `e${e}` });
      conn.sync = sync;
      conn.onAcked = (save, seq) => {
        for (const ch of save.changes || []) {
          if (ch.op !== 'upsert') continue;
          for (const t of tokens(ch.block)) acked.push({ token: t, id: ch.block.id, seq, editor: e });
        }
      };
      editors.push({ conn, view, sync, n: 0 });
      conn.connect();
      while (conn.deliverOne());
    }
    for (let step = 0; step < 400; step++) {
      const ed = editors[Math.floor(rand() * editors.length)];
      const r = rand();
      if (r < 0.4) {
        // Edit: change, insert, delete or move a block.
        const bs = ed.view.blocks.slice();
        const k = rand();
        const i = Math.floor(rand() * bs.length);
        // Every edit adds a token [eE.N] no other edit writes.
        const token = () => `[e${editors.indexOf(ed)}.${ed.n++}]`;
        if (k < 0.6 && bs.length) bs[i] = para(bs[i].id, `${(bs[i].richText || [{ text: '' }])[0].text} ${token()}`);
        else if (k < 0.8) bs.splice(i, 0, para(`n${editors.indexOf(ed)}x${ed.n}`, `new ${token()}`));
        else if (k < 0.9 && bs.length > 2) bs.splice(i, 1);
        else if (bs.length > 1) { const [b] = bs.splice(i, 1); bs.splice(Math.floor(rand() * bs.length), 0, b); }
        ed.view.blocks = bs;
        ed.sync.edited();
      } else if (r < 0.55) {
        ed.sync.flush();
      } else if (r < 0.58 && ed.conn.up) {
        ed.conn.cut();
      } else if (r < 0.65 && !ed.conn.up) {
        ed.conn.connect();
      } else {
        ed.conn.deliverOne();
      }
      // A person resolves a conflict by keeping theirs own version.
      for (const id of [...ed.sync.conflicts.keys()]) if (rand() < 0.5) ed.sync.resolve(id, rand() < 0.5 ? 'mine' : 'theirs');
    }
    // Quiesce: everyone online, conflicts resolved, everything delivered and saved.
    for (let round = 0; round < 50; round++) {
      let busy = false;
      for (const ed of editors) {
        if (!ed.conn.up) ed.conn.connect();
        for (const id of [...ed.sync.conflicts.keys()]) ed.sync.resolve(id, 'mine');
        ed.sync.flush();
        while (ed.conn.deliverOne()) busy = true;
        if (ed.sync.inflight || ed.sync.dirty || ed.sync.conflicts.size) busy = true;
      }
      if (!busy) break;
    }
    const want = server.body().blocks.map(blockKey);
    for (const [i, ed] of editors.entries()) {
      assert.equal(ed.sync.status().state, "saved", `editor ${i} is ${ed.sync.status().state} ${JSON.stringify([...ed.sync.conflicts])} inflight=${JSON.stringify(ed.sync.inflight)} view=${JSON.stringify(ed.view.blocks.map(b=>b.id))} copy=${JSON.stringify(ed.sync.copy.order)}`);
      assert.deepEqual(ed.view.blocks.map(blockKey), want, `editor ${i} shows the server's draft`);
      assert.equal(ed.sync.copy.seq, server.seq, `editor ${i}'s copy is at the server's seq`);
    }
    // No acknowledged change lost.
    assert.ok(acked.length > 20, `only ${acked.length} tokens were acknowledged: the run tests too little`);
    const final = new Map(server.body().blocks.map((b) => [b.id, tokens(b)]));
    let removed = 0;
    for (const a of acked) {
      if ((final.get(a.id) || new Set()).has(a.token)) continue;
      const later = server.log.find((s) => s.seq > a.seq && s.changes.some((ch) =>
        (ch.op === 'delete' && ch.blockId === a.id) || (ch.op === 'upsert' && ch.block.id === a.id && !tokens(ch.block).has(a.token))));
      assert.ok(later, `${a.token} of editor ${a.editor}, acknowledged at seq ${a.seq} in block ${a.id}, is lost: no later acknowledged save removed it; the draft holds ${JSON.stringify([...(final.get(a.id) || [])])}`);
      removed++;
    }
    assert.ok(removed < acked.length, 'every acknowledged token was removed again');
  });
}

// tokens are the [eE.N] tokens in a block's text.
function tokens(b) {
  const text = (b.richText || []).map((r) => r.text || '').join('');
  return new Set(text.match(/\[e\d+\.\d+\]/g) || []);
}

test('diff: an edit, an insert, a move and a delete are four changes that rebuild the order', () => {
  const base = { order: ['a', 'b', 'c', 'd'], blocks: new Map(['a', 'b', 'c', 'd'].map((id) => [id, { b: para(id, id), c: blockKey(para(id, id)) }])) };
  const cur = [para('b', 'b'), para('a', 'A!'), para('x', 'x'), para('c', 'c')];
  const changes = diffStates(base, cur);
  assert.equal(changes.length, 4, JSON.stringify(changes));
  const st = { order: base.order.slice(), blocks: new Map(base.blocks) };
  applyChanges(st, changes, 2);
  assert.deepEqual(st.order, ['b', 'a', 'x', 'c']);
});

test('merging: another editor typing at the start of a paragraph I type at the end of is no conflict', () => {
  const server = new ModelServer([para('b0', 'middle')]);
  const eds = [0, 1].map((e) => {
    const conn = new ModelConn(server);
    const view = new ModelView();
    const sync = new DocSync(conn, 'd', view, { saveEvery: 1e9, keyPrefix: `m${e}` });
    conn.sync = sync;
    conn.connect();
    while (conn.deliverOne());
    return { conn, view, sync };
  });
  const [a, b] = eds;
  a.view.blocks = [para('b0', 'Start middle')];
  a.sync.edited();
  b.sync.held = true; // b's save waits: a's update arrives first
  b.view.blocks = [para('b0', 'middle end')];
  b.sync.edited();
  a.sync.flush();
  while (a.conn.deliverOne());
  assert.equal(a.sync.inflight, null, 'a is acknowledged');
  while (b.conn.deliverOne());
  assert.equal(b.sync.conflicts.size, 0, 'no conflict on a non-overlapping edit');
  assert.deepEqual(b.view.blocks, [para('b0', 'Start middle end')]);
  assert.ok(server.last.merge === true, 'saves opt in to merging');
  b.sync.held = false;
  b.sync.flush();
  while (b.conn.deliverOne());
  while (a.conn.deliverOne());
  for (const ed of eds) assert.deepEqual(ed.view.blocks.map(blockKey), [blockKey(para('b0', 'Start middle end'))]);
  // Overlapping edits still conflict.
  b.sync.held = true;
  a.view.blocks = [para('b0', 'Start MIDDLE end')];
  a.sync.edited();
  b.view.blocks = [para('b0', 'Start muddle end')];
  b.sync.edited();
  a.sync.flush();
  while (a.conn.deliverOne());
  while (b.conn.deliverOne());
  assert.equal(b.sync.conflicts.size, 1, 'overlapping edits are a conflict');
  for (const ed of eds) ed.sync.close(); // no save timer left behind
});
