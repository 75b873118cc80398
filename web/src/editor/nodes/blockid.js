// BlockID gives every block node a FlowDocument block id in its `id`
// attribute and keeps ids unique in the whole document: a node without
// one, or the second of two nodes with the same id (the second half of a
// split, a duplicate), gets a fresh id. Block nodes are the top-level ones
// and those inside a details body or a column (nested blocks); the
// paragraphs of list items and table cells are not blocks. Ids are never
// read from pasted HTML, so a paste gets fresh ones too.
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { newBlockID } from '../codec.js';

export const BLOCK_TYPES = ['paragraph', 'heading', 'quote', 'callout', 'bulletList', 'orderedList', 'codeBlock', 'horizontalRule', 'table'];

const CONTAINERS = new Set(['detailsBlock', 'columnsBlock']);
const BODIES = new Set(['detailsBody', 'column']);

export const BlockID = Extension.create({
  name: 'blockId',
  addGlobalAttributes() {
    return [{
      types: BLOCK_TYPES,
      attributes: {
        id: {
          default: null,
          parseHTML: () => null,
          renderHTML: (attrs) => (attrs.id ? { 'data-block-id': attrs.id } : {}),
        },
      },
    }];
  },
  addProseMirrorPlugins() {
    return [new Plugin({
      key: new PluginKey('blockId'),
      appendTransaction(trs, _old, state) {
        if (!trs.some((t) => t.docChanged)) return null;
        const seen = new Set();
        let tr = null;
        const visit = (node, pos) => {
          let id = node.attrs.id;
          if (!id || seen.has(id)) {
            id = newBlockID();
            tr = tr || state.tr;
            tr.setNodeAttribute(pos, 'id', id);
          }
          seen.add(id);
          if (!CONTAINERS.has(node.type.name)) return;
          // detailsBlock > detailsSummary, detailsBody > blocks;
          // columnsBlock > column > blocks.
          node.forEach((part, off) => {
            if (!BODIES.has(part.type.name)) return;
            part.forEach((child, o) => visit(child, pos + 1 + off + 1 + o));
          });
        };
        state.doc.forEach((node, offset) => visit(node, offset));
        if (tr) tr.setMeta('blockIds', true);
        return tr;
      },
    })];
  },
});
