// The floating toolbar on a text selection inside one top-level text
// block: quick actions (Improve / Shorten / Expand — instruction templates
// in the UI's language) and a free instruction, sent at once through the
// assistant panel with the scope selection:ID:FROM:TO, FROM and TO in
// code points of the block's plain text (docs/flowdoc.md "Offsets": an
// inline equation is one U+FFFC). Alt+/ with a selection moves focus into
// the toolbar; Escape returns to the text.
import { h } from '../dom.js';
import { t } from '../i18n.js';

const TEXT_BLOCKS = new Set(['paragraph', 'heading', 'quote']);

// codePoints counts the code points of s (not UTF-16 units).
export function codePoints(s) {
  let n = 0;
  for (const _ of s) n++; // eslint-disable-line no-unused-vars
  return n;
}

// selectionScope is the editor's selection as an assist scope, or null
// when it is empty or not inside one top-level text block.
export function selectionScope(state) {
  const { from, to, $from, $to, empty } = state.selection;
  if (empty || $from.depth !== 1 || $to.depth !== 1 || $from.parent !== $to.parent) return null;
  const block = $from.parent;
  if (!TEXT_BLOCKS.has(block.type.name) || !block.attrs.id) return null;
  const start = $from.start();
  const before = state.doc.textBetween(start, from, '', '\uFFFC');
  const inside = state.doc.textBetween(from, to, '', '\uFFFC');
  const s = codePoints(before);
  return { kind: 'selection', block: block.attrs.id, start: s, end: s + codePoints(inside) };
}

export function selectionToolbar(editor, mount, assist) {
  const host = mount.parentElement;
  const input = h('input', { type: 'text', id: 'sel-instruction', 'aria-label': t('freeInstruction'), placeholder: t('freeInstruction') });
  const quick = (key) => h('button', { type: 'button', 'data-action': key, id: `sel-${key}` }, t(key));
  const form = h('form', { class: 'sel-form' }, input, h('button', { type: 'submit', class: 'primary', id: 'sel-ask' }, t('ask')));
  const bar = h('div', { class: 'sel-toolbar', id: 'sel-toolbar', role: 'toolbar', 'aria-label': t('toolbar'), hidden: true },
    quick('improve'), quick('shorten'), quick('expand'), form);
  host.append(bar);
  let scope = null;

  const place = () => {
    scope = selectionScope(editor.state);
    if (!scope) {
      if (!bar.contains(document.activeElement)) bar.hidden = true;
      return;
    }
    const { from, to } = editor.state.selection;
    const a = editor.view.coordsAtPos(from);
    const b = editor.view.coordsAtPos(to);
    const hb = host.getBoundingClientRect();
    bar.style.top = `${Math.min(a.top, b.top) - hb.top - 48}px`;
    bar.style.left = `${Math.max(0, a.left - hb.left)}px`;
    bar.dataset.scope = `selection:${scope.block}:${scope.start}:${scope.end}`;
    bar.hidden = false;
  };
  const send = (instruction) => {
    if (!scope || !instruction) return;
    const s = scope;
    bar.hidden = true;
    input.value = '';
    assist.setScope(s);
    assist.ask(s, instruction);
  };
  bar.addEventListener('mousedown', (e) => { if (e.target !== input) e.preventDefault(); });
  bar.addEventListener('click', (e) => {
    const k = e.target.closest('[data-action]');
    if (k) send(t(`tpl_${k.dataset.action}`));
  });
  form.addEventListener('submit', (e) => { e.preventDefault(); send(input.value.trim()); });
  bar.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { e.preventDefault(); bar.hidden = true; editor.commands.focus(); }
    const buttons = [...bar.querySelectorAll('button[data-action], input, #sel-ask')];
    const i = buttons.indexOf(document.activeElement);
    if (e.target !== input && (e.key === 'ArrowRight' || e.key === 'ArrowLeft')) {
      e.preventDefault();
      buttons[(i + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length].focus();
    }
  });
  const onKey = (e) => {
    if (e.altKey && (e.key === '/' || e.code === 'Slash') && !editor.state.selection.empty) {
      place();
      if (!bar.hidden) { e.preventDefault(); bar.querySelector('button').focus(); }
    }
  };
  editor.view.dom.addEventListener('keydown', onKey);
  editor.on('selectionUpdate', place);
  editor.on('update', place);
  return () => {
    editor.off('selectionUpdate', place);
    editor.off('update', place);
    bar.remove();
  };
}
