// Callout is FlowDocument's callout: rich text with an icon (an emoji).
// "!> " starts one.
import { Node, textblockTypeInputRule } from '@tiptap/core';

export const Callout = Node.create({
  name: 'callout',
  group: 'block',
  content: 'inline*',
  defining: true,
  addAttributes() {
    return {
      icon: {
        default: '💡',
        parseHTML: (el) => el.getAttribute('data-icon') || '',
        renderHTML: (a) => ({ 'data-icon': a.icon || '' }),
      },
    };
  },
  parseHTML: () => [{ tag: 'div[data-callout]' }],
  renderHTML: ({ HTMLAttributes }) => ['div', { ...HTMLAttributes, 'data-callout': '', class: 'callout' }, 0],
  addInputRules() {
    return [textblockTypeInputRule({ find: /^!>\s$/, type: this.type })];
  },
});
