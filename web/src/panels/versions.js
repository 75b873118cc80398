// The versions panel: the document's log (label, kind, reason, author,
// time, message, the published mark, a mark on versions the assistant
// made) and, per version, Restore, Compare with the draft and Explain.
//
// Compare shows the server's block diff (GET /v1/docs/{id}/diff, `draft`
// naming the working copy) as a list of blocks — added, removed,
// modified (word by word, the server's CJK-aware word diff), moved —
// with the text of each side read from the versions themselves (GET
// .../versions/{label}, .../draft). A block that a version holds can be
// restored from it alone (POST .../restore with `block`). A whole restore
// is the sync protocol's `restore` request. Either way the result reaches
// every open tab as a draft.updated (applied by sync/document.js like any
// other update) and a version.created, on which the panel reloads the log.
//
// Explain reads GET .../versions/{label}/explain: for a version the
// assistant made, the suggestion, its run (instruction, scope, the pinned
// preset or persona, provider and model), the task and the usage booked;
// for one made by hand, what made it.
import { api } from '../api.js';
import { h } from '../dom.js';

const KIND_WORDS = { added: 'Added', deleted: 'Removed', modified: 'Modified', moved: 'Moved' };
const DRAFT = 'draft';

export function versionsPanel({ doc, conn, onError, onOpen }) {
  const list = h('ol', { class: 'versions', id: 'versions-list', 'aria-label': 'Versions, newest first' });
  const fromSel = h('select', { id: 'compare-from' });
  const toSel = h('select', { id: 'compare-to' });
  const result = h('section', { class: 'version-diff', id: 'versions-diff', 'aria-live': 'polite', hidden: true });
  const status = h('p', { class: 'muted', role: 'status', id: 'versions-status' });
  const heading = h('h2', { id: 'versions-title', tabindex: '-1' }, 'Versions');
  const close = h('button', { type: 'button', class: 'quiet', id: 'versions-close', onclick: () => toggle(false) }, 'Close');
  const compareForm = h('form', { class: 'compare-form', id: 'compare-form', 'aria-label': 'Compare two versions' },
    h('div', { class: 'compare-pick' },
      h('label', { for: 'compare-from' }, 'From'), fromSel),
    h('div', { class: 'compare-pick' },
      h('label', { for: 'compare-to' }, 'To'), toSel),
    h('button', { type: 'submit', id: 'compare-run' }, 'Compare'));
  compareForm.addEventListener('submit', (e) => {
    e.preventDefault();
    compare(fromSel.value, toSel.value);
  });
  const history = h('section', { class: 'block-history', id: 'block-history', 'aria-labelledby': 'history-title', hidden: true });
  const panel = h('aside', { class: 'panel versions-panel', id: 'versions-panel', 'aria-labelledby': 'versions-title', hidden: true },
    h('div', { class: 'panel-head' }, heading, close),
    compareForm, status, history, result, list);
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { e.preventDefault(); toggle(false); }
  });

  let log = [];
  let opener = null;

  async function load() {
    log = await api('GET', `/v1/docs/${doc}/log?limit=100`);
    const keepFrom = fromSel.value;
    const keepTo = toSel.value;
    const options = (sel) => sel.replaceChildren(
      h('option', { value: DRAFT }, 'Current draft'),
      ...log.map((v) => h('option', { value: v.label }, v.published ? `${v.label} (published)` : v.label)));
    options(fromSel);
    options(toSel);
    fromSel.value = log.some((v) => v.label === keepFrom) ? keepFrom : (log[0] ? log[0].label : DRAFT);
    toSel.value = keepTo && (keepTo === DRAFT || log.some((v) => v.label === keepTo)) ? keepTo : DRAFT;
    list.replaceChildren(...log.map(item));
    panel.dataset.loaded = 'true';
  }

  function item(v) {
    const explainBox = h('div', { class: 'explain', id: `explain-${v.label}`, hidden: true });
    const explainBtn = h('button', {
      type: 'button', class: 'small', 'data-explain': v.label, 'aria-expanded': 'false', 'aria-controls': `explain-${v.label}`,
      onclick: () => explain(v, explainBtn, explainBox),
    }, 'Explain', hidden(` ${v.label}`));
    const byAssistant = v.kind === 'accept_suggestion';
    return h('li', { 'data-label': v.label, 'data-published': v.published ? 'true' : null },
      h('div', { class: 'version-head' },
        h('span', { class: 'label' }, v.label),
        h('span', { class: 'badge' }, v.reason ? `${v.kind} · ${v.reason}` : v.kind),
        v.published ? h('span', { class: 'badge published', 'data-mark': 'published' }, 'published') : null,
        byAssistant ? h('span', { class: 'badge assistant', 'data-mark': 'assistant' }, 'by the assistant') : null,
        h('time', { datetime: new Date(v.time).toISOString() }, when(v.time))),
      h('div', { class: 'muted' }, v.author, v.message ? ` — ${v.message}` : ''),
      h('div', { class: 'row version-actions' },
        h('button', { type: 'button', class: 'small', 'data-restore': v.label, onclick: () => restore(v.label) }, `Restore ${v.label}`),
        h('button', { type: 'button', class: 'small', 'data-compare': v.label, onclick: () => { fromSel.value = v.label; toSel.value = DRAFT; compare(v.label, DRAFT); } }, 'Compare with draft', hidden(` (${v.label})`)),
        explainBtn),
      explainBox);
  }

  async function restore(label) {
    try {
      await conn.call({ type: 'restore', doc, label });
      status.textContent = `Restored ${label} as a new version.`;
      await load();
    } catch (err) {
      onError(`Restore failed: ${err.message}`);
    }
  }

  // body reads one side of a comparison: a version or the draft.
  async function body(label) {
    if (label === DRAFT) return (await api('GET', `/v1/docs/${doc}/draft`)).body;
    return (await api('GET', `/v1/docs/${doc}/versions/${encodeURIComponent(label)}`)).body;
  }

  async function compare(from, to) {
    status.textContent = `Comparing ${name(from)} with ${name(to)}…`;
    result.hidden = true;
    try {
      const [diff, a, b] = await Promise.all([
        api('GET', `/v1/docs/${doc}/diff?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`),
        body(from), body(to)]);
      renderDiff(from, to, diff.changes || [], byId(a), byId(b));
      status.textContent = '';
    } catch (err) {
      status.textContent = '';
      onError(`Could not compare ${name(from)} with ${name(to)}: ${err.message}`);
    }
  }

  function renderDiff(from, to, changes, a, b) {
    const title = h('h3', { id: 'diff-title', tabindex: '-1' }, `${name(from)} → ${name(to)}`);
    const summary = h('p', { class: 'muted', id: 'diff-summary' }, changes.length
      ? counts(changes)
      : 'No difference: the two have the same blocks.');
    const blocks = h('ol', { class: 'diff-blocks', id: 'diff-blocks' }, ...changes.map((ch) => change(ch, from, to, a, b)));
    result.replaceChildren(
      h('div', { class: 'panel-head' }, title,
        h('button', { type: 'button', class: 'quiet small', id: 'diff-close', onclick: () => { result.hidden = true; panel.classList.remove('wide'); document.body.classList.remove('versions-wide'); compareForm.querySelector('button').focus(); } }, 'Close comparison')),
      summary, blocks);
    result.dataset.from = from;
    result.dataset.to = to;
    result.hidden = false;
    panel.classList.add('wide');
    document.body.classList.add('versions-wide');
    title.focus();
  }

  function change(ch, from, to, a, b) {
    const before = a.get(ch.blockId);
    const after = b.get(ch.blockId);
    let text;
    if (ch.kind === 'modified' && ch.words && ch.words.length) {
      text = h('p', { class: 'diff-text' }, ...ch.words.map((w) => (w.op === 'equal' ? w.text
        : h(w.op === 'delete' ? 'del' : 'ins', {}, w.text))));
    } else if (ch.kind === 'added') {
      text = h('p', { class: 'diff-text' }, h('ins', {}, blockText(after) || `(an empty ${ch.type})`));
    } else if (ch.kind === 'deleted') {
      text = h('p', { class: 'diff-text' }, h('del', {}, blockText(before) || `(an empty ${ch.type})`));
    } else {
      text = h('p', { class: 'diff-text' }, blockText(after || before));
    }
    const notes = [];
    if (ch.kind === 'moved' || ch.moved) notes.push(`moved from position ${ch.from + 1} to ${ch.to + 1}`);
    if (ch.kind === 'modified' && !(ch.words && ch.words.length)) notes.push('its settings or structure changed, not its text');
    // A version that holds the block can give it back alone.
    const sources = [];
    if (from !== DRAFT && before) sources.push(from);
    if (to !== DRAFT && after && to !== from) sources.push(to);
    return h('li', { class: `diff-block diff-${ch.kind}`, 'data-block': ch.blockId, 'data-kind': ch.kind },
      h('div', { class: 'version-head' },
        h('span', { class: `badge kind-${ch.kind}` }, KIND_WORDS[ch.kind] || ch.kind),
        h('span', { class: 'muted' }, ch.type),
        notes.length ? h('span', { class: 'muted' }, notes.join('; ')) : null),
      text,
      sources.length ? h('div', { class: 'row' }, ...sources.map((label) => h('button', {
        type: 'button', class: 'small', 'data-restore-block': ch.blockId, 'data-from': label,
        onclick: () => restoreBlock(label, ch.blockId),
      }, `Restore block from ${label}`, hidden(` (${ch.type} ${ch.blockId})`)))) : null);
  }

  async function restoreBlock(label, block) {
    try {
      const v = await api('POST', `/v1/docs/${doc}/restore`, { label, block });
      await load();
      if (!result.hidden) await compare(result.dataset.from, result.dataset.to);
      if (!history.hidden && history.dataset.block === block) await blockHistory(block);
      status.textContent = `Restored the block from ${label} as ${v.label}.`;
    } catch (err) {
      onError(`Could not restore the block: ${err.message}`);
    }
  }

  async function explain(v, btn, box) {
    if (!box.hidden) {
      box.hidden = true;
      btn.setAttribute('aria-expanded', 'false');
      return;
    }
    box.hidden = false;
    btn.setAttribute('aria-expanded', 'true');
    box.replaceChildren(h('p', { class: 'muted' }, 'Reading…'));
    try {
      const e = await api('GET', `/v1/docs/${doc}/versions/${encodeURIComponent(v.label)}/explain`);
      box.replaceChildren(...explanation(e));
      box.dataset.loaded = 'true';
    } catch (err) {
      box.replaceChildren(h('p', { class: 'error' }, err.code === 'assistant_disabled'
        ? 'The writing assistant is off on this daemon, so it keeps no explanations.'
        : `Could not explain ${v.label}: ${err.message}`));
    }
  }

  // blockHistory shows every revision of one block (GET
  // .../blocks/{block}/history, newest first), each with its text read
  // from its version when opened, and restores one of them.
  async function blockHistory(block) {
    if (panel.hidden) toggle(true);
    const title = h('h3', { id: 'history-title', tabindex: '-1' }, `History of block ${block}`);
    history.replaceChildren(h('div', { class: 'panel-head' }, title,
      h('button', { type: 'button', class: 'quiet small', id: 'history-close', onclick: () => { history.hidden = true; heading.focus(); } }, 'Close history')),
    h('p', { class: 'muted' }, 'Reading…'));
    history.dataset.block = block;
    history.hidden = false;
    title.focus();
    try {
      const revs = await api('GET', `/v1/docs/${doc}/blocks/${encodeURIComponent(block)}/history`);
      const items = revs.map((r, i) => {
        const textBox = h('p', { class: 'diff-text' });
        const det = h('details', { 'data-label': r.label },
          h('summary', {}, h('span', { class: 'label' }, r.label), ` ${r.deleted ? 'deleted' : r.kind} · ${r.author} · `, h('time', { datetime: new Date(r.time).toISOString() }, when(r.time)),
            i === 0 ? h('span', { class: 'badge' }, 'latest') : null),
          textBox,
          r.deleted ? null : h('button', { type: 'button', class: 'small', 'data-restore-revision': r.label, onclick: () => restoreBlock(r.label, block) },
            `Restore block from ${r.label}`, hidden(` (${block})`)));
        det.addEventListener('toggle', async () => {
          if (!det.open || det.dataset.loaded) return;
          if (r.deleted) { textBox.textContent = 'The block was deleted in this version.'; det.dataset.loaded = 'true'; return; }
          try {
            const b = byId(await body(r.label)).get(block);
            textBox.textContent = blockText(b) || '(empty)';
            det.dataset.loaded = 'true';
          } catch (err) {
            textBox.textContent = `Could not read ${r.label}: ${err.message}`;
          }
        });
        return h('li', {}, det);
      });
      // The heading stays (it has the focus); what follows it is replaced.
      while (history.childNodes.length > 1) history.lastChild.remove();
      history.append(
        revs.length ? h('ol', { class: 'history-list', id: 'history-list' }, ...items) : h('p', { class: 'muted' }, 'This block is in no version yet: it was added since the last checkpoint.'));
    } catch (err) {
      while (history.childNodes.length > 1) history.lastChild.remove();
      history.append(h('p', { class: 'error' }, `Could not read the block's history: ${err.message}`));
    }
  }

  function toggle(open) {
    if (open) {
      opener = document.activeElement;
      if (onOpen) onOpen();
    }
    panel.hidden = !open;
    document.body.classList.toggle('versions-open', open);
    if (open) {
      heading.focus();
      load().catch((err) => onError(`Could not read the versions: ${err.message}`));
    } else {
      panel.classList.remove('wide');
      document.body.classList.remove('versions-wide');
      if (opener && opener.isConnected) opener.focus();
    }
  }
  return {
    el: panel,
    toggle: () => toggle(panel.hidden),
    close: () => { if (!panel.hidden) toggle(false); },
    blockHistory,
    // version.created from any tab: the log has a new entry; a publish
    // moves the published mark.
    refresh: () => { if (!panel.hidden) load().catch(() => {}); },
  };
}

// explanation renders the explain chain as a short description list.
function explanation(e) {
  const rows = [];
  const row = (k, v) => { if (v !== undefined && v !== null && v !== '') rows.push(h('dt', {}, k), h('dd', {}, v)); };
  row('What made it', e.note);
  if (e.txn) row('Change', `${e.txn.kind} by ${e.txn.actor}${e.txn.events ? ` — ${e.txn.events.length} block${e.txn.events.length === 1 ? '' : 's'}` : ''}`);
  if (!e.byHand) {
    const s = e.suggestion || {};
    const run = e.run || {};
    row('Suggestion', s.id ? `${s.id} (${s.status})${s.summary ? ` — ${s.summary}` : ''}` : '');
    row('Instruction', run.instruction ? `${run.instruction}${run.defaultInstruction ? ' (the preset’s default)' : ''}` : '');
    row('Scope', scopeWords(run.scope));
    row('Personalization', pinWords(run.personalization || s.personalization));
    const p = run.personalization && run.personalization.persona;
    if (p) {
      row('Memory', p.memoryKeys ? `${p.memoryKeys.length} item${p.memoryKeys.length === 1 ? '' : 's'} used` : 'none used');
      row('Learning', p.learningRules ? `${p.learningRules.length} rule${p.learningRules.length === 1 ? '' : 's'} given` : 'none given');
    }
    row('Provider', run.provider ? `${run.provider}${run.model ? ` · ${run.model}` : ''}${run.source ? ` (${run.source} settings)` : ''}${run.provider === 'local' ? ' — the offline provider: it edits by rules, no model was asked' : ''}` : '');
    if (e.task) row('Task', `${e.task.state}, attempt ${e.task.attempt} of ${e.task.maxAttempts}; ${e.task.retries} retr${e.task.retries === 1 ? 'y' : 'ies'}, ${e.task.recoveries} recover${e.task.recoveries === 1 ? 'y' : 'ies'}`);
    if (e.usage && e.usage.length) {
      const total = e.usage.reduce((n, u) => n + (u.total || 0), 0);
      row('Usage', `${total} tokens in ${e.usage.length} call${e.usage.length === 1 ? '' : 's'} (${e.usage.map((u) => u.category).join(', ')})`);
    }
    if (e.messages && e.messages.length) row('Messages', `${e.messages.length} in session ${run.session || s.session || ''}`.trim());
  }
  return [h('dl', { class: 'explain-list' }, ...rows)];
}

function scopeWords(s) {
  if (!s || !s.kind) return '';
  if (s.kind === 'document') return 'the whole document';
  if (s.kind === 'block') return `block ${s.block}`;
  if (s.kind === 'selection') return `a selection in block ${s.block}`;
  if (s.kind === 'section') return `the section ${s.from}..${s.to}`;
  return s.kind;
}

function pinWords(p) {
  if (!p || !p.kind || p.kind === 'none') return 'none';
  if (p.preset) return `${p.preset.type} preset “${p.preset.name}” v${p.preset.number}`;
  if (p.persona) return `persona “${p.persona.name}” ${p.persona.version || ''}`.trim();
  return p.kind;
}

function counts(changes) {
  const n = {};
  for (const c of changes) n[c.kind] = (n[c.kind] || 0) + 1;
  return Object.keys(KIND_WORDS).filter((k) => n[k]).map((k) => `${n[k]} ${KIND_WORDS[k].toLowerCase()}`).join(', ');
}

// hidden is text for screen readers only (which version, which block).
function hidden(s) { return h('span', { class: 'visually-hidden' }, s); }

function name(label) { return label === DRAFT ? 'the current draft' : label; }

function byId(body) {
  const m = new Map();
  for (const b of (body && body.blocks) || []) m.set(b.id, b);
  return m;
}

// blockText is a block's plain text, nested content included.
export function blockText(b) {
  if (!b) return '';
  const parts = [];
  const runs = (rs) => (rs || []).map((r) => r.text || r.equation || '').join('');
  const walk = (x) => {
    if (!x) return;
    if (Array.isArray(x)) { x.forEach(walk); return; }
    if (x.richText) parts.push(runs(x.richText));
    const a = x.attrs || {};
    for (const k of ['text', 'latex', 'title', 'caption', 'alt', 'name', 'url']) if (typeof a[k] === 'string' && a[k]) parts.push(a[k]);
    walk(x.items); walk(x.children);
    for (const c of x.columns || []) walk(c.blocks);
    for (const r of x.rows || []) parts.push((r.cells || []).map(runs).join(' | '));
  };
  walk(b);
  return parts.filter(Boolean).join(' ');
}

function when(t) {
  return new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
