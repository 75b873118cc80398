// The versions panel: the document's log (label, kind, reason, author,
// time, message) with "Restore" per version. A restore is the sync
// protocol's `restore` request; its result reaches every open tab as a
// draft.updated (applied by sync/document.js like any other update) and a
// version.created, on which the panel reloads the log.
import { api } from '../api.js';
import { h } from '../dom.js';

export function versionsPanel({ doc, conn, onError }) {
  const list = h('ol', { class: 'versions', id: 'versions-list' });
  const panel = h('aside', { class: 'panel', id: 'versions-panel', 'aria-label': 'Versions', hidden: true },
    h('div', { class: 'panel-head' }, h('h2', {}, 'Versions'),
      h('button', { type: 'button', class: 'quiet', onclick: () => toggle(false) }, 'Close')),
    list);
  async function load() {
    const log = await api('GET', `/v1/docs/${doc}/log?limit=100`);
    list.replaceChildren(...log.map((v) => h('li', { 'data-label': v.label },
      h('div', { class: 'version-head' },
        h('span', { class: 'label' }, v.label),
        h('span', { class: 'badge' }, v.reason ? `${v.kind} · ${v.reason}` : v.kind),
        h('time', { datetime: new Date(v.time).toISOString() }, new Date(v.time).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }))),
      h('div', { class: 'muted' }, v.author, v.message ? ` — ${v.message}` : ''),
      h('button', { type: 'button', 'data-restore': v.label, onclick: () => restore(v.label) }, `Restore ${v.label}`))));
  }
  async function restore(label) {
    try {
      await conn.call({ type: 'restore', doc, label });
      await load();
    } catch (err) {
      onError(`Restore failed: ${err.message}`);
    }
  }
  function toggle(open) {
    panel.hidden = !open;
    if (open) load().catch((err) => onError(`Could not read the versions: ${err.message}`));
  }
  return {
    el: panel,
    toggle: () => toggle(panel.hidden),
    // version.created from any tab: the log has a new entry.
    refresh: () => { if (!panel.hidden) load().catch(() => {}); },
  };
}
