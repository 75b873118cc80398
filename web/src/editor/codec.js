// The FlowDocument <-> editor mapping: one codec, both directions.
//
// A FlowDocument (docs/flowdoc.md) is a list of typed blocks; the editor's
// ProseMirror document holds one top-level node per block, whose `id`
// attribute is the block id. toEditor turns blocks into ProseMirror JSON
// (what Node.fromJSON reads), fromEditor turns a top-level node's JSON back
// into a block in the canonical form the server stores (docs/flowdoc.md
// "Sanitizing"), so that a block the user did not touch compares equal,
// byte for byte, to the server's copy (canon).
//
// Blocks the editor cannot edit richly (equation, media, bookmark, file,
// embed, and any type this build does not know) become atom nodes holding
// the whole block (less its id) in the `block` attribute: they round-trip
// exactly and are never dropped. Details and columns hold their nested
// blocks as editor nodes (detailsBlock: a detailsSummary and a
// detailsBody; columnsBlock: one column node per column), each nested
// block with its own id.

export const MARKS = ['bold', 'italic', 'underline', 'strike', 'code'];

// ATOM_TYPES are the FlowDocument types kept whole in an atom node, with
// the editor node's name.
export const ATOM_TYPES = {
  equation: 'equationBlock',
  media: 'mediaBlock',
  bookmark: 'bookmarkBlock',
  file: 'fileBlock',
  embed: 'embedBlock',
};
const ATOM_NODES = Object.fromEntries(Object.entries(ATOM_TYPES).map(([k, v]) => [v, k]));
export const UNKNOWN_NODE = 'unknownBlock';
// LIST_ATOM holds a list whose items hold blocks (further paragraphs,
// code, quotes …) or a task checkbox, which the editor's list items
// cannot edit yet: kept whole, like the atoms above.
export const LIST_ATOM = 'listBlock';
// QUOTE_ATOM holds a quote that holds blocks (children) beyond its text,
// which the editor's quote (text only) cannot edit yet.
export const QUOTE_ATOM = 'quoteBlock';

function itemsHoldBlocks(items) {
  return (items || []).some((it) => (it.blocks && it.blocks.length) || it.task || itemsHoldBlocks(it.items));
}

// ---- FlowDocument -> editor -------------------------------------------

// toEditor turns a FlowDocument into ProseMirror document JSON.
export function toEditor(doc) {
  const blocks = (doc && doc.blocks) || [];
  const content = blocks.map(blockToNode);
  if (content.length === 0) content.push({ type: 'paragraph', attrs: { id: null } });
  return { type: 'doc', content };
}

// blockToNode turns one block into a top-level node's JSON.
export function blockToNode(b) {
  const a = b.attrs || {};
  const id = b.id;
  switch (b.type) {
    case 'paragraph':
      return withContent({ type: 'paragraph', attrs: { id } }, runsToInline(b.richText));
    case 'heading':
      return withContent({ type: 'heading', attrs: { id, level: a.level || 1 } }, runsToInline(b.richText));
    case 'quote':
      if (b.children && b.children.length) {
        const rest = { ...b };
        delete rest.id;
        return { type: QUOTE_ATOM, attrs: { id, block: normalizeBlock(rest) } };
      }
      return withContent({ type: 'quote', attrs: { id } }, runsToInline(b.richText));
    case 'callout':
      return withContent({ type: 'callout', attrs: { id, icon: a.icon || '' } }, runsToInline(b.richText));
    case 'list':
      if (itemsHoldBlocks(b.items)) {
        const rest = { ...b };
        delete rest.id;
        return { type: LIST_ATOM, attrs: { id, block: normalizeBlock(rest) } };
      }
      return listToNode(b.items || [], !!a.ordered, id, a.start, !!a.loose);
    case 'code':
      return withContent({ type: 'codeBlock', attrs: { id, language: a.language || null } },
        a.text ? [{ type: 'text', text: a.text }] : []);
    case 'divider':
      return { type: 'horizontalRule', attrs: { id } };
    case 'table':
      return tableToNode(b, id);
    case 'details':
      return {
        type: 'detailsBlock',
        attrs: { id },
        content: [
          withContent({ type: 'detailsSummary' }, runsToInline(b.richText)),
          withContent({ type: 'detailsBody' }, (b.children || []).map(blockToNode)),
        ],
      };
    case 'columns':
      return {
        type: 'columnsBlock',
        attrs: { id },
        content: (b.columns && b.columns.length ? b.columns : [{ blocks: [] }]).map((c) => withContent({ type: 'column' }, ((c && c.blocks) || []).map(blockToNode))),
      };
    default: {
      const rest = { ...b };
      delete rest.id;
      const name = ATOM_TYPES[b.type] || UNKNOWN_NODE;
      return { type: name, attrs: { id, block: normalizeBlock(rest) } };
    }
  }
}

function withContent(node, content) {
  if (content.length) node.content = content;
  return node;
}

// start is an ordered list's first number (FlowDocument leaves it out
// when it is 1; Tiptap's orderedList says 1).
function listToNode(items, ordered, id, start, loose) {
  const node = { type: ordered ? 'orderedList' : 'bulletList', attrs: { id } };
  if (ordered && start) node.attrs.start = start;
  if (loose) node.attrs.loose = true;
  node.content = items.map((it) => {
    const li = { type: 'listItem', content: [withContent({ type: 'paragraph', attrs: { id: null } }, runsToInline(it.richText))] };
    if (it.items && it.items.length) li.content.push(listToNode(it.items, ordered, null));
    return li;
  });
  return node;
}

function tableToNode(b, id) {
  const header = !!(b.attrs && b.attrs.header);
  return {
    type: 'table',
    attrs: { id },
    content: (b.rows || []).map((row, r) => ({
      type: 'tableRow',
      content: (row.cells || []).map((cell) => ({
        type: header && r === 0 ? 'tableHeader' : 'tableCell',
        content: [withContent({ type: 'paragraph', attrs: { id: null } }, runsToInline(cell))],
      })),
    })),
  };
}

// runsToInline turns rich text runs into inline nodes: a newline becomes a
// hard break (carrying the run's marks, so that it merges back), an inline
// equation an inlineEquation atom.
export function runsToInline(runs) {
  const out = [];
  for (const run of runs || []) {
    if (run.equation !== undefined && run.equation !== null && run.equation !== '') {
      out.push({ type: 'inlineEquation', attrs: { latex: run.equation } });
      continue;
    }
    const marks = [];
    for (const m of MARKS) if ((run.marks || []).includes(m)) marks.push({ type: m });
    if (run.link) marks.push({ type: 'link', attrs: run.title ? { href: run.link, title: run.title } : { href: run.link } });
    const parts = (run.text || '').split('\n');
    parts.forEach((part, i) => {
      if (i > 0) out.push(withMarks({ type: 'hardBreak' }, marks));
      if (part) out.push(withMarks({ type: 'text', text: part }, marks));
    });
  }
  return out;
}

function withMarks(node, marks) {
  if (marks.length) node.marks = marks.map((m) => ({ ...m }));
  return node;
}

// ---- editor -> FlowDocument -------------------------------------------

// fromEditor turns ProseMirror document JSON into a canonical FlowDocument.
export function fromEditor(docJSON) {
  const blocks = (docJSON.content || []).map(nodeToBlock);
  return { schemaVersion: 1, blocks };
}

// nodeToBlock turns a top-level node's JSON into a canonical block.
export function nodeToBlock(n) {
  const a = n.attrs || {};
  const id = a.id || '';
  let b;
  switch (n.type) {
    case 'paragraph':
      b = { id, type: 'paragraph', richText: inlineToRuns(n.content) };
      break;
    case 'heading':
      b = { id, type: 'heading', attrs: { level: a.level }, richText: inlineToRuns(n.content) };
      break;
    case 'quote':
      b = { id, type: 'quote', richText: inlineToRuns(n.content) };
      break;
    case 'callout':
      b = { id, type: 'callout', attrs: { icon: a.icon }, richText: inlineToRuns(n.content) };
      break;
    case 'bulletList':
    case 'orderedList':
      b = { id, type: 'list', attrs: { ordered: n.type === 'orderedList' }, items: listItems(n) };
      if (n.type === 'orderedList' && a.start && a.start !== 1) b.attrs.start = a.start;
      if (a.loose) b.attrs.loose = true;
      break;
    case 'codeBlock':
      b = { id, type: 'code', attrs: { language: a.language || '', text: textOf(n) } };
      break;
    case 'horizontalRule':
      b = { id, type: 'divider' };
      break;
    case 'table':
      b = tableToBlock(n, id);
      break;
    case 'detailsBlock': {
      const parts = n.content || [];
      const summary = parts.find((c) => c.type === 'detailsSummary');
      const body = parts.find((c) => c.type === 'detailsBody');
      b = { id, type: 'details', richText: inlineToRuns(summary && summary.content), children: ((body && body.content) || []).map(nodeToBlock) };
      break;
    }
    case 'columnsBlock':
      b = { id, type: 'columns', columns: (n.content || []).map((c) => ({ blocks: (c.content || []).map(nodeToBlock) })) };
      break;
    default:
      if (ATOM_NODES[n.type] || n.type === UNKNOWN_NODE || n.type === LIST_ATOM || n.type === QUOTE_ATOM) {
        b = { ...(a.block || { type: ATOM_NODES[n.type] }), id };
        break;
      }
      // A node this codec does not know (pasted from elsewhere): keep its
      // text as a paragraph rather than lose it.
      b = { id, type: 'paragraph', richText: [{ text: textOf(n) }] };
  }
  return normalizeBlock(b);
}

function listItems(list) {
  return (list.content || []).map((li) => {
    const texts = [];
    const items = [];
    for (const c of li.content || []) {
      if (c.type === 'bulletList' || c.type === 'orderedList') items.push(...listItems(c));
      else texts.push(inlineToRuns(c.content || []));
    }
    return { richText: joinLines(texts), items };
  });
}

function tableToBlock(n, id) {
  const rows = (n.content || []).map((row) => ({
    cells: (row.content || []).map((cell) => joinLines((cell.content || []).map((p) => inlineToRuns(p.content || [])))),
  }));
  const first = (n.content || [])[0];
  const header = !!first && (first.content || []).length > 0 && first.content.every((c) => c.type === 'tableHeader');
  return { id, type: 'table', attrs: { header }, rows };
}

// joinLines joins several paragraphs' runs into one rich text with
// newlines, as a FlowDocument list item or table cell holds one text.
function joinLines(texts) {
  const out = [];
  texts.forEach((runs, i) => {
    if (i > 0) out.push({ text: '\n' });
    out.push(...runs);
  });
  return out;
}

function textOf(n) {
  if (n.type === 'text') return n.text || '';
  if (n.type === 'hardBreak') return '\n';
  return (n.content || []).map(textOf).join('');
}

// inlineToRuns turns inline nodes into canonical runs.
export function inlineToRuns(content) {
  const runs = [];
  for (const c of content || []) {
    if (c.type === 'inlineEquation') {
      runs.push({ equation: (c.attrs && c.attrs.latex) || '' });
      continue;
    }
    const text = c.type === 'text' ? c.text : c.type === 'hardBreak' ? '\n' : textOf(c);
    const run = { text };
    const marks = [];
    for (const m of c.marks || []) {
      if (m.type === 'link') {
        run.link = m.attrs && m.attrs.href;
        if (m.attrs && m.attrs.title) run.title = m.attrs.title;
      }
      else if (MARKS.includes(m.type)) marks.push(m.type);
    }
    if (marks.length) run.marks = marks;
    runs.push(run);
  }
  return normalizeRuns(runs);
}

// ---- canonical form -----------------------------------------------------

// normalizeRuns applies the server's sanitizing of rich text: known marks
// once each in canonical order, empty text runs removed, adjacent runs with
// equal marks, link and link title merged.
export function normalizeRuns(runs) {
  const out = [];
  for (const r of runs || []) {
    if (r.equation !== undefined && r.equation !== null && r.equation !== '') {
      out.push({ equation: r.equation });
      continue;
    }
    if (!r.text) continue;
    const marks = MARKS.filter((m) => (r.marks || []).includes(m));
    const run = { text: r.text };
    if (marks.length) run.marks = marks;
    if (r.link) run.link = r.link;
    if (r.link && r.title) run.title = r.title;
    const prev = out[out.length - 1];
    if (prev && prev.text !== undefined && sameStyle(prev, run)) prev.text += run.text;
    else out.push(run);
  }
  return out;
}

function sameStyle(a, b) {
  return (a.link || '') === (b.link || '') && (a.title || '') === (b.title || '') && (a.marks || []).join() === (b.marks || []).join();
}

function isZero(v) {
  return v === undefined || v === null || v === '' || v === 0 || v === false ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
}

// normalizeBlock gives a block its canonical form (unset is absent).
export function normalizeBlock(b) {
  const out = {};
  if (b.id !== undefined) out.id = b.id;
  if (b.type !== undefined) out.type = b.type;
  if (b.attrs) {
    const attrs = {};
    for (const k of Object.keys(b.attrs).sort()) if (!isZero(b.attrs[k])) attrs[k] = b.attrs[k];
    if (Object.keys(attrs).length) out.attrs = attrs;
  }
  const rt = normalizeRuns(b.richText);
  if (rt.length) out.richText = rt;
  if (b.items && b.items.length) out.items = b.items.map(normalizeItem);
  if (b.rows && b.rows.length) out.rows = b.rows.map((r) => ({ cells: (r.cells || []).map((c) => normalizeRuns(c)) }));
  if (b.children && b.children.length) out.children = b.children.map(normalizeBlock);
  if (b.columns && b.columns.length) out.columns = b.columns.map((c) => ({ blocks: (c.blocks || []).map(normalizeBlock) }));
  for (const k of Object.keys(b)) {
    // Fields a newer server may add are kept as they came.
    if (!(k in out) && !['id', 'type', 'attrs', 'richText', 'items', 'rows', 'children', 'columns'].includes(k) && !isZero(b[k])) out[k] = b[k];
  }
  return out;
}

function normalizeItem(it) {
  const out = {};
  if (it.task) out.task = it.task;
  const rt = normalizeRuns(it.richText);
  if (rt.length) out.richText = rt;
  if (it.blocks && it.blocks.length) out.blocks = it.blocks.map(normalizeBlock);
  if (it.items && it.items.length) out.items = it.items.map(normalizeItem);
  return out;
}

// canon is a block's canonical JSON with sorted keys: two blocks are the
// same content exactly when their canon strings are equal.
export function canon(v) {
  return JSON.stringify(sortKeys(v));
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys(v[k]);
    return o;
  }
  return v;
}

// plainText is a block's text for people (conflict cards, diffs).
export function plainText(b) {
  if (!b) return '';
  const runs = (rt) => (rt || []).map((r) => (r.equation ? r.equation : r.text)).join('');
  const items = (its, depth) => (its || []).map((it) => '  '.repeat(depth) + '• ' + runs(it.richText) + '\n' +
    (it.blocks || []).map((c) => '  '.repeat(depth + 1) + plainText(c) + '\n').join('') + items(it.items, depth + 1)).join('');
  switch (b.type) {
    case 'list': return items(b.items, 0).trimEnd();
    case 'code': return (b.attrs && b.attrs.text) || '';
    case 'table': return (b.rows || []).map((r) => r.cells.map(runs).join('\t')).join('\n');
    case 'equation': return (b.attrs && b.attrs.latex) || '';
    case 'media': case 'file': case 'bookmark': case 'embed':
      return `[${b.type}: ${(b.attrs && (b.attrs.alt || b.attrs.name || b.attrs.title || b.attrs.url || b.attrs.src)) || ''}]`;
    case 'details': return runs(b.richText) + '\n' + (b.children || []).map(plainText).join('\n');
    case 'quote': return [runs(b.richText), ...(b.children || []).map(plainText)].join('\n');
    case 'columns': return (b.columns || []).map((c) => (c.blocks || []).map(plainText).join('\n')).join('\n');
    default: return runs(b.richText);
  }
}

// newBlockID makes a fresh block id: 12 characters from the 64 allowed
// (docs/flowdoc.md "Ids": random enough never to collide).
const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export function newBlockID() {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += ID_CHARS[b & 63];
  return s;
}

// blockKey is canon of the block's canonical form: the server's copy (which
// writes an empty list item as {"richText":null}) and the editor's compare
// equal exactly when they hold the same content.
// Blocks are immutable values, so the key is kept per block object: the
// sync module keys every block of the document on every save and every
// remote update, and only the changed ones are new objects.
const keys = new WeakMap();
export function blockKey(b) {
  if (!b || typeof b !== 'object') return canon(normalizeBlock(b || {}));
  let k = keys.get(b);
  if (k === undefined) {
    k = canon(normalizeBlock(b));
    keys.set(b, k);
  }
  return k;
}
