// Round trips of every FlowDocument example of docs/flowdoc.md and every
// valid vector of testdata/flowdoc/blocks.json through the editor's schema:
// FlowDocument -> ProseMirror node -> FlowDocument gives the canonical block
// back exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getSchema } from '@tiptap/core';
import { Node } from '@tiptap/pm/model';
import { EditorState } from '@tiptap/pm/state';
import { extensions } from '../src/editor/extensions.js';
import { blockKey, fromEditor, normalizeBlock, toEditor, canon, nodeToBlock, blockToNode } from '../src/editor/codec.js';

const root = new URL('../../', import.meta.url);
const schema = getSchema(extensions());

function roundTrip(doc) {
  const pm = Node.fromJSON(schema, toEditor(doc));
  pm.check();
  return fromEditor(pm.toJSON());
}

function docExamples() {
  const md = readFileSync(new URL('docs/flowdoc.md', root), 'utf8');
  const out = [];
  const re = /<!-- check: (block|document) -->\n```json\n([\s\S]*?)```/g;
  let m;
  while ((m = re.exec(md))) {
    const v = JSON.parse(m[2]);
    out.push(m[1] === 'block' ? { schemaVersion: 1, blocks: [v] } : v);
  }
  return out;
}

test('docs/flowdoc.md examples round-trip', () => {
  const docs = docExamples();
  assert.ok(docs.length >= 15, `found ${docs.length} examples`);
  for (const doc of docs) {
    const back = roundTrip(doc);
    assert.deepEqual(back.blocks.map(blockKey), doc.blocks.map(blockKey), JSON.stringify(doc));
  }
});

test('testdata/flowdoc/blocks.json valid vectors round-trip', () => {
  const v = JSON.parse(readFileSync(new URL('testdata/flowdoc/blocks.json', root), 'utf8'));
  for (const { name, doc } of v.valid) {
    const blocks = doc.blocks || [];
    const back = roundTrip(doc);
    if (!blocks.length) continue;
    assert.deepEqual(back.blocks.map(blockKey), blocks.map(blockKey), name);
  }
});

test('canonical form: marks ordered, runs merged, empty values absent', () => {
  const b = normalizeBlock({ id: 'p', type: 'paragraph', attrs: {}, richText: [
    { text: 'a', marks: ['code', 'bold', 'bold'] }, { text: 'b', marks: ['bold', 'code'] }, { text: '' }] });
  assert.equal(canon(b), canon({ id: 'p', type: 'paragraph', richText: [{ text: 'ab', marks: ['bold', 'code'] }] }));
  assert.equal(blockKey({ id: 'l', type: 'list', items: [{ richText: null }] }), blockKey({ id: 'l', type: 'list', items: [{}] }));
});

test('divider and headings 5-6 map to horizontalRule and heading', () => {
  assert.equal(blockToNode({ id: 'x', type: 'divider' }).type, 'horizontalRule');
  assert.deepEqual(nodeToBlock({ type: 'horizontalRule', attrs: { id: 'x' } }), { id: 'x', type: 'divider' });
  const h6 = { id: 'h', type: 'heading', attrs: { level: 6 }, richText: [{ text: 'six' }] };
  assert.equal(blockKey(roundTrip({ blocks: [h6] }).blocks[0]), blockKey(h6));
});

test('line breaks and marks inside one run survive', () => {
  const p = { id: 'p', type: 'paragraph', richText: [{ text: 'one\ntwo', marks: ['bold'] }, { text: '\n' }, { equation: 'x' }] };
  assert.equal(blockKey(roundTrip({ blocks: [p] }).blocks[0]), blockKey(p));
});

test('an unknown block type is kept whole', () => {
  const b = { id: 'z', type: 'poll', attrs: { question: 'Why?' } };
  assert.equal(blockKey(roundTrip({ blocks: [b] }).blocks[0]), blockKey(b));
});

test('details: summary and children are editor nodes, and round-trip exactly', () => {
  const d = { id: 'd1', type: 'details', richText: [{ text: 'Method', marks: ['bold'] }, { text: ' and more' }], children: [
    { id: 'd1p', type: 'paragraph', richText: [{ text: 'We asked 120 readers.' }] },
    { id: 'd1l', type: 'list', items: [{ richText: [{ text: 'one' }] }] },
    { id: 'd1m', type: 'media', attrs: { kind: 'image', src: 'folio-asset:' + 'a'.repeat(64), alt: 'A chart' } },
  ] };
  const node = blockToNode(d);
  assert.equal(node.type, 'detailsBlock');
  assert.deepEqual(node.content.map((c) => c.type), ['detailsSummary', 'detailsBody']);
  assert.deepEqual(node.content[1].content.map((c) => [c.type, c.attrs.id]), [['paragraph', 'd1p'], ['bulletList', 'd1l'], ['mediaBlock', 'd1m']]);
  assert.equal(blockKey(roundTrip({ blocks: [d] }).blocks[0]), blockKey(d));
  // No summary, no children: still exactly itself.
  const empty = { id: 'd2', type: 'details' };
  assert.equal(canon(roundTrip({ blocks: [empty] }).blocks[0]), canon(empty));
});

test('columns: each column holds its blocks as editor nodes, empty columns stay empty', () => {
  const k = { id: 'k1', type: 'columns', columns: [
    { blocks: [{ id: 'k1a', type: 'paragraph', richText: [{ text: 'Left' }] }, { id: 'k1h', type: 'heading', attrs: { level: 2 }, richText: [{ text: 'Sub' }] }] },
    { blocks: null },
    { blocks: [{ id: 'k1d', type: 'details', richText: [{ text: 'Inner' }], children: [{ id: 'k1dp', type: 'paragraph', richText: [{ text: 'deep' }] }] }] },
  ] };
  const node = blockToNode(k);
  assert.equal(node.type, 'columnsBlock');
  assert.deepEqual(node.content.map((c) => [c.type, (c.content || []).length]), [['column', 2], ['column', 0], ['column', 1]]);
  const back = roundTrip({ blocks: [k] }).blocks[0];
  assert.equal(blockKey(back), blockKey(k));
  assert.deepEqual(back.columns[2].blocks[0].children.map((b) => b.id), ['k1dp']);
});

test('typing inside a details body changes that child and nothing else', () => {
  const d = { id: 'd1', type: 'details', richText: [{ text: 'S' }], children: [{ id: 'c1', type: 'paragraph', richText: [{ text: 'a' }] }, { id: 'c2', type: 'paragraph', richText: [{ text: 'b' }] }] };
  const state = EditorState.create({ schema, doc: Node.fromJSON(schema, toEditor({ blocks: [d] })) });
  let at = -1;
  state.doc.descendants((n, pos) => { if (n.attrs && n.attrs.id === 'c2') at = pos + n.nodeSize - 1; });
  const next = state.apply(state.tr.insertText('!', at));
  const after = fromEditor(next.doc.toJSON()).blocks[0];
  assert.equal(canon(after), canon({ ...d, children: [d.children[0], { id: 'c2', type: 'paragraph', richText: [{ text: 'b!' }] }] }));
});
