// The insert bar above the document: "Image or file…" (a file picker;
// the same upload as paste and drop, nodes/media.js), "Details" and
// "Columns". Its status line says what an upload is doing and, in words,
// why a file was not added.
import { h } from '../dom.js';
import { insertFiles } from './nodes/media.js';

export function insertBar(editor) {
  const file = h('input', { type: 'file', id: 'insert-file', multiple: true, hidden: true, accept: 'image/png,image/jpeg,image/gif,image/webp,image/avif,application/pdf,text/plain,application/zip', 'aria-label': 'Image or file to insert' });
  const status = h('p', { id: 'media-status', class: 'media-status', role: 'status', 'aria-live': 'polite' });
  const keep = (e) => e.preventDefault(); // a click keeps the caret in the text
  const button = (id, label, onclick) => {
    const b = h('button', { type: 'button', id, class: 'quiet', onclick });
    b.append(label);
    b.addEventListener('mousedown', keep);
    return b;
  };
  const el = h('div', { class: 'insert-bar', role: 'toolbar', 'aria-label': 'Insert' },
    button('insert-image', 'Image or file…', () => file.click()),
    button('insert-details', 'Details', () => editor.chain().focus().insertDetails().run()),
    button('insert-columns', 'Columns', () => editor.chain().focus().insertColumns(2).run()),
    file, status);
  file.addEventListener('change', () => {
    const files = [...file.files];
    file.value = '';
    if (files.length) insertFiles(editor, files);
  });
  const onMedia = (e) => {
    status.textContent = e.detail.message;
    status.classList.toggle('error', !!e.detail.error);
    status.setAttribute('role', e.detail.error ? 'alert' : 'status');
  };
  editor.view.dom.addEventListener('folio-media', onMedia);
  return { el, destroy: () => editor.view.dom.removeEventListener('folio-media', onMedia) };
}
