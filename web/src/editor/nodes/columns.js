// Columns: FlowDocument's side-by-side columns, edited in place. A
// columnsBlock holds 1–6 column nodes, each a list of blocks of any type
// with their own ids (an empty column is kept empty: {"blocks": null}).
import { Node } from '@tiptap/core';
import { insertBlock } from './details.js';

export const Column = Node.create({
  name: 'column',
  content: 'block*',
  isolating: true,
  parseHTML: () => [{ tag: 'div[data-column]' }],
  renderHTML: () => ['div', { 'data-column': '', class: 'column' }, 0],
});

export const Columns = Node.create({
  name: 'columnsBlock',
  group: 'block',
  content: 'column{1,6}',
  defining: true,
  draggable: true,
  addAttributes() {
    return { id: { default: null, parseHTML: () => null, renderHTML: (a) => (a.id ? { 'data-block-id': a.id } : {}) } };
  },
  parseHTML: () => [{ tag: 'div[data-columns]' }],
  renderHTML: ({ node, HTMLAttributes }) => ['div', { ...HTMLAttributes, 'data-columns': String(node.childCount), class: 'columns', role: 'group', 'aria-label': `${node.childCount} columns` }, 0],
  addCommands() {
    return {
      insertColumns: (n = 2) => ({ editor, tr, dispatch }) => {
        const { schema } = editor;
        const cols = Array.from({ length: Math.max(1, Math.min(6, n)) }, () => schema.nodes.column.create(null, schema.nodes.paragraph.create()));
        return insertBlock(editor, tr, dispatch, schema.nodes.columnsBlock.create(null, cols), 3);
      },
    };
  },
});
