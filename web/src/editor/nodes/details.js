// Details: FlowDocument's disclosure block, edited in place. A detailsBlock
// holds a detailsSummary (its rich text, the block's own richText) and a
// detailsBody (its children: blocks of any type, each with its own id).
// The editor shows the body open (a reader's page folds it); Enter at the
// end of the summary goes into the body, making its first paragraph when
// it has none.
import { Node } from '@tiptap/core';
import { TextSelection } from '@tiptap/pm/state';

export const DetailsSummary = Node.create({
  name: 'detailsSummary',
  content: 'inline*',
  defining: true,
  isolating: true,
  parseHTML: () => [{ tag: 'div[data-details-summary]' }],
  renderHTML: () => ['div', { 'data-details-summary': '', class: 'details-summary' }, 0],
  addKeyboardShortcuts() {
    return {
      Enter: ({ editor }) => {
        const { $from, empty } = editor.state.selection;
        if (!empty || $from.parent.type.name !== 'detailsSummary') return false;
        const details = $from.node($from.depth - 1);
        const bodyPos = $from.after($from.depth); // the body starts here
        const body = details.child(1);
        const tr = editor.state.tr;
        if (body.childCount === 0) tr.insert(bodyPos + 1, editor.schema.nodes.paragraph.create());
        tr.setSelection(TextSelection.near(tr.doc.resolve(bodyPos + 2)));
        editor.view.dispatch(tr.scrollIntoView());
        return true;
      },
    };
  },
});

export const DetailsBody = Node.create({
  name: 'detailsBody',
  content: 'block*',
  isolating: true,
  parseHTML: () => [{ tag: 'div[data-details-body]' }],
  renderHTML: () => ['div', { 'data-details-body': '', class: 'details-body' }, 0],
});

export const Details = Node.create({
  name: 'detailsBlock',
  group: 'block',
  content: 'detailsSummary detailsBody',
  defining: true,
  draggable: true,
  addAttributes() {
    return { id: { default: null, parseHTML: () => null, renderHTML: (a) => (a.id ? { 'data-block-id': a.id } : {}) } };
  },
  parseHTML: () => [{ tag: 'div[data-details]' }],
  renderHTML: ({ HTMLAttributes }) => ['div', { ...HTMLAttributes, 'data-details': '', class: 'details', role: 'group', 'aria-label': 'Details' }, 0],
  addCommands() {
    return {
      insertDetails: () => ({ editor, tr, dispatch }) => {
        const { schema } = editor;
        const node = schema.nodes.detailsBlock.create(null, [schema.nodes.detailsSummary.create(), schema.nodes.detailsBody.create(null, schema.nodes.paragraph.create())]);
        return insertBlock(editor, tr, dispatch, node, 2);
      },
    };
  },
});

// insertBlock puts node after the block holding the caret (in the nearest
// container that takes blocks; an empty paragraph is replaced) and the
// caret at offset inside it.
export function insertBlock(editor, tr, dispatch, node, offset) {
  const { $from } = tr.selection;
  let from = $from.pos;
  let to = from;
  for (let d = $from.depth; d >= 1; d--) {
    const parent = $from.node(d - 1);
    const idx = $from.index(d - 1);
    if (parent.canReplaceWith(idx + 1, idx + 1, node.type)) {
      const block = $from.node(d);
      if (block.isTextblock && block.content.size === 0) { from = $from.before(d); to = $from.after(d); } else { from = to = $from.after(d); }
      break;
    }
  }
  if (!dispatch) return true;
  tr.replaceWith(from, to, node);
  tr.setSelection(TextSelection.near(tr.doc.resolve(from + offset)));
  tr.scrollIntoView();
  dispatch(tr);
  editor.view.focus();
  return true;
}
