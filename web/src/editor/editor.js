// Editor: the Tiptap editor of one document, and the view side of its
// DocSync (sync/document.js): read() maps the editor's top-level nodes to
// FlowDocument blocks (through editor/codec.js, cached per node: nodes are
// immutable, so an untouched block is not converted again), write()
// applies the server's blocks with the smallest replacement it can so that
// the caret stays where it is, and composing() tells whether an IME
// composition is going on.
import { Editor } from '@tiptap/core';
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { Decoration, DecorationSet } from '@tiptap/pm/view';
import { extensions } from './extensions.js';
import { blockToNode, nodeToBlock, plainText, toEditor } from './codec.js';
import { h } from '../dom.js';

const conflictKey = new PluginKey('conflicts');

export class DocEditor {
  constructor(mount, { onEdit, onResolve, onBlockMenu }) {
    this.cache = new WeakMap();
    this.onEdit = onEdit;
    this.onResolve = onResolve;
    this.onBlockMenu = onBlockMenu;
    this.isComposing = false;
    this.onCompositionEnd = () => {};
    const self = this;
    const conflictPlugin = new Plugin({
      key: conflictKey,
      state: {
        init: () => ({ conflicts: new Map(), deco: DecorationSet.empty }),
        apply(tr, value, _old, state) {
          const c = tr.getMeta(conflictKey);
          if (!c && !tr.docChanged) return value;
          const conflicts = c || value.conflicts;
          return { conflicts, deco: self.conflictDecorations(state.doc, conflicts) };
        },
      },
      props: { decorations: (state) => conflictKey.getState(state).deco },
    });
    this.editor = new Editor({
      element: mount,
      extensions: [...extensions()],
      injectCSS: false,
      // Tiptap's delete events walk every range a transaction changed;
      // nothing here listens for them, and a remote write (the whole
      // document on open) is not the user deleting anything.
      coreExtensionOptions: { delete: { filterTransaction: (tr) => !!tr.getMeta('remote') } },
      content: { type: 'doc', content: [{ type: 'paragraph' }] },
      editorProps: {
        attributes: { class: 'prose', 'aria-label': 'Document body', 'aria-multiline': 'true', role: 'textbox', spellcheck: 'true' },
      },
      onUpdate: ({ transaction }) => {
        if (transaction.getMeta('remote')) return;
        this.onEdit();
      },
    });
    this.editor.registerPlugin(conflictPlugin);
    const dom = this.editor.view.dom;
    dom.addEventListener('compositionstart', () => { this.isComposing = true; });
    dom.addEventListener('compositionend', () => {
      // ProseMirror reads the composed text on this same event; let it
      // finish before the sync module rebases or saves.
      setTimeout(() => {
        this.isComposing = false;
        this.onCompositionEnd();
      }, 0);
    });
  }

  destroy() {
    this.editor.destroy();
  }

  composing() {
    return this.isComposing || this.editor.view.composing;
  }

  blockOf(node) {
    let b = this.cache.get(node);
    if (!b) {
      b = nodeToBlock(node.toJSON());
      this.cache.set(node, b);
    }
    return b;
  }

  // read returns the blocks the user sees, in order.
  read() {
    const out = [];
    this.editor.state.doc.forEach((node) => {
      const b = this.blockOf(node);
      if (b.id) out.push(b);
    });
    return out;
  }

  // write makes the editor show the server's blocks: set (id -> block, or
  // null to delete) and order (the full order, or null). With set null,
  // state is a whole server copy to show.
  write(set, order, state) {
    const { schema } = this.editor.state;
    if (!set) {
      // The benchmark of time to editable reads this mark (and
      // folio:editable, after the blocks are written).
      if (globalThis.performance && performance.mark) performance.mark('folio:snapshot');
      const body = { blocks: state.order.map((id) => state.blocks.get(id).b) };
      const tr = this.editor.state.tr;
      const doc = schema.nodeFromJSON(toEditor(body));
      tr.replaceWith(0, tr.doc.content.size, doc.content);
      tr.setMeta('remote', true).setMeta('addToHistory', false).setMeta('preventAutolink', true);
      this.editor.view.dispatch(tr);
      return;
    }
    const tr = this.editor.state.tr;
    const positions = () => {
      const m = new Map();
      tr.doc.forEach((n, off) => m.set(n.attrs.id, { n, off }));
      return m;
    };
    let pos = positions();
    for (const [id, b] of set) {
      const at = pos.get(id);
      if (!at) continue;
      if (b === null) {
        tr.delete(at.off, at.off + at.n.nodeSize);
      } else {
        const next = schema.nodeFromJSON(blockToNode(b));
        replaceNode(tr, at.off, at.n, next);
      }
      pos = positions();
    }
    const target = order || tr.doc.content.content.map((n) => n.attrs.id);
    for (const [id, b] of set) if (b && !pos.has(id) && !target.includes(id)) target.push(id);
    // Arrange: walk the target order, inserting new blocks and moving
    // misplaced ones.
    let offset = 0;
    target.forEach((id, i) => {
      const children = tr.doc.content.content;
      const here = children[i];
      if (here && here.attrs.id === id) { offset += here.nodeSize; return; }
      pos = positions();
      const at = pos.get(id);
      let node;
      if (at) {
        node = at.n;
        tr.delete(at.off, at.off + at.n.nodeSize);
      } else {
        const b = set.get(id);
        if (!b) return;
        node = schema.nodeFromJSON(blockToNode(b));
      }
      let insertAt = 0;
      for (let k = 0; k < i && k < tr.doc.childCount; k++) insertAt += tr.doc.child(k).nodeSize;
      tr.insert(insertAt, node);
      offset = insertAt + node.nodeSize;
    });
    // Blocks left beyond the target order (deleted on the server) go.
    while (tr.doc.childCount > target.length && tr.doc.childCount > 1) {
      const last = tr.doc.lastChild;
      if (target.includes(last.attrs.id)) break;
      tr.delete(tr.doc.content.size - last.nodeSize, tr.doc.content.size);
    }
    if (!tr.docChanged) return;
    // Remote text is shown as it was saved: autolinking it here would make
    // a local edit of another writer's block.
    tr.setMeta('remote', true).setMeta('addToHistory', false).setMeta('preventAutolink', true);
    this.editor.view.dispatch(tr);
  }

  showConflicts(conflicts) {
    const tr = this.editor.state.tr.setMeta(conflictKey, new Map(conflicts)).setMeta('remote', true).setMeta('addToHistory', false);
    this.editor.view.dispatch(tr);
  }

  conflictDecorations(doc, conflicts) {
    if (!conflicts.size) return DecorationSet.empty;
    const decos = [];
    doc.forEach((node, off) => {
      const k = conflicts.get(node.attrs.id);
      if (!k) return;
      decos.push(Decoration.node(off, off + node.nodeSize, { class: 'has-conflict' }));
      const id = node.attrs.id;
      decos.push(Decoration.widget(off, () => this.conflictCard(id, k), { side: -1, key: `conflict-${id}-${Math.random()}`, ignoreSelection: true, stopEvent: () => true }));
    });
    return DecorationSet.create(doc, decos);
  }

  conflictCard(id, k) {
    return h('div', { class: 'conflict', role: 'group', 'aria-label': 'Conflicting versions of this block', contenteditable: 'false', 'data-conflict': id },
      h('p', { class: 'conflict-title' }, 'This block was changed elsewhere while you edited it. Choose the version to keep.'),
      h('div', { class: 'conflict-versions' },
        h('div', { class: 'conflict-version' }, h('strong', {}, 'Yours'), h('pre', {}, k.mine ? plainText(k.mine) : '(deleted)')),
        h('div', { class: 'conflict-version' }, h('strong', {}, 'Theirs'), h('pre', {}, k.theirs ? plainText(k.theirs) : '(deleted)'))),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'primary', 'data-choice': 'mine', onclick: () => this.onResolve(id, 'mine') }, 'Keep mine'),
        h('button', { type: 'button', 'data-choice': 'theirs', onclick: () => this.onResolve(id, 'theirs') }, 'Use theirs')));
  }
}

// replaceNode replaces node (at off) with next, touching as little as it
// can: for the same textblock type only the range of content that differs,
// so that a caret outside it stays put.
function replaceNode(tr, off, node, next) {
  if (node.type === next.type && node.isTextblock && node.sameMarkup(next)) {
    const start = node.content.findDiffStart(next.content);
    if (start === null) return;
    const end = node.content.findDiffEnd(next.content);
    let { a: endA, b: endB } = end;
    const overlap = start - Math.min(endA, endB);
    if (overlap > 0) { endA += overlap; endB += overlap; }
    tr.replace(off + 1 + start, off + 1 + endA, next.slice(start, endB));
    return;
  }
  tr.replaceWith(off, off + node.nodeSize, next);
}
