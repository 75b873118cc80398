// The block menu: a button beside the block holding the caret that opens
// "Ask AI about this block" (scope block:ID) and, on a heading, "Ask AI
// about this section" (section:ID..ID, the heading and the blocks up to
// the next heading of the same or a higher level). Alt+/ in the editor
// opens it from the keyboard (with a text selection, the selection
// toolbar takes Alt+/ instead); arrows move, Escape closes and returns to
// the text. Both ask through the assistant panel (same session, same
// choice): the panel opens with the scope set and the instruction focused.
import { h } from '../dom.js';
import { t } from '../i18n.js';

// blockMenuItems are more entries of the menu, registered by the screen
// ({id, label, choose(blockId)}; the versions panel's "Block history").
export const blockMenuItems = [];

export function blockMenu(editor, mount, assist) {
  const host = mount.parentElement;
  const button = h('button', { type: 'button', class: 'block-menu-button', id: 'block-menu-button', 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'aria-label': t('blockMenu'), title: t('blockMenu'), hidden: true }, '⋯');
  const menu = h('div', { class: 'block-menu', id: 'block-menu', role: 'menu', 'aria-label': t('blockMenu'), hidden: true });
  host.append(button, menu);
  let current = null; // {id, node, off}

  const currentBlock = () => {
    const { $from } = editor.state.selection;
    if ($from.depth < 1) return null;
    const off = $from.before(1);
    const node = editor.state.doc.nodeAt(off);
    return node && node.attrs.id ? { id: node.attrs.id, node, off } : null;
  };
  // place runs once per frame at most: reading the block's box forces a
  // layout, which on every keystroke and every remote update is the
  // largest cost of typing in a long document.
  let frame = 0;
  const place = () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; placeNow(); });
  };
  const placeNow = () => {
    if (!menu.hidden) return;
    current = currentBlock();
    if (!current) { button.hidden = true; return; }
    const dom = editor.view.nodeDOM(current.off);
    if (!(dom instanceof HTMLElement)) { button.hidden = true; return; }
    const hb = host.getBoundingClientRect();
    const r = dom.getBoundingClientRect();
    button.style.top = `${r.top - hb.top}px`;
    button.style.left = `${r.left - hb.left - 36}px`;
    button.dataset.block = current.id;
    button.hidden = false;
  };
  const sectionOf = (cur) => {
    const level = cur.node.attrs.level || 1;
    let last = cur.id;
    let started = false;
    let stop = false;
    editor.state.doc.forEach((n) => {
      if (stop) return;
      if (n.attrs.id === cur.id) { started = true; return; }
      if (!started) return;
      if (n.type.name === 'heading' && (n.attrs.level || 1) <= level) { stop = true; return; }
      if (n.attrs.id) last = n.attrs.id;
    });
    return { kind: 'section', from: cur.id, to: last };
  };
  const close = (refocus) => {
    menu.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    if (refocus) editor.commands.focus();
  };
  const choose = (scope) => {
    close(false);
    assist.setScope(scope);
    assist.open(assist.instruction);
  };
  const openMenu = () => {
    current = currentBlock();
    if (!current) return;
    placeNow();
    const items = [h('button', { type: 'button', role: 'menuitem', id: 'ask-block', onclick: () => choose({ kind: 'block', block: current.id }) }, t('askBlock'))];
    if (current.node.type.name === 'heading') items.push(h('button', { type: 'button', role: 'menuitem', id: 'ask-section', onclick: () => choose(sectionOf(current)) }, t('askSection')));
    for (const it of blockMenuItems) {
      const id = current.id;
      items.push(h('button', { type: 'button', role: 'menuitem', id: it.id, onclick: () => { close(false); it.choose(id); } }, it.label));
    }
    menu.replaceChildren(...items);
    menu.style.top = `${parseFloat(button.style.top) + 30}px`;
    menu.style.left = button.style.left;
    menu.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    items[0].focus();
  };
  button.addEventListener('mousedown', (e) => e.preventDefault()); // keep the caret
  button.addEventListener('click', () => (menu.hidden ? openMenu() : close(true)));
  menu.addEventListener('keydown', (e) => {
    const items = [...menu.querySelectorAll('[role=menuitem]')];
    const i = items.indexOf(document.activeElement);
    if (e.key === 'Escape') { e.preventDefault(); close(true); }
    if (e.key === 'ArrowDown') { e.preventDefault(); items[(i + 1) % items.length].focus(); }
    if (e.key === 'ArrowUp') { e.preventDefault(); items[(i - 1 + items.length) % items.length].focus(); }
    if (e.key === 'Tab') close(false);
  });
  const onKey = (e) => {
    if (e.altKey && (e.key === '/' || e.code === 'Slash') && editor.state.selection.empty) {
      e.preventDefault();
      openMenu();
    }
  };
  editor.view.dom.addEventListener('keydown', onKey);
  editor.on('selectionUpdate', place);
  editor.on('update', place);
  editor.on('focus', place);
  // Blocks move without a transaction too (an image loads, a status line
  // above the document appears): place the button again when the page
  // around the editor changes size.
  const resized = new ResizeObserver(place);
  resized.observe(host);
  return () => {
    resized.disconnect();
    editor.off('selectionUpdate', place);
    editor.off('update', place);
    editor.off('focus', place);
    cancelAnimationFrame(frame);
    button.remove();
    menu.remove();
  };
}
