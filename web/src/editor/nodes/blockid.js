// BlockID gives every top-level node a FlowDocument block id in its `id`
// attribute and keeps ids unique: a node without one, or the second of two
// nodes with the same id (the second half of a split, a duplicate), gets a
// fresh id. Ids are never read from pasted HTML, so a paste gets fresh
// ones too.
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { newBlockID } from '../codec.js';

export const BLOCK_TYPES = ['paragraph', 'heading', 'quote', 'callout', 'bulletList', 'orderedList', 'codeBlock', 'horizontalRule', 'table'];

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
        state.doc.forEach((node, offset) => {
          let id = node.attrs.id;
          if (!id || seen.has(id)) {
            id = newBlockID();
            tr = tr || state.tr;
            tr.setNodeAttribute(offset, 'id', id);
          }
          seen.add(id);
        });
        if (tr) tr.setMeta('blockIds', true);
        return tr;
      },
    })];
  },
});
