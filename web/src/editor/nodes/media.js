// Images and files in the editor. MediaInput takes image and other files
// pasted or dropped into the document (and insertFiles is what the
// "Image or file…" picker calls): each file is uploaded to the asset store
// first and only then inserted, as a media block (an image) or a file block
// (PDF, text, ZIP) naming folio-asset:<hash>, where the caret or the drop
// was (mapped through whatever changed during the upload). A refused file
// inserts nothing and is reported in words. Progress and errors go out as
// a "folio-media" event on the editor's element ({message, error}), which
// the insert bar (editor/insert-bar.js) shows.
//
// mediaView is the media block's preview inside its card: the image (an
// asset through a blob: URL, editor/assets.js) with its alternative text
// and caption editable in place.
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey, NodeSelection } from '@tiptap/pm/state';
import { acquire, release, upload, uploadError } from '../assets.js';
import { blockToNode } from '../codec.js';
import { h } from '../../dom.js';

function say(editor, message, error = false) {
  editor.view.dom.dispatchEvent(new CustomEvent('folio-media', { detail: { message, error }, bubbles: true }));
}

// insertPoint is where a block goes for a caret at pos: after the block
// holding pos, in the nearest container that takes blocks (the document, a
// details body, a column); an empty paragraph there is replaced.
function insertPoint(doc, pos, type) {
  const $p = doc.resolve(Math.max(0, Math.min(pos, doc.content.size)));
  for (let d = $p.depth; d >= 1; d--) {
    const parent = $p.node(d - 1);
    const idx = $p.index(d - 1);
    if (parent.canReplaceWith(idx + 1, idx + 1, type)) {
      const block = $p.node(d);
      if (block.isTextblock && block.content.size === 0) return { from: $p.before(d), to: $p.after(d) };
      return { from: $p.after(d), to: $p.after(d) };
    }
  }
  return { from: $p.pos, to: $p.pos };
}

// insertFiles uploads files one after the other and inserts each one
// stored at pos (default: the caret).
export async function insertFiles(editor, files, at) {
  let pos = at ?? editor.state.selection.from;
  const track = ({ transaction }) => { pos = transaction.mapping.map(pos); };
  editor.on('transaction', track);
  let added = 0;
  let failed = 0;
  try {
    for (const file of files) {
      say(editor, `Uploading ${file.name || 'the file'}…`);
      let info;
      try {
        info = await upload(file);
      } catch (err) {
        failed++;
        say(editor, uploadError(file, err), true);
        continue;
      }
      if (editor.isDestroyed) return;
      const block = (info.mime || '').startsWith('image/')
        ? { type: 'media', attrs: { kind: 'image', src: info.url } }
        : { type: 'file', attrs: { src: info.url, name: info.name || file.name || '', size: info.size } };
      const node = editor.schema.nodeFromJSON(blockToNode({ id: null, ...block }));
      const { from, to } = insertPoint(editor.state.doc, pos, node.type);
      const tr = editor.state.tr.replaceWith(from, to, node);
      tr.setSelection(NodeSelection.create(tr.doc, from)).scrollIntoView();
      editor.view.dispatch(tr);
      pos = from + node.nodeSize;
      added++;
    }
  } finally {
    editor.off('transaction', track);
  }
  if (!failed) say(editor, added === 1 ? 'Added 1 file.' : `Added ${added} files.`);
}

// isFilePaste tells a paste of files (an image copied, a file copied in
// a file manager) from rich text that carries a picture of itself (word
// processors put both on the clipboard): text wins.
function filesOf(data, paste) {
  if (!data) return [];
  const files = [...(data.files || [])];
  if (!files.length) return [];
  if (paste && (data.getData('text/plain') || '').trim()) return [];
  return files;
}

export const MediaInput = Extension.create({
  name: 'mediaInput',
  addProseMirrorPlugins() {
    const editor = this.editor;
    return [new Plugin({
      key: new PluginKey('mediaInput'),
      props: {
        handlePaste(view, event) {
          const files = filesOf(event.clipboardData, true);
          if (!files.length) return false;
          event.preventDefault();
          insertFiles(editor, files, view.state.selection.from);
          return true;
        },
        handleDrop(view, event, _slice, moved) {
          if (moved) return false;
          const files = filesOf(event.dataTransfer, false);
          if (!files.length) return false;
          event.preventDefault();
          const at = view.posAtCoords({ left: event.clientX, top: event.clientY });
          insertFiles(editor, files, at ? at.pos : view.state.selection.from);
          return true;
        },
      },
    })];
  },
});

// mediaView fills a media card: the preview and the alt and caption
// fields. It answers {el, update(block), destroy()}; setAttrs(patch)
// writes the block's attributes.
export function mediaView(blockID, setAttrs) {
  const img = h('img', { class: 'media-image', alt: '' });
  const note = h('p', { class: 'media-note muted', role: 'status' });
  const altID = `alt-${blockID()}-${Math.random().toString(36).slice(2, 8)}`;
  const capID = `${altID}-caption`;
  const alt = h('input', { id: altID, type: 'text', class: 'media-alt', placeholder: 'Describe the image for readers who cannot see it' });
  const caption = h('input', { id: capID, type: 'text', class: 'media-caption', placeholder: 'Caption (optional)' });
  const el = h('figure', { class: 'media-preview' }, img, note,
    h('div', { class: 'media-fields' },
      h('label', { for: altID }, 'Alternative text'), alt,
      h('label', { for: capID }, 'Caption'), caption));
  let src = null;
  let shownFor = null;
  const show = (next, kind) => {
    if (next === src) return;
    if (src) release(src);
    src = next;
    img.removeAttribute('src');
    img.hidden = true;
    note.textContent = '';
    if (!src || kind === 'video') {
      note.textContent = kind === 'video' ? 'Video' : 'No image yet: choose its source with Edit.';
      return;
    }
    note.textContent = 'Loading the image…';
    const mine = src;
    shownFor = mine;
    acquire(mine).then((url) => {
      if (shownFor !== mine) return;
      img.src = url;
      img.hidden = false;
      note.textContent = '';
    }, (err) => {
      if (shownFor !== mine) return;
      note.textContent = `The image cannot be shown: ${err.message}.`;
    });
  };
  alt.addEventListener('input', () => setAttrs({ alt: alt.value }));
  caption.addEventListener('input', () => setAttrs({ caption: caption.value }));
  return {
    el,
    update(block) {
      const a = block.attrs || {};
      show(a.src || '', a.kind || 'image');
      img.alt = a.alt || '';
      if (document.activeElement !== alt && alt.value !== (a.alt || '')) alt.value = a.alt || '';
      if (document.activeElement !== caption && caption.value !== (a.caption || '')) caption.value = a.caption || '';
    },
    destroy() {
      shownFor = null;
      if (src) release(src);
      src = null;
    },
  };
}
