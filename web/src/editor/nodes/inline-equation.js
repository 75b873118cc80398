// InlineEquation is an inline equation run ({"equation": LaTeX}): an atom
// that counts as one character (U+FFFC in FlowDocument offsets). "$x$"
// followed by a space makes one.
import { InputRule, Node } from '@tiptap/core';

export const InlineEquation = Node.create({
  name: 'inlineEquation',
  group: 'inline',
  inline: true,
  atom: true,
  selectable: true,
  addAttributes() {
    return { latex: { default: '', parseHTML: (el) => el.getAttribute('data-latex') || el.textContent } };
  },
  parseHTML: () => [{ tag: 'span[data-latex]' }],
  renderHTML: ({ node }) => ['span', { 'data-latex': node.attrs.latex, class: 'inline-equation', title: 'Equation' }, node.attrs.latex],
  renderText: ({ node }) => node.attrs.latex,
  addInputRules() {
    return [new InputRule({
      find: /\$([^$\s][^$]*)\$\s$/,
      handler: ({ state, range, match }) => {
        state.tr.replaceWith(range.from, range.to, [this.type.create({ latex: match[1] }), state.schema.text(' ')]);
      },
    })];
  },
});
