// AtomTyping: text typed while a card (an atom block: an image just
// inserted from the picker, a file, an equation...) is selected goes into a
// new paragraph after the card, and the card stays. Left alone, a key press
// replaced the selected card with the text (ProseMirror's default for a
// node selection), and text inserted without a key press (an input
// method, dictation) went wherever the browser found the next editable
// place: the start of the following block.
import { Extension } from '@tiptap/core';
import { NodeSelection, Plugin, PluginKey, TextSelection } from '@tiptap/pm/state';

// selectedCard is the node selection of a block atom, or null.
function selectedCard(state) {
  const sel = state.selection;
  return sel instanceof NodeSelection && sel.node.isBlock && sel.node.isAtom ? sel : null;
}

// typeAfter puts text in a new paragraph after the selected card.
function typeAfter(view, sel, text) {
  const { schema } = view.state;
  const para = schema.nodes.paragraph.create(null, schema.text(text));
  const tr = view.state.tr.insert(sel.to, para);
  tr.setSelection(TextSelection.create(tr.doc, sel.to + 1 + text.length)).scrollIntoView();
  view.dispatch(tr);
}

export const AtomTyping = Extension.create({
  name: 'atomTyping',
  addProseMirrorPlugins() {
    return [new Plugin({
      key: new PluginKey('atomTyping'),
      props: {
        // A key press (ProseMirror reads it as text input over the card).
        handleTextInput(view, from, to, text) {
          const sel = selectedCard(view.state);
          if (!sel || from !== sel.from || to !== sel.to || !text) return false;
          typeAfter(view, sel, text);
          return true;
        },
        handleDOMEvents: {
          // Text that comes without a key press, into the text itself
          // (not a field of the card's form).
          beforeinput(view, event) {
            if (event.target !== view.dom) return false;
            const sel = selectedCard(view.state);
            if (!sel || event.inputType !== 'insertText' || !event.data || view.composing) return false;
            event.preventDefault();
            typeAfter(view, sel, event.data);
            return true;
          },
        },
      },
    })];
  },
});
