// Suggestions previewed in the document: a ProseMirror plugin that shows
// one pending suggestion as decorations on its target blocks (the words it
// deletes struck through, the words it inserts marked, a removed block
// struck whole, an added block shown after its neighbour) and never
// touches the editor's content: the document stays what the server has
// until the suggestion is accepted there. The decorated block carries
// data-suggestion="<id>". A whole-document suggestion only outlines the
// blocks it changes; its words are shown side by side above the document
// (compare.js). setPreview(view, preview) shows a preview (the server's
// suggestion preview: suggestion, changes) or clears it (null).
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { Decoration, DecorationSet } from '@tiptap/pm/view';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { isWholeDocument, showCompare } from './compare.js';

export const suggestionKey = new PluginKey('suggestion-preview');

export function suggestionPlugin() {
  return new Plugin({
    key: suggestionKey,
    state: {
      init: () => ({ preview: null, deco: DecorationSet.empty }),
      apply(tr, value, _old, state) {
        const meta = tr.getMeta(suggestionKey);
        if (meta === undefined && !tr.docChanged) return value;
        const preview = meta === undefined ? value.preview : meta;
        return { preview, deco: decorations(state.doc, preview) };
      },
    },
    props: { decorations: (state) => suggestionKey.getState(state).deco },
  });
}

export function setPreview(editor, preview) {
  const tr = editor.state.tr.setMeta(suggestionKey, preview).setMeta('remote', true).setMeta('addToHistory', false);
  editor.view.dispatch(tr);
  showCompare(editor, preview);
}

// decorations builds the preview's decorations on doc. A block whose
// text is no longer the suggestion's baseline text is only outlined.
function decorations(doc, preview) {
  if (!preview) return DecorationSet.empty;
  const id = preview.suggestion.id;
  const conflicted = preview.suggestion.status === 'conflicted';
  const whole = isWholeDocument(preview);
  const at = new Map();
  doc.forEach((node, off) => at.set(node.attrs.id, { node, off }));
  const decos = [];
  let last = null;
  for (const ch of preview.changes || []) {
    const here = at.get(ch.blockId);
    if (ch.kind === 'added' && whole) continue; // in the side-by-side view only
    if (ch.kind === 'added') {
      const anchor = last ? last.off + last.node.nodeSize : 0;
      const text = (ch.words || []).filter((w) => w.op !== 'delete').map((w) => w.text).join('') || addedText(preview, ch.blockId);
      decos.push(Decoration.widget(anchor, () => h('p', { class: 'sugg-added', 'data-suggestion': id, contenteditable: 'false' },
        h('span', { class: 'visually-hidden' }, t('previewLabel') + ': '), h('ins', {}, text)), { side: 1, key: `sugg-add-${id}-${ch.blockId}` }));
      continue;
    }
    if (!here) continue;
    last = here;
    const attrs = { 'data-suggestion': id, class: conflicted ? 'has-suggestion sugg-conflicted' : 'has-suggestion', 'aria-description': t('previewLabel') };
    if (ch.kind === 'deleted') {
      attrs.class += ' sugg-removed';
      decos.push(Decoration.node(here.off, here.off + here.node.nodeSize, attrs));
      continue;
    }
    decos.push(Decoration.node(here.off, here.off + here.node.nodeSize, attrs));
    if (whole || conflicted || !here.node.isTextblock || !ch.words) continue;
    const base = ch.words.filter((w) => w.op !== 'insert').map((w) => w.text).join('');
    if (base !== here.node.textBetween(0, here.node.content.size, '', '\uFFFC')) continue; // the block changed since: outline only
    let pos = here.off + 1;
    ch.words.forEach((w, i) => {
      if (w.op === 'equal') { pos += w.text.length; return; }
      if (w.op === 'delete') {
        decos.push(Decoration.inline(pos, pos + w.text.length, { class: 'sugg-del', nodeName: 'del' }));
        pos += w.text.length;
        return;
      }
      const text = w.text;
      decos.push(Decoration.widget(pos, () => h('ins', { class: 'sugg-ins', contenteditable: 'false' }, text),
        { side: 1, key: `sugg-ins-${id}-${ch.blockId}-${i}-${text}`, marks: [] }));
    });
  }
  return DecorationSet.create(doc, decos);
}

function addedText(preview, blockId) {
  const b = ((preview.candidate && preview.candidate.blocks) || []).find((x) => x.id === blockId);
  return b ? (b.richText || []).map((r) => r.text || '').join('') : '';
}
