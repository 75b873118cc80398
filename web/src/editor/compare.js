// The side-by-side view of a whole-document suggestion: the current text
// on the left, the proposed text on the right, one row per block it
// changes (its deleted words struck on the left, its inserted words
// marked on the right, an added or removed block said so), above the
// document. A whole-document candidate rewrites many blocks at once, and
// reading each change inline beside its neighbours' changes is harder
// than reading the two texts apart; the document stays what the server
// has until the suggestion is accepted. showCompare(editor, preview)
// shows it for a whole-document preview and removes it otherwise.
import { h } from '../dom.js';
import { t } from '../i18n.js';

const views = new WeakMap(); // editor -> its view's element

export function isWholeDocument(preview) {
  const s = preview && preview.suggestion;
  return !!s && (!s.scope || s.scope.kind === 'document');
}

export function showCompare(editor, preview) {
  const old = views.get(editor);
  if (old) old.remove();
  views.delete(editor);
  if (!isWholeDocument(preview)) return;
  const el = render(editor, preview);
  editor.view.dom.before(el);
  views.set(editor, el);
}

function render(editor, preview) {
  const s = preview.suggestion;
  const conflicted = s.status === 'conflicted';
  const current = new Map();
  editor.state.doc.forEach((node) => current.set(node.attrs.id, node.textBetween(0, node.content.size, '\n', '\uFFFC')));
  const proposed = new Map(((preview.candidate && preview.candidate.blocks) || []).map((b) => [b.id, blockText(b)]));
  const changes = preview.changes || [];
  const rows = changes.map((ch) => {
    let left;
    let right;
    if (ch.kind === 'added') {
      left = h('td', { class: 'compare-none' }, t('compareAdded'));
      right = h('td', {}, h('ins', {}, proposed.get(ch.blockId) || words(ch, 'delete')));
    } else if (ch.kind === 'deleted') {
      left = h('td', {}, h('del', {}, current.get(ch.blockId) || words(ch, 'insert')));
      right = h('td', { class: 'compare-none' }, t('compareRemoved'));
    } else if (ch.words && ch.words.length) {
      left = h('td', {}, ...ch.words.filter((w) => w.op !== 'insert').map((w) => (w.op === 'delete' ? h('del', {}, w.text) : w.text)));
      right = h('td', {}, ...ch.words.filter((w) => w.op !== 'delete').map((w) => (w.op === 'insert' ? h('ins', {}, w.text) : w.text)));
    } else {
      left = h('td', {}, current.get(ch.blockId) || '');
      right = h('td', {}, proposed.get(ch.blockId) || '');
    }
    return h('tr', { 'data-block': ch.blockId, 'data-kind': ch.kind }, left, right);
  });
  const unchanged = Math.max(0, current.size - changes.filter((c) => c.kind !== 'added').length);
  return h('section', { id: 'sugg-compare', class: conflicted ? 'sugg-compare sugg-conflicted' : 'sugg-compare', 'data-suggestion': s.id,
    'aria-labelledby': 'sugg-compare-title' },
  h('h2', { id: 'sugg-compare-title' }, t('compareTitle')),
  h('p', { class: 'muted' }, conflicted ? t('compareConflicted') : t('compareNote', changes.length, unchanged)),
  h('table', { class: 'compare-table' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('compareCurrent')), h('th', { scope: 'col' }, t('compareProposed')))),
    h('tbody', {}, ...rows)));
}

function words(ch, skip) {
  return (ch.words || []).filter((w) => w.op !== skip).map((w) => w.text).join('');
}

function blockText(b) {
  if (b.richText) return b.richText.map((r) => r.text || '').join('');
  if (b.text) return b.text;
  return (b.children || []).map(blockText).join('\n');
}
