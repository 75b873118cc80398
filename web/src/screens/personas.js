// The persona screens (docs/api.md, "Personas"): /personas lists and
// creates the author's personas from their published articles;
// /personas/:id shows one: its sources with what a generation would
// refuse or leave out of memory (and the switch that would allow it),
// generation with its job's progress, the version history, and for the
// version shown its style profile (each claim's evidence opens the span
// in the source version), learning rules and memory.
import { api } from '../api.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { topBar } from './shell.js';
import { whoami } from './nav.js';
import './site-words.js';

// myDocs is the caller's own documents (an admin's list holds everyone's).
async function myDocs() {
  const [docs, me] = await Promise.all([api('GET', '/v1/docs'), whoami()]);
  return docs.filter((d) => !d.owner || d.owner === me.userId);
}

function problem(err) { return err && err.message ? err.message : String(err); }

// sourcePicker is a fieldset of checkboxes, one per published document of
// the caller (unpublished ones listed, disabled, saying so).
function sourcePicker(docs, chosen) {
  const pub = docs.filter((d) => d.published);
  const fs = h('fieldset', { class: 'source-pick', id: 'source-pick' }, h('legend', {}, t('sourcesPick')));
  if (!pub.length) fs.append(h('p', { class: 'muted' }, t('noPublished')));
  for (const d of docs) {
    const id = `src-${d.id}`;
    const box = h('input', { type: 'checkbox', id, value: d.id, disabled: !d.published, checked: chosen.has(d.id) });
    fs.append(h('div', { class: 'check' }, box,
      h('label', { for: id }, d.title || 'Untitled',
        h('span', { class: 'muted' }, d.published ? ` · ${d.published}${d.visibility && d.visibility !== 'public' ? ` · ${d.visibility}` : ''}` : ` · ${t('notPublished')}`))));
  }
  fs.value = () => [...fs.querySelectorAll('input:checked')].map((i) => i.value);
  return fs;
}

export async function personaList({ root, go }) {
  document.title = `${t('personasTitle')} · Folio`;
  const list = h('ul', { class: 'doc-list', id: 'persona-list' });
  const err = h('p', { class: 'error', role: 'alert', id: 'persona-error' });
  const main = h('main', { class: 'page', id: 'main' },
    h('div', { class: 'page-head' }, h('h1', {}, t('personasTitle'))),
    h('p', { class: 'muted' }, t('personasIntro')), list);
  root.append(topBar(go), main);
  const [personas, docs] = await Promise.all([api('GET', '/v1/personas').catch((e) => { err.textContent = problem(e); return []; }), myDocs()]);
  if (!personas.length) list.append(h('li', { class: 'empty muted' }, t('noPersonas')));
  for (const p of personas) {
    list.append(h('li', {}, h('a', { href: `/personas/${p.id}`, 'data-route': '', class: 'doc-link persona-link' },
      h('span', { class: 'doc-title' }, p.name),
      h('span', { class: 'doc-meta' },
        h('span', { class: 'badge' }, p.active ? t('activeVersion', p.active) : t('noActive')),
        h('span', {}, t('versionsCount', p.versions || 0)),
        p.offline && !p.offline.edits ? h('span', { class: 'muted' }, p.offline.reason) : null))));
  }
  const name = h('input', { id: 'persona-name', required: true, maxlength: 100 });
  const pick = sourcePicker(docs, new Set());
  const form = h('form', { class: 'persona-form', id: 'persona-create', 'aria-labelledby': 'new-persona-title' },
    h('h2', { id: 'new-persona-title' }, t('newPersona')),
    h('label', { for: 'persona-name' }, t('personaName')), name, pick, err,
    h('button', { type: 'submit', class: 'primary', id: 'create-persona' }, t('createPersona')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    err.textContent = '';
    try {
      const p = await api('POST', '/v1/personas', { name: name.value.trim(), sources: pick.value() });
      go(`/personas/${p.id}`);
    } catch (e2) { err.textContent = problem(e2); (e2.code === 'invalid' && !name.value.trim() ? name : pick.querySelector('input:not([disabled])') || name).focus(); }
  });
  main.append(form);
}

export async function personaScreen({ params, root, go }) {
  const id = params.id;
  let alive = true;
  const head = h('h1', { id: 'persona-title', tabindex: '-1' }, t('loading'));
  const active = h('p', { class: 'muted', id: 'persona-active' });
  const err = h('p', { class: 'error', role: 'alert', id: 'persona-error' });
  const sources = h('section', { class: 'card', id: 'persona-sources', 'aria-labelledby': 'sources-title' });
  const gen = h('section', { class: 'card', id: 'persona-generate', 'aria-label': t('generate') });
  const versions = h('section', { class: 'card', id: 'persona-versions', 'aria-labelledby': 'versions-title' });
  const style = h('section', { class: 'card', id: 'persona-style', 'aria-labelledby': 'style-title' });
  const learning = h('section', { class: 'card', id: 'persona-learning', 'aria-labelledby': 'learning-title' });
  const memory = h('section', { class: 'card', id: 'persona-memory', 'aria-labelledby': 'memory-title' });
  const evidence = h('section', { class: 'card evidence-view', id: 'evidence-view', 'aria-labelledby': 'evidence-title', hidden: true });
  const main = h('main', { class: 'page persona-page', id: 'main' },
    h('p', {}, h('a', { href: '/personas', 'data-route': '' }, `← ${t('personasTitle')}`)),
    head, active, err, sources, gen, versions, evidence, style, learning, memory);
  root.append(topBar(go), main);

  let persona, docs, shown = 0;
  const titles = new Map();

  async function load() {
    [persona, docs] = await Promise.all([api('GET', `/v1/personas/${id}`), myDocs()]);
    for (const d of docs) titles.set(d.id, d.title || 'Untitled');
    document.title = `${persona.name} · ${t('personasTitle')} · Folio`;
    head.textContent = persona.name;
    active.textContent = persona.active ? t('activeVersion', persona.active) : t('noActive');
    shown = persona.active;
    await Promise.all([renderSources(), renderVersions(), renderVersion()]);
  }

  async function renderSources() {
    const list = await api('GET', `/v1/personas/${id}/sources`);
    const ul = h('ul', { class: 'source-list', id: 'source-status' });
    for (const s of list) {
      const li = h('li', { 'data-doc': s.doc, class: s.refused ? 'refused' : '' },
        h('strong', {}, titles.get(s.doc) || s.doc),
        h('span', { class: 'muted' }, s.error ? ` · ${t('sourceMissing')}` : s.published ? ` · ${s.label} · ${s.visibility || 'public'}` : ` · ${t('notPublished')}`),
        s.pinned ? h('span', { class: 'badge' }, t('pinnedAs', s.pinned)) : null,
        s.pinned && s.memory ? h('span', { class: 'badge' }, t('pinnedMemory')) : null);
      if (s.refused) {
        li.append(h('p', { class: 'error source-refused', 'data-code': s.refused.code }, t('refused', s.refused.message)));
        if (s.refused.switch) li.append(h('p', { class: 'hint' }, t('refusedSwitch', s.refused.switch)));
      }
      if (s.noMemory) {
        li.append(h('p', { class: 'warn source-nomemory', 'data-code': s.noMemory.code }, t('noMemory', s.noMemory.message)));
        if (s.noMemory.switch) li.append(h('p', { class: 'hint' }, t('memorySwitch', s.noMemory.switch)));
      }
      ul.append(li);
    }
    const pick = sourcePicker(docs, new Set(persona.sources));
    const note = h('p', { role: 'status', class: 'muted', id: 'sources-note' });
    const save = h('button', { type: 'button', id: 'save-sources', onclick: async () => {
      err.textContent = '';
      try {
        persona = await api('PUT', `/v1/personas/${id}/sources`, { sources: pick.value() });
        await renderSources();
        document.getElementById('sources-note').textContent = t('sourcesSaved');
        document.getElementById('save-sources').focus();
      } catch (e) { err.textContent = problem(e); }
    } }, t('saveSources'));
    sources.replaceChildren(h('h2', { id: 'sources-title' }, t('sourcesTitle')), ul,
      h('details', {}, h('summary', {}, t('saveSources')), pick, save), note);
    renderGenerate();
  }

  function renderGenerate(status) {
    const state = status || h('div', { role: 'status', id: 'job-status', class: 'job-status' });
    gen.replaceChildren(h('button', { type: 'button', class: 'primary', id: 'generate', onclick: generate }, t('generate')), state);
  }

  async function generate() {
    err.textContent = '';
    const status = document.getElementById('job-status');
    let job;
    try { job = await api('POST', `/v1/personas/${id}/generate`); } catch (e) { status.textContent = t('job_failed', problem(e)); return; }
    const show = (j) => {
      status.dataset.state = j.state;
      const words = j.state === 'succeeded' ? t('job_succeeded', j.version) : j.state === 'failed' ? t('job_failed', j.error ? j.error.message : '') : t(`job_${j.state}`) || j.state;
      status.replaceChildren(h('strong', {}, words), j.attempts ? h('span', { class: 'muted' }, ` · ${t('attempt', j.attempts)}`) : null);
      if (j.error) status.dataset.code = j.error.code;
    };
    show(job);
    while (alive && !['succeeded', 'failed', 'cancelled'].includes(job.state)) {
      job = await api('GET', `/v1/personas/${id}/jobs/${job.task}?wait=2`);
      if (alive) show(job);
    }
    if (alive && job.state === 'succeeded') {
      const keep = document.getElementById('job-status');
      persona = await api('GET', `/v1/personas/${id}`);
      active.textContent = t('activeVersion', persona.active);
      shown = persona.active;
      await Promise.all([renderSources(), renderVersions(), renderVersion()]);
      renderGenerate(keep);
    }
  }

  async function renderVersions() {
    const vs = await api('GET', `/v1/personas/${id}/versions`);
    const ol = h('ol', { class: 'version-list', id: 'persona-version-list', reversed: true });
    for (const v of [...vs].reverse()) {
      const isActive = v.seq === persona.active;
      ol.append(h('li', { 'data-seq': v.seq, class: v.seq === shown ? 'current' : '' },
        h('strong', {}, `v${v.seq}`), isActive ? h('span', { class: 'badge published', 'data-active': '' }, t('versionActive')) : null,
        h('time', { class: 'muted', datetime: new Date(v.created).toISOString() }, ` ${new Date(v.created).toLocaleString()}`),
        h('span', { class: 'muted' }, ` · ${(v.sources || []).map((s) => `${titles.get(s.pin.doc) || s.pin.doc} ${s.pin.label}`).join(', ')}`),
        ...(v.notes || []).map((n) => h('p', { class: 'hint' }, n)),
        h('button', { type: 'button', class: 'small', 'data-view': v.seq, 'aria-pressed': String(v.seq === shown),
          onclick: async () => { shown = v.seq; await Promise.all([renderVersions(), renderVersion()]); document.getElementById('style-title').focus(); } }, t('viewVersion', v.seq)),
        isActive ? null : h('button', { type: 'button', class: 'small', 'data-activate': v.seq,
          onclick: async () => {
            persona = await api('POST', `/v1/personas/${id}/activate`, { version: v.seq });
            active.textContent = t('activeVersion', persona.active);
            shown = persona.active;
            await Promise.all([renderSources(), renderVersions(), renderVersion()]);
            document.querySelector(`#persona-version-list li[data-seq="${v.seq}"] [data-view]`)?.focus();
          } }, t('activateVersion', v.seq))));
    }
    versions.replaceChildren(h('h2', { id: 'versions-title' }, t('versionsTitle')), ol, h('p', { class: 'hint' }, t('activationNote')));
  }

  // showEvidence opens the span of an evidence record in its source
  // version, marked.
  async function showEvidence(ev) {
    evidence.hidden = false;
    const title = h('h2', { id: 'evidence-title', tabindex: '-1' }, t('evidenceTitle'));
    const content = h('div', {}, h('p', {}, t('loading')));
    evidence.replaceChildren(title, content);
    title.focus();
    try {
      const v = await api('GET', `/v1/docs/${ev.doc}/versions/${encodeURIComponent(ev.label)}`);
      const block = (v.body.blocks || []).find((b) => b.id === ev.block);
      const text = block ? (block.richText || []).map((r) => r.text).join('') : '';
      const cps = [...text];
      const body = block && ev.span && ev.span.end <= cps.length
        ? h('blockquote', { class: 'evidence-text', 'data-doc': ev.doc, 'data-block': ev.block },
          cps.slice(0, ev.span.start).join(''), h('mark', {}, cps.slice(ev.span.start, ev.span.end).join('')), cps.slice(ev.span.end).join(''))
        : h('p', { class: 'error' }, t('evidenceChanged'));
      content.replaceChildren(h('p', { class: 'muted' }, t('evidenceIn', v.attrs.title || ev.doc, ev.label, ev.block)), body);
    } catch (e) { content.replaceChildren(h('p', { class: 'error' }, t('error', problem(e)))); }
  }

  const evLinks = (list) => (list || []).slice(0, 5).map((ev) => !ev.block
    ? h('span', { class: 'hint' }, t('evidenceWhole', titles.get(ev.doc) || ev.doc, ev.label))
    : h('button', { type: 'button', class: 'link evidence-link', 'data-doc': ev.doc, 'data-block': ev.block,
    onclick: () => showEvidence(ev) }, t('evidenceIn', titles.get(ev.doc) || ev.doc, ev.label, ev.block)));

  async function renderVersion() {
    if (!persona.active) {
      for (const s of [style, learning, memory]) s.replaceChildren();
      return;
    }
    const q = `version=${shown}`;
    const [st, le] = await Promise.all([api('GET', `/v1/personas/${id}/style?${q}`), api('GET', `/v1/personas/${id}/learning?${q}`)]);
    const p = st.profile;
    style.replaceChildren(...[h('h2', { id: 'style-title', tabindex: '-1' }, `${t('styleTitle')} · v${shown}`),
      h('p', { class: 'style-summary' }, p.summary),
      h('h3', {}, t('rules')),
      h('ul', { class: 'claims', id: 'style-rules' }, ...(p.rules || []).map((r) => h('li', { 'data-rule': r.id },
        h('span', {}, r.statement), h('span', { class: 'muted' }, ` · ${r.dimension} · ${t('weight', r.weight.toFixed(2))}`),
        h('div', { class: 'row evidence-row' }, ...evLinks(r.evidence))))),
      p.patterns && p.patterns.length ? [h('h3', {}, t('patterns')),
        h('ul', { class: 'claims', id: 'style-patterns' }, ...p.patterns.map((pt) => h('li', {}, h('q', {}, pt.text),
          h('span', { class: 'muted' }, ` · ${pt.kind} · ×${pt.count}`), h('div', { class: 'row evidence-row' }, ...evLinks(pt.evidence)))))] : null,
      p.uncertainties && p.uncertainties.length ? [h('h3', {}, t('uncertainties')),
        h('ul', {}, ...p.uncertainties.map((u) => h('li', {}, `${u.topic}: ${u.reason || u.why || ''}`)))] : null,
      h('details', {}, h('summary', {}, t('dimensions')),
        h('dl', { class: 'explain-list' }, ...(p.dimensions || []).flatMap((d) => (d.features || []).map((f) => [h('dt', {}, `${d.name} · ${f.name}`), h('dd', {}, f.label || `${+f.value.toFixed(3)} ${f.unit || ''}`)]))))].flat().filter(Boolean));

    const snap = le.snapshot;
    learning.replaceChildren(h('h2', { id: 'learning-title' }, t('learningTitle')));
    if (!snap) learning.append(h('p', { class: 'muted' }, t('learningOff')));
    else {
      learning.append(h('p', { class: 'muted' }, t('observations', snap.observations, snap.manualEdits)));
      if (!(snap.rules || []).length) learning.append(h('p', { class: 'muted', id: 'no-rules' }, t('noRules')));
      else learning.append(h('ul', { class: 'claims', id: 'learning-rules' }, ...snap.rules.map((r) => h('li', { 'data-rule': r.id },
        h('span', {}, r.statement),
        h('span', { class: 'muted' }, ` · ${t('ruleCounts', r.positive, r.negative, r.manual)} · ${t('confidence', r.confidence.toFixed(2))} · `),
        h('span', { class: r.active ? 'badge published' : 'badge' }, r.active ? t('ruleActive') : t('ruleInactive'))))));
    }
    await renderMemory('');
  }

  async function renderMemory(query) {
    const m = await api('GET', `/v1/personas/${id}/memory?version=${shown}${query ? `&query=${encodeURIComponent(query)}` : ''}`);
    const input = h('input', { type: 'search', id: 'memory-query', value: query, 'aria-label': t('memorySearch') });
    const form = h('form', { class: 'row', role: 'search', id: 'memory-search' }, input, h('button', { type: 'submit' }, t('search')));
    form.addEventListener('submit', async (e) => { e.preventDefault(); await renderMemory(input.value.trim()); document.getElementById('memory-query').focus(); });
    const count = h('p', { class: 'muted', role: 'status', id: 'memory-count' }, !m.snapshot ? t('memoryOff') : query ? t('memoryMatched', m.items.length) : t('memoryTotal', m.total));
    const ul = h('ul', { class: 'claims', id: 'memory-items' }, ...m.items.map((it) => h('li', { 'data-key': it.key },
      h('span', {}, it.statement),
      h('div', { class: 'row muted' }, h('span', { class: 'badge' }, it.type), h('span', {}, t('sensitivity', it.sensitivity)), h('span', {}, t('status', it.status)),
        h('span', {}, t('confidence', (it.confidence || 0).toFixed(2)))),
      h('div', { class: 'row evidence-row' }, ...evLinks(it.evidence)))));
    if (m.snapshot && !m.items.length) ul.append(h('li', { class: 'muted' }, t('noItems')));
    memory.replaceChildren(h('h2', { id: 'memory-title' }, t('memoryTitle')), form, count, ul);
  }

  try { await load(); } catch (e) { head.textContent = t('personasTitle'); err.textContent = t('error', problem(e)); }
  return () => { alive = false; };
}
