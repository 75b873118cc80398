// Atom blocks: FlowDocument block types the editor shows as a card with a
// small attribute form rather than editing them inline (equation, media,
// bookmark, file, embed, and any type this build does not know). The node
// holds the whole block less its id in `block`, so it round-trips exactly
// (editor/codec.js); the form edits its attributes. A media card also
// shows its image, with the alternative text and caption editable in place
// (nodes/media.js).
import { Node } from '@tiptap/core';
import { ATOM_TYPES, LIST_ATOM, QUOTE_ATOM, plainText, UNKNOWN_NODE } from '../codec.js';
import { h } from '../../dom.js';
import { mediaView } from './media.js';

// FIELDS are the attributes each type's form edits (name, label, kind).
export const FIELDS = {
  equation: [['latex', 'LaTeX', 'textarea']],
  media: [['kind', 'Kind', ['image', 'video']], ['src', 'URL (https, or folio-asset: of an upload)', 'text']],
  bookmark: [['url', 'URL', 'url'], ['title', 'Title', 'text'], ['description', 'Description', 'text']],
  file: [['src', 'URL (https)', 'url'], ['name', 'File name', 'text'], ['size', 'Size in bytes', 'number']],
  embed: [['url', 'URL', 'url'], ['provider', 'Provider', 'text']],
  list: [],
  quote: [],
};

const LABELS = {
  equation: 'Equation', media: 'Image', bookmark: 'Bookmark', file: 'File', embed: 'Embed',
  list: 'List (task list, or blocks in its items)', quote: 'Quote with blocks',
};

function summary(block) {
  const a = block.attrs || {};
  switch (block.type) {
    case 'equation': return a.latex || '';
    case 'media': return a.alt || (String(a.src || '').startsWith('folio-asset:') ? `uploaded ${a.kind || 'image'}` : a.src || '');
    case 'bookmark': return a.title ? `${a.title} — ${a.url}` : a.url || '';
    case 'file': return a.name ? `${a.name}${a.size ? ` (${a.size} bytes)` : ''}` : String(a.src || '').startsWith('folio-asset:') ? 'uploaded file' : '';
    case 'embed': return `${a.provider ? a.provider + ': ' : ''}${a.url || ''}`;
    default: return plainText(block).slice(0, 160);
  }
}

function atomNode(name, type) {
  return Node.create({
    name,
    group: 'block',
    atom: true,
    selectable: true,
    draggable: true,
    addAttributes() {
      return {
        id: { default: null, parseHTML: () => null, renderHTML: (a) => (a.id ? { 'data-block-id': a.id } : {}) },
        block: { default: { type }, parseHTML: () => ({ type }), renderHTML: () => ({}) },
      };
    },
    parseHTML: () => [{ tag: `div[data-atom="${type}"]` }],
    renderHTML: ({ HTMLAttributes }) => ['div', { ...HTMLAttributes, 'data-atom': type || 'unknown' }],
    addNodeView() {
      return ({ node, getPos, editor }) => {
        let current = node;
        const blockType = () => current.attrs.block.type || type || 'unknown';
        const title = h('span', { class: 'atom-type' });
        const text = h('span', { class: 'atom-summary' });
        const editBtn = h('button', { type: 'button', class: 'atom-edit', 'aria-expanded': 'false' }, 'Edit');
        const form = h('form', { class: 'atom-form', hidden: true });
        const setAttrs = (patch) => {
          const pos = getPos();
          if (typeof pos !== 'number') return;
          const b = structuredClone(current.attrs.block);
          b.attrs = { ...(b.attrs || {}), ...patch };
          editor.view.dispatch(editor.state.tr.setNodeAttribute(pos, 'block', b));
        };
        const extra = type === 'media' ? mediaView(() => current.attrs.id || 'new', setAttrs) : null;
        const dom = h('div', { class: 'atom', 'data-atom': type || 'unknown', contenteditable: 'false' },
          h('div', { class: 'atom-card' }, title, text, editBtn), extra && extra.el, form);
        const render = () => {
          const b = current.attrs.block;
          title.textContent = LABELS[blockType()] || `Block “${blockType()}”`;
          text.textContent = summary(b);
          dom.setAttribute('data-block-id', current.attrs.id || '');
          if (extra) extra.update(b);
        };
        const buildForm = () => {
          form.replaceChildren();
          const b = current.attrs.block;
          const fields = FIELDS[blockType()] || [];
          if (!fields.length) {
            form.append(h('p', { class: 'muted' }, 'This block is kept exactly as it is; this editor cannot change its content yet.'));
          }
          for (const [key, label, kind] of fields) {
            const v = (b.attrs || {})[key];
            const fid = `f-${current.attrs.id}-${key}`;
            let input;
            if (Array.isArray(kind)) {
              input = h('select', { id: fid, name: key }, ...kind.map((o) => h('option', { value: o, selected: (v || kind[0]) === o }, o)));
            } else if (kind === 'textarea') {
              input = h('textarea', { id: fid, name: key, rows: '3' });
              input.value = v || '';
            } else {
              input = h('input', { id: fid, name: key, type: kind === 'number' ? 'number' : kind === 'url' ? 'url' : 'text', value: v ?? '' });
            }
            form.append(h('label', { for: fid }, label), input);
          }
          form.append(h('div', { class: 'row' },
            fields.length ? h('button', { type: 'submit', class: 'primary' }, 'Apply') : null,
            h('button', { type: 'button', onclick: () => toggle(false) }, 'Close')));
        };
        const toggle = (open) => {
          if (open) buildForm();
          form.hidden = !open;
          editBtn.setAttribute('aria-expanded', String(open));
          if (open) { const f = form.querySelector('input,textarea,select'); if (f) f.focus(); }
        };
        editBtn.addEventListener('click', () => toggle(form.hidden));
        form.addEventListener('submit', (e) => {
          e.preventDefault();
          const b = structuredClone(current.attrs.block);
          const attrs = { ...(b.attrs || {}) };
          for (const [key, , kind] of FIELDS[blockType()] || []) {
            const raw = form.elements[key].value;
            attrs[key] = kind === 'number' ? (raw === '' ? 0 : Number(raw)) : raw;
          }
          b.attrs = attrs;
          const pos = getPos();
          if (typeof pos === 'number') editor.view.dispatch(editor.state.tr.setNodeAttribute(pos, 'block', b));
          toggle(false);
        });
        render();
        return {
          dom,
          stopEvent: (e) => form.contains(e.target) || e.target === editBtn || !!(extra && extra.el.contains(e.target) && e.target.tagName !== 'IMG'),
          ignoreMutation: () => true,
          update(n) {
            if (n.type !== current.type) return false;
            current = n;
            render();
            return true;
          },
          destroy() {
            if (extra) extra.destroy();
          },
        };
      };
    },
  });
}

export const AtomBlocks = [
  ...Object.entries(ATOM_TYPES).map(([type, name]) => atomNode(name, type)),
  atomNode(LIST_ATOM, 'list'),
  atomNode(QUOTE_ATOM, 'quote'),
  atomNode(UNKNOWN_NODE, ''),
];
