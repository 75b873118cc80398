// The "AI · 版本" panel: the writing assistant for one article. It shows
// the article's current session (the most recently used one) with a
// switcher, the conversation (each message's frozen source on demand),
// the personalization selector (persona / writing preset / editing preset
// / none, one at a time, remembered per session on the server), the
// request's run live from its stream with Cancel, and a pending
// suggestion: previewed in the document (editor/suggestions.js), its diff,
// summary and pinned preset here (and the agent, for one an outside agent
// proposed), with Accept and Reject. The block menu
// (editor/block-menu.js) and the selection toolbar
// (editor/selection-toolbar.js) ask through the same panel, so every entry
// uses the same session and choice.
//
// The editor screen makes one with assistant({doc}), puts .button in its
// top bar and .panel in the page, calls attach(view, sync) once the editor
// exists, gives it the document's events (onEvent) and destroy()s it.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { assistApi, followRun } from './assist-api.js';
import { setPreview, suggestionPlugin } from '../editor/suggestions.js';
import { blockMenu } from '../editor/block-menu.js';
import { selectionToolbar } from '../editor/selection-toolbar.js';

const KINDS = [
  { kind: 'editing_preset', label: 'editingPreset', field: 'editingPreset' },
  { kind: 'writing_preset', label: 'writingPreset', field: 'writingPreset' },
  { kind: 'persona', label: 'persona', field: 'persona' },
];

export function assistant({ doc }) {
  return new AssistantPanel(doc);
}

class AssistantPanel {
  constructor(doc) {
    this.doc = doc;
    this.session = null;
    this.sessions = [];
    this.choice = { kind: 'none' };
    this.presets = [];
    this.personas = [];
    this.scope = { kind: 'document' };
    this.run = null;
    this.runAbort = null;
    this.preview = null;
    this.cleanups = [];
    this.timing = {};
    this.build();
  }

  build() {
    this.button = h('button', { type: 'button', id: 'assist-open', 'aria-expanded': 'false', 'aria-controls': 'assist-panel', onclick: () => this.toggle() }, t('openPanel'));
    this.sessionSelect = h('select', { id: 'assist-session', onchange: () => this.switchTo(this.sessionSelect.value) });
    this.selects = {};
    const choiceRows = KINDS.map((k) => {
      const sel = h('select', { id: `choice-${k.kind}`, 'data-kind': k.kind, onchange: () => this.choose(sel.value ? { kind: k.kind, id: sel.value } : { kind: 'none' }) });
      this.selects[k.kind] = sel;
      return h('div', { class: 'choice-row' }, h('label', { for: sel.id }, t(k.label)), sel);
    });
    this.offlineNote = h('p', { class: 'offline-note', id: 'assist-offline-note', hidden: true }, t('offlineNote'));
    this.choiceDesc = h('p', { class: 'choice-desc muted', id: 'assist-choice-desc' });
    this.messagesList = h('ol', { class: 'assist-messages', id: 'assist-messages', 'aria-live': 'polite' });
    this.runBox = h('div', { class: 'assist-run', id: 'assist-run', hidden: true, role: 'status' });
    this.suggBox = h('div', { class: 'assist-suggestion', id: 'assist-suggestion', hidden: true });
    this.scopeLabel = h('span', { id: 'assist-scope', class: 'scope-chip' });
    this.scopeReset = h('button', { type: 'button', class: 'quiet', id: 'assist-scope-reset', onclick: () => this.setScope({ kind: 'document' }) }, t('scopeReset'));
    this.instruction = h('textarea', { id: 'assist-instruction', rows: '3', placeholder: t('instructionHint') });
    this.error = h('p', { class: 'error', role: 'alert', id: 'assist-error' });
    this.form = h('form', { class: 'assist-form', id: 'assist-form' },
      h('p', { class: 'scope-line' }, h('span', { class: 'muted' }, t('scope') + ': '), this.scopeLabel, ' ', this.scopeReset),
      h('label', { for: 'assist-instruction' }, t('instruction')), this.instruction,
      h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'assist-ask' }, t('ask'))), this.error);
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.ask(this.scope, this.instruction.value.trim());
    });
    this.instruction.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.form.requestSubmit(); }
    });
    this.panel = h('aside', { id: 'assist-panel', class: 'assist-panel', 'aria-labelledby': 'assist-title', hidden: true },
      h('div', { class: 'assist-head' }, h('h2', { id: 'assist-title' }, t('panelTitle')),
        h('button', { type: 'button', class: 'quiet', id: 'assist-close', onclick: () => this.close() }, t('closePanel'))),
      h('section', { class: 'assist-section', 'aria-label': t('session') },
        h('label', { for: 'assist-session' }, t('session')),
        h('div', { class: 'row nowrap' }, this.sessionSelect, h('button', { type: 'button', id: 'assist-new-session', onclick: () => this.newSession() }, t('newSession')))),
      this.suggBox, this.runBox, this.form,
      h('fieldset', { class: 'assist-choice', id: 'assist-choice' }, h('legend', {}, t('personalization')), ...choiceRows,
        h('div', { class: 'row' }, h('button', { type: 'button', id: 'choice-clear', onclick: () => this.choose({ kind: 'none' }) }, t('clearChoice'))),
        this.choiceDesc, this.offlineNote),
      h('section', { class: 'assist-section' }, h('h3', {}, t('conversation')), this.messagesList));
    this.setScope({ kind: 'document' });
  }

  // ---- wiring --------------------------------------------------------

  attach(view, sync) {
    this.view = view;
    this.sync = sync;
    view.editor.registerPlugin(suggestionPlugin());
    const mount = view.editor.view.dom.parentElement;
    this.cleanups.push(blockMenu(view.editor, mount, this));
    this.cleanups.push(selectionToolbar(view.editor, mount, this));
    const refresh = () => { if (document.visibilityState === 'visible') this.load(); };
    document.addEventListener('visibilitychange', refresh);
    this.cleanups.push(() => document.removeEventListener('visibilitychange', refresh));
    window.folioAssist = this;
    this.load();
  }

  destroy() {
    if (this.runAbort) this.runAbort.abort();
    for (const c of this.cleanups) c();
    if (window.folioAssist === this) delete window.folioAssist;
  }

  open(focus) {
    this.panel.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    document.body.classList.add('assist-open');
    if (focus) focus.focus();
  }

  close() {
    this.panel.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
    document.body.classList.remove('assist-open');
    this.button.focus();
  }

  toggle() {
    if (this.panel.hidden) this.open(this.instruction);
    else this.close();
  }

  // ---- sessions and the choice ---------------------------------------

  async load() {
    try {
      const [sessions, presets, personas] = await Promise.all([assistApi.sessions(this.doc), assistApi.presets(), assistApi.personas()]);
      this.sessions = sessions || [];
      this.presets = presets || [];
      this.personas = personas || [];
      const keep = this.session && this.sessions.find((s) => s.id === this.session.id);
      this.session = keep || this.sessions[0] || null;
      this.choice = (this.session && this.session.personalization) || { kind: 'none' };
      this.renderSessions();
      this.renderChoice();
      await this.loadMessages();
      if (!this.preview) await this.resumePending();
      this.panel.dataset.loaded = 'true';
    } catch (e) {
      this.fail(e);
    }
  }

  // resumePending shows the session's newest pending suggestion again
  // (after a reload, or one made in another tab).
  // An outside agent's pending proposal (docs/agents.md) belongs to no
  // session: the newest is shown when the session has none.
  async resumePending() {
    const last = [...(this.messages || [])].reverse().find((m) => m.role === 'assistant' && m.suggestion);
    if (last && last.status === 'pending') { await this.showSuggestion(last.suggestion); return; }
    const pending = (await assistApi.pending(this.doc)) || [];
    const agent = pending.find((s) => s.agent);
    if (agent && !this.preview) await this.showSuggestion(agent.id);
  }

  renderSessions() {
    const sel = this.sessionSelect;
    sel.replaceChildren(...(this.sessions.length ? this.sessions : [null]).map((s) => s
      ? h('option', { value: s.id, selected: this.session && s.id === this.session.id }, `${s.title || t('untitled')} · ${s.messages === 1 ? t('message1') : t('messages', s.messages)}`)
      : h('option', { value: '' }, t('untitled'))));
    sel.disabled = this.sessions.length < 2;
  }

  renderChoice() {
    const c = this.choice || { kind: 'none' };
    let anyOffline = false;
    for (const k of KINDS) {
      const sel = this.selects[k.kind];
      const items = k.kind === 'persona' ? this.personas : this.presets.filter((p) => p.type === (k.kind === 'editing_preset' ? 'editing' : 'writing'));
      sel.replaceChildren(h('option', { value: '' }, t('choose')), ...items.map((p) => {
        const off = p.offline;
        if (off) anyOffline = true;
        const note = off ? ` (${off.edits ? t('editsOffline') : t('needsProvider')})` : '';
        return h('option', { value: p.id, title: p.description || '', 'data-edits': off ? String(off.edits) : 'true' }, p.name + note);
      }));
      sel.value = c.kind === k.kind ? c.id : '';
      sel.disabled = c.kind !== 'none' && c.kind !== k.kind;
    }
    this.panel.dataset.choice = c.kind === 'none' ? 'none' : `${c.kind}:${c.id}`;
    this.offlineNote.hidden = !anyOffline;
    const chosen = this.chosenItem();
    this.choiceDesc.textContent = chosen ? [chosen.description, chosen.offline && !chosen.offline.edits ? chosen.offline.reason : ''].filter(Boolean).join(' — ') : '';
  }

  chosenItem() {
    const c = this.choice;
    if (!c || c.kind === 'none') return null;
    return (c.kind === 'persona' ? this.personas : this.presets).find((p) => p.id === c.id) || null;
  }

  async ensureSession() {
    if (this.session) return this.session;
    this.session = await assistApi.startSession(this.doc);
    this.sessions = [this.session, ...this.sessions];
    this.renderSessions();
    return this.session;
  }

  async choose(choice) {
    this.error.textContent = '';
    const before = this.choice;
    this.choice = choice;
    this.renderChoice();
    try {
      const s = await this.ensureSession();
      this.session = await assistApi.setChoice(s.id, choice);
      this.choice = this.session.personalization || choice;
      this.panel.dataset.choiceSaved = this.panel.dataset.choice;
    } catch (e) {
      this.choice = before;
      this.fail(e);
    }
    this.renderChoice();
  }

  async newSession() {
    try {
      this.session = await assistApi.startSession(this.doc);
      if (this.choice && this.choice.kind !== 'none') this.session = await assistApi.setChoice(this.session.id, this.choice);
      await this.load();
    } catch (e) {
      this.fail(e);
    }
  }

  async switchTo(id) {
    if (!id || (this.session && id === this.session.id)) return;
    try {
      this.session = await assistApi.switchSession(this.doc, id);
      this.clearSuggestion();
      await this.load();
    } catch (e) {
      this.fail(e);
    }
  }

  // ---- the conversation ----------------------------------------------

  async loadMessages() {
    if (!this.session) {
      this.messages = [];
      this.messagesList.replaceChildren(h('li', { class: 'muted' }, t('noMessages')));
      return;
    }
    const [messages, sessions] = await Promise.all([assistApi.messages(this.session.id), assistApi.sessions(this.doc)]);
    this.messages = messages;
    this.sessions = sessions || this.sessions;
    this.renderSessions();
    this.messagesList.replaceChildren(...(this.messages.length ? this.messages.map((m) => this.messageItem(m)) : [h('li', { class: 'muted' }, t('noMessages'))]));
  }

  messageItem(m) {
    const body = h('div', { class: 'source-body' });
    const det = h('details', { class: 'source' }, h('summary', {}, t('sourceToggle') + (m.label ? ` (${m.label})` : '')), body);
    det.addEventListener('toggle', async () => {
      if (!det.open || det.dataset.loaded) return;
      try {
        const full = await assistApi.message(this.session.id, m.seq);
        body.replaceChildren(h('pre', { class: 'source-text' }, full.text));
        det.dataset.loaded = 'true';
      } catch (e) {
        body.replaceChildren(h('p', { class: 'error' }, t('sourceError', e.message)));
      }
    });
    return h('li', { class: `msg msg-${m.role}`, 'data-seq': String(m.seq) },
      h('p', { class: 'msg-who' }, m.role === 'user' ? t('you') : t('assistant'), m.status ? h('span', { class: `badge status-${m.status}` }, m.status) : null),
      h('p', { class: 'msg-text' }, m.text), m.role === 'user' ? det : null);
  }

  // ---- asking ----------------------------------------------------------

  setScope(scope) {
    this.scope = scope;
    const names = { document: 'scopeDocument', block: 'scopeBlock', section: 'scopeSection', selection: 'scopeSelection' };
    this.scopeLabel.textContent = t(names[scope.kind]);
    this.scopeLabel.dataset.scope = scopeString(scope);
    this.scopeReset.hidden = scope.kind === 'document';
  }

  // ask sends a request on scope with the session's choice and follows
  // its run; instruction may be empty with an editing preset.
  async ask(scope, instruction) {
    this.error.textContent = '';
    this.timing = { asked: performance.now() };
    this.open();
    try {
      await this.saved();
      const body = { scope, instruction, idempotencyKey: `web-${crypto.randomUUID()}` };
      const c = this.choice || { kind: 'none' };
      const k = KINDS.find((x) => x.kind === c.kind);
      if (k) body[k.field] = c.id;
      if (this.session) body.session = this.session.id;
      this.clearSuggestion();
      const q = await assistApi.ask(this.doc, body);
      this.session = q.session;
      if (!this.sessions.find((s) => s.id === q.session.id)) this.sessions.unshift(q.session);
      this.renderSessions();
      this.instruction.value = '';
      this.follow(q.run);
      this.loadMessages().catch(() => {});
    } catch (e) {
      this.fail(e);
    }
  }

  // saved waits until this tab's edits are on the server, so the request
  // is made against what the author sees.
  saved() {
    const sync = this.sync;
    if (!sync) return Promise.resolve();
    sync.flush();
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

  follow(run) {
    if (this.runAbort) this.runAbort.abort();
    const abort = new AbortController();
    this.runAbort = abort;
    this.run = run;
    const events = h('ul', { class: 'run-events' });
    const state = h('strong', { class: 'run-state', id: 'assist-run-state' });
    const cancel = h('button', { type: 'button', id: 'assist-cancel', onclick: () => assistApi.cancel(run.id).catch((e) => this.fail(e)) }, t('cancel'));
    const outcome = h('p', { class: 'run-outcome', id: 'assist-run-outcome' });
    this.runBox.replaceChildren(h('div', { class: 'row' }, h('span', {}, t('run') + ': '), state, cancel), events, outcome);
    this.runBox.hidden = false;
    const setState = (s) => {
      this.runBox.dataset.runState = s;
      state.textContent = t(`state_${s}`);
      cancel.hidden = s === 'succeeded' || s === 'failed' || s === 'cancelled';
    };
    setState('queued');
    let progressShown = false;
    const onEvent = (ev) => {
      const d = ev.data || {};
      let line = null;
      switch (ev.type) {
        case 'queued': setState('queued'); line = t('ev_queued'); break;
        case 'started': setState('running'); line = t('ev_started', d.attempt || 1); break;
        case 'progress': setState('running'); if (!progressShown) { progressShown = true; line = t('ev_progress'); } break;
        case 'retry': setState('retrying'); line = t('ev_retry', Math.round((d.delayMs || 0) / 1000), describeError(d.code, d.message)); break;
        case 'recovered_after_restart': setState('queued'); line = t('ev_recovered'); break;
        case 'interrupted': setState('queued'); line = t('ev_interrupted'); break;
        case 'cancel_requested': line = t('ev_cancel_requested'); break;
        case 'succeeded': setState('succeeded'); line = t('ev_succeeded'); break;
        case 'failed': setState('failed'); line = t('ev_failed'); outcome.textContent = t('failedBecause', describeError(d.code, d.message)); break;
        case 'cancelled': setState('cancelled'); line = t('ev_cancelled'); break;
        default: break;
      }
      if (line) events.append(h('li', { 'data-event': ev.type }, line));
    };
    followRun(run.id, onEvent, abort.signal).then(async () => {
      if (abort.signal.aborted) return;
      const r = await assistApi.run(run.id);
      this.run = r;
      if (r.state === 'succeeded' && r.outcome === 'no_change') outcome.textContent = t('noChange', r.summary || '');
      if (r.state === 'failed' && r.error) outcome.textContent = t('failedBecause', describeError(r.error.code, r.error.message));
      if (r.state === 'succeeded' && r.suggestion) await this.showSuggestion(r.suggestion);
      await this.loadMessages();
    }).catch((e) => { if (!abort.signal.aborted) this.fail(e); });
  }

  // ---- the suggestion ----------------------------------------------------

  async showSuggestion(id) {
    const pv = await assistApi.preview(id);
    this.preview = pv;
    this.renderSuggestion();
    if (this.view) setPreview(this.view.editor, ['pending', 'conflicted'].includes(pv.suggestion.status) ? pv : null);
    this.timing.rendered = performance.now();
    this.open();
  }

  clearSuggestion() {
    this.preview = null;
    this.suggBox.hidden = true;
    this.suggBox.replaceChildren();
    if (this.view) setPreview(this.view.editor, null);
  }

  renderSuggestion() {
    const pv = this.preview;
    if (!pv) return;
    const s = pv.suggestion;
    const box = this.suggBox;
    box.dataset.suggestionCard = s.id;
    box.dataset.status = s.status;
    const pers = s.personalization || {};
    const pin = pers.preset ? `${pers.preset.name} v${pers.preset.number}` : pers.persona ? `${pers.persona.name} v${pers.persona.seq}` : '';
    const diff = h('div', { class: 'sugg-diff', id: 'assist-diff' }, ...(pv.changes || []).map((ch) => h('p', { class: `diff-block diff-${ch.kind}`, 'data-block': ch.blockId },
      ...(ch.words || []).map((w) => (w.op === 'equal' ? w.text : h(w.op === 'delete' ? 'del' : 'ins', {}, w.text))))));
    const accept = h('button', { type: 'button', class: 'primary', id: 'assist-accept', onclick: () => this.accept() }, t('accept'));
    const reject = h('button', { type: 'button', id: 'assist-reject', onclick: () => this.reject() }, t('reject'));
    let status = null;
    if (s.status === 'conflicted') status = h('p', { class: 'error', id: 'assist-sugg-status' }, t('conflicted', (s.conflict && s.conflict.reason) || ''));
    if (s.status === 'accepted') status = h('p', { class: 'ok', id: 'assist-sugg-status' }, t('accepted', s.version || ''));
    if (s.status === 'rejected') status = h('p', { class: 'muted', id: 'assist-sugg-status' }, t('rejected'));
    accept.disabled = s.status !== 'pending';
    reject.disabled = s.status !== 'pending';
    box.replaceChildren(...[
      h('h3', {}, t('suggestion'), s.status === 'conflicted' ? h('span', { class: 'badge status-conflicted' }, t('conflictedShort')) : null),
      h('p', { class: 'sugg-summary', id: 'assist-summary' }, s.summary || ''),
      pin ? h('p', { class: 'muted sugg-pin', id: 'assist-pin' }, t('pinned', pin)) : null,
      s.agent ? h('p', { class: 'sugg-agent', id: 'assist-agent', title: t('agentOf', s.agent.token || '', s.agent.user || '') }, t('proposedByAgent', agentName(s.agent))) : null,
      diff, status,
      s.status === 'pending' || s.status === 'conflicted' ? h('div', { class: 'row' }, accept, reject) : null].filter(Boolean));
    box.hidden = false;
  }

  async accept() {
    const s = this.preview && this.preview.suggestion;
    if (!s || s.status !== 'pending') return;
    if (s.deletes && !confirm(t('confirmDelete'))) return;
    try {
      const res = await assistApi.accept(s.id, !!s.deletes);
      this.decided(res.suggestion);
    } catch (e) {
      if (e.code === 'suggestion_conflicted') {
        const fresh = await assistApi.suggestion(s.id).catch(() => ({ ...s, status: 'conflicted' }));
        this.markConflicted(fresh);
      } else this.fail(e);
    }
  }

  async reject() {
    const s = this.preview && this.preview.suggestion;
    if (!s || s.status !== 'pending') return;
    try {
      const res = await assistApi.reject(s.id);
      this.decided(res);
    } catch (e) {
      this.fail(e);
    }
  }

  decided(sugg) {
    this.preview = { ...this.preview, suggestion: sugg };
    if (this.view) setPreview(this.view.editor, null);
    this.renderSuggestion();
    this.loadMessages().catch(() => {});
  }

  markConflicted(sugg) {
    this.preview = { ...this.preview, suggestion: { ...sugg, status: 'conflicted' } };
    if (this.view) setPreview(this.view.editor, this.preview);
    this.renderSuggestion();
  }

  // onEvent takes the document's events (the editor screen passes them).
  onEvent(m) {
    const d = m.data || {};
    const cur = this.preview && this.preview.suggestion;
    switch (m.type) {
      case 'suggestion.created':
        // An agent's proposal arrives while the author has the document
        // open: shown unless a pending suggestion is on the card already.
        if (d.agent && (!cur || cur.status !== 'pending')) this.showSuggestion(d.id).catch((e) => this.fail(e));
        break;
      case 'suggestion.conflicted':
        if (cur && cur.id === d.id) this.markConflicted({ ...cur, conflict: { reason: d.reason, blocks: d.blocks, by: d.by } });
        break;
      case 'suggestion.accepted':
        if (cur && cur.id === d.id && cur.status !== 'accepted') this.decided({ ...cur, status: 'accepted', version: d.version });
        break;
      case 'suggestion.rejected':
        if (cur && cur.id === d.id && cur.status !== 'rejected') this.decided({ ...cur, status: 'rejected' });
        break;
      default:
    }
  }

  fail(e) {
    this.error.textContent = (e && e.message) || String(e);
    this.open();
  }
}

// agentName is how a card names an outside agent: its client's name and
// version (from the MCP handshake or the X-Folio-Agent header).
function agentName(a) {
  return [a.client || t('unnamedAgent'), a.clientVersion].filter(Boolean).join(' ');
}

// scopeString is a scope as the tests and the docs write it: document,
// block:ID, section:ID..ID, selection:ID:FROM:TO.
export function scopeString(s) {
  switch (s.kind) {
    case 'block': return `block:${s.block}`;
    case 'section': return `section:${s.from}..${s.to}`;
    case 'selection': return `selection:${s.block}:${s.start}:${s.end}`;
    default: return 'document';
  }
}

// describeError names a run's failure in words: the known codes in the
// UI's language, the server's message beside them.
function describeError(code, message) {
  const known = {
    writing_token_budget_exhausted: 'err_quota', writing_rate_limited: 'err_quota', provider_rate_limited: 'err_quota',
    provider_unreachable: 'err_unreachable', provider_timeout: 'err_unreachable', provider_unavailable: 'err_unreachable',
    grounding_failed: 'err_grounding', provider_unauthorized: 'err_unauthorized', output_invalid: 'err_invalid', output_not_json: 'err_invalid',
  };
  const words = known[code] ? t(known[code]) : '';
  return [words, message].filter(Boolean).join(' — ') || code || '';
}
