// Quote is FlowDocument's quote: a text block of rich text (Tiptap's
// blockquote holds blocks, a FlowDocument quote only text). "> " starts one.
import { Node, textblockTypeInputRule } from '@tiptap/core';

export const Quote = Node.create({
  name: 'quote',
  group: 'block',
  content: 'inline*',
  defining: true,
  parseHTML: () => [{ tag: 'blockquote' }],
  renderHTML: ({ HTMLAttributes }) => ['blockquote', HTMLAttributes, 0],
  addKeyboardShortcuts() {
    return { 'Mod-Shift-b': () => this.editor.commands.toggleNode('quote', 'paragraph') };
  },
  addInputRules() {
    return [textblockTypeInputRule({ find: /^\s*>\s$/, type: this.type })];
  },
});
