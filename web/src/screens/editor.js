// The editor screen at /d/<id>: the title, the body (editor/editor.js) kept
// in sync by sync/document.js over the tab's connection, the status
// (data-sync-state on #sync-status: loading, saving, saved, offline,
// reconnecting, conflict, error), the unsealed marker and "Checkpoint".
import { h } from '../dom.js';
import { DocEditor } from '../editor/editor.js';
import { DocSync } from '../sync/document.js';
import { connection, topBar } from './shell.js';
import { versionsPanel } from '../panels/versions.js';
import { assistant } from '../panels/assistant.js';
import { publishPanel } from '../panels/publish.js';
import { blockMenuItems } from '../editor/block-menu.js';
import { insertBar } from '../editor/insert-bar.js';

const LABELS = {
  loading: 'Loading…', saving: 'Saving…', saved: 'Saved', offline: 'Offline — changes kept here',
  reconnecting: 'Reconnecting…', conflict: 'Conflict — choose a version', error: 'Not saved',
};

export function editorScreen({ params, root, go }) {
  const conn = connection();
  const status = h('span', { id: 'sync-status', class: 'status', role: 'status', 'data-sync-state': 'loading' }, LABELS.loading);
  const unsealed = h('span', { id: 'unsealed', class: 'badge', hidden: true, title: 'Changes not yet sealed in a version' }, 'unsealed');
  const head = h('span', { id: 'head-label', class: 'label' });
  const message = h('input', { id: 'checkpoint-message', type: 'text', placeholder: 'Message (optional)', 'aria-label': 'Checkpoint message' });
  const cpForm = h('form', { class: 'checkpoint-form', hidden: true },
    message, h('button', { type: 'submit', class: 'primary' }, 'Seal'), h('button', { type: 'button', onclick: () => { cpForm.hidden = true; } }, 'Cancel'));
  const cpButton = h('button', { type: 'button', id: 'checkpoint', onclick: () => { cpForm.hidden = false; message.focus(); } }, 'Checkpoint');
  const versions = versionsPanel({ doc: params.id, conn, onError: (m) => { notice.textContent = m; }, onOpen: () => publish.close() });
  const versionsButton = h('button', { type: 'button', id: 'versions', onclick: () => versions.toggle() }, 'Versions');
  const publish = publishPanel({
    doc: params.id,
    getAttrs: () => ({ ...attrs, title: title.value }),
    setAttrs: (patch) => { attrs = cleanAttrs({ ...attrs, ...patch }); sync.edited(); },
    setTitle: (t) => { title.value = t; document.title = `${t} · Folio`; sync.edited(); },
    saved: () => { sync.flush(); return whenSaved(sync); },
    onOpen: () => versions.close(),
  });
  blockMenuItems.splice(0, blockMenuItems.length, { id: 'block-history-open', label: 'Block history', choose: (id) => versions.blockHistory(id) });
  const publishButton = h('button', { type: 'button', id: 'publish-open', onclick: () => publish.toggle() }, 'Publish');
  const title = h('input', { id: 'doc-title', class: 'doc-title-input', type: 'text', 'aria-label': 'Title', placeholder: 'Untitled' });
  const mount = h('div', { class: 'editor-mount' });
  const notice = h('p', { class: 'error', role: 'alert', id: 'editor-error' });
  const assist = assistant({ doc: params.id });
  root.append(
    topBar(go, h('span', { class: 'doc-state' }, head, unsealed, status), assist.button, cpButton, versionsButton, publishButton),
    h('main', { class: 'writing', id: 'main' }, cpForm, notice, title, mount),
    versions.el, publish.el, assist.panel);

  let attrs = {};
  const view = new DocEditor(mount, {
    onEdit: () => sync.edited(),
    onResolve: (id, choice) => sync.resolve(id, choice),
  });
  const sync = new DocSync(conn, params.id, {
    read: () => view.read(),
    write: (set, order, state) => view.write(set, order, state),
    composing: () => view.composing(),
    showConflicts: (c) => view.showConflicts(c),
    readAttrs: () => ({ ...attrs, title: title.value }),
    writeAttrs: (a) => {
      attrs = { ...a };
      if (title.value !== (a.title || '')) title.value = a.title || '';
      document.title = `${a.title || 'Untitled'} · Folio`;
      publish.attrsChanged({ ...attrs, title: title.value });
    },
    changed: (s) => {
      // Called on every edit and every message: touch the page only where
      // something changed.
      const label = s.state === 'error' && s.error ? `Not saved: ${s.error}` : LABELS[s.state];
      if (status.dataset.syncState !== s.state) status.dataset.syncState = s.state;
      if (status.dataset.seq !== String(s.seq)) status.dataset.seq = String(s.seq);
      if (status.textContent !== label) status.textContent = label;
      if (unsealed.hidden !== !s.unsealed) unsealed.hidden = !s.unsealed;
      if (head.textContent !== s.head) head.textContent = s.head;
    },
  }, {
    onEvent: (m) => {
      if (m.type === 'version.created' || m.type === 'doc.published' || m.type === 'doc.unpublished') versions.refresh();
      publish.onEvent(m);
      assist.onEvent(m);
      if (m.type === 'open.error') notice.textContent = m.error.code === 'not_found' ? 'There is no such document (or it is not yours).' : m.error.message;
    },
  });
  view.onCompositionEnd = () => sync.resume();
  const inserts = insertBar(view.editor);
  mount.before(inserts.el);
  title.addEventListener('input', () => sync.edited());
  cpForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    sync.flush();
    try {
      await whenSaved(sync);
      const res = await conn.call({ type: 'checkpoint', doc: params.id, reason: 'manual', ...(message.value ? { message: message.value } : {}) });
      sync.head = res.version.label;
      sync.unsealed = false;
      sync.notify();
      message.value = '';
      cpForm.hidden = true;
    } catch (err) {
      notice.textContent = `Checkpoint failed: ${err.message}`;
    }
  });
  const beforeUnload = (e) => {
    if (sync.hasUnsaved()) { e.preventDefault(); e.returnValue = ''; }
  };
  addEventListener('beforeunload', beforeUnload);
  conn.attach(sync);
  assist.attach(view, sync);
  // The tests and the benchmarks read the editor through this handle.
  window.folioEditor = { sync, view };
  return () => {
    removeEventListener('beforeunload', beforeUnload);
    document.body.classList.remove('versions-open', 'versions-wide', 'publish-open');
    assist.destroy();
    inserts.destroy();
    conn.detach(sync);
    view.destroy();
    delete window.folioEditor;
  };
}

// cleanAttrs drops empty attributes (an empty summary, no tags).
function cleanAttrs(a) {
  const out = {};
  for (const [k, v] of Object.entries(a)) if (v !== '' && v !== undefined && v !== null && !(Array.isArray(v) && !v.length)) out[k] = v;
  return out;
}

// whenSaved resolves once nothing of the document is pending or in flight.
function whenSaved(sync) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const s = sync.status().state;
      if (s === 'saved') return resolve();
      if (s === 'error' || s === 'conflict') return reject(new Error('the draft is not saved'));
      sync.waiters = sync.waiters || [];
      sync.waiters.push(check);
    };
    check();
  });
}
