// CaretBlock marks the top-level block(s) holding the selection's ends
// with the class "has-caret", which the stylesheet exempts from
// `content-visibility: auto` (styles/app.css).
//
// Why: a long document lays out only the blocks near the viewport, and
// Chromium decides which ones are near only at its next rendering step. A
// block inserted a moment ago (a details or columns from the insert bar)
// is not laid out until then, and Chromium's editing does not place input
// inside content it has not laid out: typed text went to the next laid-out
// position instead, the start of the following block (a details inserted
// earlier got it in its summary), and ProseMirror read that back as an
// edit there. The class is applied in the same transaction that moves the
// selection, so the block the caret is in is always laid out when the next
// key arrives.
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { Decoration, DecorationSet } from '@tiptap/pm/view';

const key = new PluginKey('caretBlock');

// topBlocks is the offsets of the top-level nodes holding the selection's
// start and end (one when they share a block).
function topBlocks(state) {
  const { doc, selection } = state;
  const out = [];
  for (const pos of [selection.from, selection.to]) {
    const $p = doc.resolve(pos);
    let off;
    if ($p.depth > 0) off = $p.before(1);
    else if ($p.nodeAfter) off = pos; // a node selection of a top-level block
    else if ($p.nodeBefore) off = pos - $p.nodeBefore.nodeSize;
    else continue;
    if (!out.includes(off)) out.push(off);
  }
  return out;
}

function decorations(state) {
  const decos = topBlocks(state).map((off) => Decoration.node(off, off + state.doc.nodeAt(off).nodeSize, { class: 'has-caret' }));
  return { offs: topBlocks(state).join(','), set: DecorationSet.create(state.doc, decos) };
}

export const CaretBlock = Extension.create({
  name: 'caretBlock',
  addProseMirrorPlugins() {
    return [new Plugin({
      key,
      state: {
        init: (_config, state) => decorations(state),
        apply(tr, value, _old, state) {
          if (!tr.docChanged && !tr.selectionSet) return value;
          const offs = topBlocks(state).join(',');
          if (!tr.docChanged && offs === value.offs) return value;
          return decorations(state);
        },
      },
      props: { decorations: (state) => key.getState(state).set },
    })];
  },
});
