// The shared merge vectors (testdata/protocol/merge.json, the same file the
// Go package flowdoc/merge reads) through web/src/sync/merge.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mergeRuns, mergeBlock, MergeConflict, lcsOf, lcsFull } from '../src/sync/merge.js';

const root = new URL('../../', import.meta.url);
const file = JSON.parse(readFileSync(new URL('testdata/protocol/merge.json', root), 'utf8'));
const rt = (v) => (typeof v === 'string' ? (v === '' ? [] : [{ text: v }]) : v);

test('at least 60 vectors', () => assert.ok(file.vectors.length >= 60, `${file.vectors.length} vectors`));

for (const v of file.vectors) {
  test(v.name, () => {
    if (v.conflict) {
      assert.throws(() => mergeRuns(rt(v.base), rt(v.ours), rt(v.theirs)), MergeConflict);
      return;
    }
    assert.deepEqual(mergeRuns(rt(v.base), rt(v.ours), rt(v.theirs)), rt(v.merged));
  });
}

test('blocks: type and attributes merge as one unit', () => {
  const p = (text) => ({ id: 'p1', type: 'paragraph', richText: [{ text }] });
  const h = (level, text) => ({ id: 'p1', type: 'heading', attrs: { level }, richText: [{ text }] });
  assert.deepEqual(mergeBlock(p('ab'), h(2, 'ab'), p('abc')), h(2, 'abc'));
  assert.throws(() => mergeBlock(h(1, 'ab'), h(2, 'ab'), h(3, 'ab')), MergeConflict);
  assert.throws(() => mergeBlock(p('ab'), { id: 'p1', type: 'code', attrs: { text: 'x' } }, p('abc')), MergeConflict);
});

// The walk of the protocol's diff, as decisions: the banded table must
// give the full table's on every input (small alphabets: many ties).
test('the banded table walks as the full one', () => {
  let seed = 7;
  const rnd = (k) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % k;
  };
  const walk = (at, a, b) => {
    const steps = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (j < b.length && at(i, j + 1) === at(i, j)) { steps.push('i'); j++; }
      else if (i < a.length && j < b.length && a[i][0] === b[j][0] && a[i][1] === b[j][1]) { steps.push('k'); i++; j++; }
      else { steps.push('d'); i++; }
    }
    return steps.join('');
  };
  for (let iter = 0; iter < 1500; iter++) {
    const alpha = 2 + rnd(4);
    const a = Array.from({ length: 1 + rnd(300) }, () => [97 + rnd(alpha), rnd(2)]);
    const b = a.slice();
    for (let e = rnd(1 + rnd(60)); e >= 0 && b.length > 0; e--) {
      const at = rnd(b.length);
      if (rnd(3) === 0) b.splice(at, 1 + rnd(4));
      else b.splice(at, 0, ...Array.from({ length: 1 + rnd(6) }, () => [97 + rnd(alpha), 0]));
    }
    if (b.length === 0) continue;
    assert.equal(walk(lcsOf(a, b), a, b), walk(lcsFull(a, b), a, b), `iteration ${iter}`);
  }
});
