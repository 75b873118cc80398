// The three-way merge of a text block's rich text that live sync uses
// (docs/protocol.md "Merging inside a block"): the same function as the Go
// package flowdoc/merge, checked against the same vectors
// (testdata/protocol/merge.json). Characters are code points (an inline
// equation is one, U+FFFC), each with its formatting; each side is diffed
// against the base into hunks, pure insertions and deletions slide to their
// leftmost equivalent place, hunks that cannot overlap apply together
// (identical ones once, ours before theirs at one point), others conflict.

export const MAX_CELLS = 1 << 22;
const MARKS = ['bold', 'italic', 'underline', 'strike', 'code'];
const OBJ = '\uFFFC';

// MergeConflict is what merge throws when the edits overlap.
export class MergeConflict extends Error {
  constructor(reason) {
    super('merge: ' + reason);
    this.name = 'MergeConflict';
  }
}

function canonicalMarks(ms) {
  const rank = (m) => {
    const i = MARKS.indexOf(m);
    return i >= 0 ? i : MARKS.length;
  };
  const out = [...(ms || [])].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return out.filter((m, i) => i === 0 || m !== out[i - 1]);
}

// formats interns formattings: chars carry an index.
function formats() {
  const ids = new Map();
  const runs = [];
  return {
    id(r) {
      const marks = canonicalMarks(r.marks);
      const key = JSON.stringify([marks, r.link || '', r.equation || '']);
      let id = ids.get(key);
      if (id === undefined) {
        id = runs.length;
        ids.set(key, id);
        const f = {};
        if (marks.length) f.marks = marks;
        if (r.link) f.link = r.link;
        if (r.equation) f.equation = r.equation;
        runs.push(f);
      }
      return id;
    },
    runs,
  };
}

function chars(fs, runs) {
  const out = [];
  for (const r of runs || []) {
    const f = fs.id(r);
    if (r.equation) {
      out.push([OBJ, f]);
      continue;
    }
    for (const c of r.text || '') out.push([c, f]); // for..of walks code points
  }
  return out;
}

const eq = (a, b) => a[0] === b[0] && a[1] === b[1];

function runsOf(fs, cs) {
  const out = [];
  let text = '';
  let cur = -1;
  const flush = () => {
    if (cur >= 0 && text !== '') out.push({ text, ...structuredClone(fs.runs[cur]) });
    text = '';
    cur = -1;
  };
  for (const [c, f] of cs) {
    const fr = fs.runs[f];
    if (fr.equation) {
      flush();
      out.push(structuredClone(fr));
      continue;
    }
    if (cur >= 0 && f !== cur) flush();
    cur = f;
    text += c;
  }
  flush();
  return out;
}

function slide(a, hs) {
  for (let k = 0; k < hs.length; k++) {
    const h = hs[k];
    const prev = k > 0 ? hs[k - 1].end : 0;
    const next = k + 1 < hs.length ? hs[k + 1].start : a.length;
    h.lo = h.start;
    h.hi = h.end;
    if (h.start === h.end && h.ins.length > 0) {
      let ins = h.ins;
      for (let q = h.start; q < next && eq(a[q], ins[0]); q++) {
        ins = [...ins.slice(1), a[q]];
        h.hi = q + 1;
      }
      while (h.start > prev && eq(a[h.start - 1], h.ins[h.ins.length - 1])) {
        h.ins = [a[h.start - 1], ...h.ins.slice(0, -1)];
        h.start--;
        h.end--;
      }
      h.lo = h.start;
    } else if (h.ins.length === 0) {
      const len = h.end - h.start;
      for (let e = h.end; e < next && eq(a[e], a[e - len]); e++) h.hi = e + 1;
      while (h.start > prev && eq(a[h.start - 1], a[h.end - 1])) {
        h.start--;
        h.end--;
      }
      h.lo = h.start;
    }
  }
}

// lcsOf returns at(i, j), the length of the longest common subsequence
// of a[i:] and b[j:], as the walk of diff needs it: from a band of the
// diagonals |j-i| <= w when that is exact (the band's LCS implies at most
// w insertions and deletions; a path with D of them never leaves the
// diagonals |j-i| <= D, and a cell outside the band reads 0, so every
// decision of the walk is the full table's), else from the full table.
// The same function as lcsOf in flowdoc/merge.
export function lcsOf(a, b) {
  const n = a.length;
  const m = b.length;
  let w = Math.max(n - m, m - n, 32);
  for (;;) {
    if (2 * w + 1 >= m + 1) return lcsFull(a, b);
    const at = lcsBand(a, b, w);
    const d = n + m - 2 * at(0, 0);
    if (d <= w) return at;
    w = d;
  }
}

export function lcsFull(a, b) {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const L = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      if (eq(a[i], b[j])) L[i * w + j] = L[(i + 1) * w + j + 1] + 1;
      else L[i * w + j] = Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  return (i, j) => L[i * w + j];
}

function lcsBand(a, b, w) {
  const n = a.length;
  const m = b.length;
  const cols = 2 * w + 1;
  const L = new Uint16Array(n * cols);
  for (let i = n - 1; i >= 0; i--) {
    const row = i * cols;
    const next = i + 1 < n ? row + cols : -1;
    for (let j = Math.min(m - 1, i + w); j >= Math.max(0, i - w); j--) {
      const k = j - i + w;
      if (eq(a[i], b[j])) {
        L[row + k] = (next >= 0 && j + 1 < m ? L[next + k] : 0) + 1;
      } else {
        const down = next >= 0 && k > 0 ? L[next + k - 1] : 0;
        const right = j + 1 < m && k + 1 < cols ? L[row + k + 1] : 0;
        L[row + k] = Math.max(down, right);
      }
    }
  }
  return (i, j) => {
    if (i >= n || j >= m) return 0;
    const k = j - i + w;
    return k < 0 || k >= cols ? 0 : L[i * cols + k];
  };
}

function diff(a, b, side) {
  let p = 0;
  while (p < a.length && p < b.length && eq(a[p], b[p])) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && eq(a[a.length - 1 - s], b[b.length - 1 - s])) s++;
  const am = a.slice(p, a.length - s);
  const bm = b.slice(p, b.length - s);
  const n = am.length;
  const m = bm.length;
  if (n === 0 && m === 0) return [];
  if (n === 0 || m === 0 || n * m > MAX_CELLS) {
    const out = [{ start: p, end: p + n, ins: bm, side }];
    slide(a, out);
    return out;
  }
  const at = lcsOf(am, bm);
  const out = [];
  let cur = null;
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const ins = j < m && at(i, j + 1) === at(i, j);
    const keep = !ins && i < n && j < m && eq(am[i], bm[j]);
    const del = !ins && !keep;
    if (keep) {
      cur = null;
      i++;
      j++;
      continue;
    }
    if (!cur) {
      cur = { start: p + i, end: p + i, ins: [], side };
      out.push(cur);
    }
    if (del) {
      i++;
      cur.end = p + i;
    } else {
      cur.ins.push(bm[j]);
      j++;
    }
  }
  slide(a, out);
  return out;
}

const same = (x, y) => x.start === y.start && x.end === y.end && x.ins.length === y.ins.length && x.ins.every((c, k) => eq(c, y.ins[k]));

function clash(a, b) {
  const ai = a.start === a.end;
  const bi = b.start === b.end;
  if (ai && bi) return false;
  if (ai) return a.lo < b.hi && a.hi > b.lo;
  if (bi) return b.lo < a.hi && b.hi > a.lo;
  return a.lo < b.hi && b.lo < a.hi;
}

// mergeRuns merges ours (already in the draft) and theirs (incoming), both
// edits of the rich text base; it throws MergeConflict when they overlap.
export function mergeRuns(base, ours, theirs) {
  const fs = formats();
  const b = chars(fs, base);
  const ho = diff(b, chars(fs, ours), 0);
  const ht = diff(b, chars(fs, theirs), 1);
  const all = [];
  let j = 0;
  for (const t of ht) {
    while (j < ho.length && ho[j].hi < t.lo) j++;
    let dup = false;
    for (let k = j; k < ho.length && ho[k].lo <= t.hi; k++) {
      if (same(ho[k], t)) {
        dup = true;
        break;
      }
      if (clash(ho[k], t)) throw new MergeConflict(`ours and theirs overlap near ${t.start} of a ${b.length}-character base`);
    }
    if (!dup) all.push(t);
  }
  all.push(...ho);
  // A stable sort: by start, an insertion before a range, ours first.
  all.sort((x, y) => x.start - y.start || (x.end > x.start) - (y.end > y.start) || x.side - y.side);
  const out = [];
  let pos = 0;
  for (const h of all) {
    for (let q = pos; q < h.start; q++) out.push(b[q]);
    out.push(...h.ins);
    pos = Math.max(pos, h.end);
  }
  for (let q = pos; q < b.length; q++) out.push(b[q]);
  return runsOf(fs, out);
}

const TEXT_TYPES = new Set(['paragraph', 'heading', 'quote']);

// mergeable reports whether blocks of a type are merged inside.
export const mergeable = (type) => TEXT_TYPES.has(type);

const head = (blk) => JSON.stringify([blk.type, blk.attrs || {}]);

// mergeBlock merges two edits of a text block: type and attributes as one
// unit (the side that changed them; both differently is a conflict), the
// rich text with mergeRuns. Throws MergeConflict.
export function mergeBlock(base, ours, theirs) {
  for (const blk of [base, ours, theirs]) {
    if (!mergeable(blk.type)) throw new MergeConflict(`a ${blk.type} block is not merged inside`);
    if (blk.id !== base.id) throw new MergeConflict(`blocks ${base.id} and ${blk.id} are not one block`);
  }
  let src;
  if (head(base) === head(ours)) src = theirs;
  else if (head(base) === head(theirs) || head(ours) === head(theirs)) src = ours;
  else throw new MergeConflict("both sides changed the block's type or attributes");
  const out = { id: base.id, type: src.type };
  if (src.attrs && Object.keys(src.attrs).length) out.attrs = structuredClone(src.attrs);
  const rt = mergeRuns(base.richText, ours.richText, theirs.richText);
  if (rt.length) out.richText = rt;
  return out;
}
