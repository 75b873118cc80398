// The shared merge vectors (testdata/protocol/merge.json, the same file the
// Go package flowdoc/merge reads) through web/src/sync/merge.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mergeRuns, mergeBlock, MergeConflict } from '../src/sync/merge.js';

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
