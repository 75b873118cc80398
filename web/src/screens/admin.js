// The admin screens (admins only: the link is shown only to admins and
// every endpoint here answers 403 to anyone else): users and tokens
// (tokens shown once), writing and editing presets (create, edit as a new
// version, copy, reorder, archive, restore), categories, the usage meters
// with their health and settings sources, the memory index, and the tags
// with their article counts (described, created, an unused one deleted;
// the API renames and merges nothing, since published versions name their
// tags, and the screen says so).
import { api } from '../api.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { topBar } from './shell.js';
import { whoami } from './nav.js';
import './site-words.js';

const TABS = [['users', 'tabUsers'], ['presets', 'tabPresets'], ['categories', 'tabCategories'], ['tags', 'tabTags'], ['usage', 'tabUsage'], ['index', 'tabIndex']];

function problem(err) { return err && err.message ? err.message : String(err); }
const when = (ms) => new Date(ms).toLocaleString();

export async function adminScreen({ params, root, go }) {
  const tab = params.tab || 'users';
  document.title = `${t('adminTitle')} · Folio`;
  const main = h('main', { class: 'page admin-page', id: 'main' });
  root.append(topBar(go), main);
  const me = await whoami().catch(() => null);
  if (!me || !me.admin) {
    main.append(h('h1', {}, t('adminTitle')), h('p', { id: 'admin-refused' }, t('adminOnly')));
    return;
  }
  const err = h('p', { class: 'error', role: 'alert', id: 'admin-error' });
  const body = h('div', { id: 'admin-body' });
  main.append(h('h1', {}, t('adminTitle')),
    h('nav', { class: 'tabs', 'aria-label': t('adminTitle') }, ...TABS.map(([k, w]) =>
      h('a', { href: `/admin/${k}`, 'data-route': '', class: 'tab', id: `tab-${k}`, 'aria-current': k === tab ? 'page' : undefined }, t(w)))),
    err, body);
  const fail = (e) => { err.textContent = problem(e); };
  const screens = { users, presets, categories, tags, usage, index };
  try { await (screens[tab] || users)(body, fail); } catch (e) { fail(e); }
}

// field is a labelled input.
function field(id, label, props = {}) {
  const input = h(props.multiline ? 'textarea' : 'input', { id, ...props, multiline: undefined });
  return [h('label', { for: id }, label), input];
}

async function users(body, fail) {
  const once = h('div', { id: 'token-once', role: 'status' });
  const showToken = (token, who) => {
    const code = h('code', { id: 'shown-token', tabindex: '0' }, token);
    once.replaceChildren(h('div', { class: 'card shown-once' },
      h('p', {}, h('strong', {}, t('shownOnce')), ` (${who})`), code,
      h('button', { type: 'button', id: 'dismiss-token', onclick: () => { once.replaceChildren(); document.getElementById('issue-token').focus(); } }, t('dismiss'))));
    code.focus();
  };
  const render = async () => {
    const [us, toks] = await Promise.all([api('GET', '/v1/users'), api('GET', '/v1/tokens')]);
    const [nameL, name] = field('new-user', t('userName'), { required: true, pattern: '[a-z0-9][a-z0-9._-]*', maxlength: 64 });
    const admin = h('input', { type: 'checkbox', id: 'new-user-admin' });
    const create = h('form', { class: 'row admin-form', id: 'user-create' }, nameL, name, admin, h('label', { for: 'new-user-admin' }, t('makeAdmin')),
      h('button', { type: 'submit', class: 'primary' }, t('createUser')));
    create.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const r = await api('POST', '/v1/users', { name: name.value.trim(), admin: admin.checked || undefined });
        await render();
        showToken(r.token, r.user);
      } catch (e2) { fail(e2); name.focus(); }
    });
    const userSel = h('select', { id: 'token-user' }, ...us.map((u) => h('option', { value: u.name }, u.name)));
    const kind = h('select', { id: 'token-kind' }, h('option', { value: 'full' }, t('kindFull')), h('option', { value: 'backup' }, t('kindBackup')));
    const issue = h('form', { class: 'row admin-form', id: 'token-issue' }, h('label', { for: 'token-user' }, t('tokenUser')), userSel,
      h('label', { for: 'token-kind' }, t('tokenKind')), kind, h('button', { type: 'submit', id: 'issue-token' }, t('issueToken')));
    issue.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const r = await api('POST', '/v1/tokens', { user: userSel.value, kind: kind.value });
        await render();
        showToken(r.token, `${r.user} · ${r.tokenInfo.kind}`);
      } catch (e2) { fail(e2); }
    });
    body.replaceChildren(once,
      h('section', { class: 'card', 'aria-labelledby': 'users-title' }, h('h2', { id: 'users-title' }, t('users')),
        h('table', { class: 'admin-table', id: 'user-table' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('userName')), h('th', { scope: 'col' }, t('colRole')), h('th', { scope: 'col' }, t('colCreated')), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('colActions'))))),
          h('tbody', {}, ...us.map((u) => h('tr', { 'data-user': u.name }, h('td', {}, u.name), h('td', {}, u.role), h('td', {}, when(u.created)),
            h('td', {}, h('button', { type: 'button', class: 'small danger', 'aria-label': t('deleteUser', u.name), onclick: async () => {
              if (!confirm(t('confirmDeleteUser', u.name))) return;
              try { await api('DELETE', `/v1/users/${encodeURIComponent(u.name)}`); await render(); } catch (e) { fail(e); }
            } }, '×')))))),
        create),
      h('section', { class: 'card', 'aria-labelledby': 'tokens-title' }, h('h2', { id: 'tokens-title' }, t('tokens')),
        h('table', { class: 'admin-table', id: 'token-table' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('colId')), h('th', { scope: 'col' }, t('tokenUser')), h('th', { scope: 'col' }, t('tokenKind')), h('th', { scope: 'col' }, t('colCreated')), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('colActions'))))),
          h('tbody', {}, ...toks.map((k) => h('tr', { 'data-token': k.id }, h('td', {}, h('code', {}, k.id)), h('td', {}, k.user), h('td', {}, k.kind), h('td', {}, when(k.created)),
            h('td', {}, h('button', { type: 'button', class: 'small', 'aria-label': t('revoke', k.id), onclick: async () => {
              try { await api('DELETE', `/v1/tokens/${k.id}`); await render(); } catch (e) { fail(e); }
            } }, t('revoke', '').trim())))))),
        issue));
  };
  await render();
}

async function presets(body, fail) {
  let showArchived = false;
  const note = h('p', { role: 'status', id: 'preset-note', class: 'muted' });
  const render = async (focusSel) => {
    const [live, arch] = await Promise.all([api('GET', '/v1/presets'), showArchived ? api('GET', '/v1/presets?archived=true') : []]);
    const byId = new Map();
    for (const p of [...live, ...arch]) byId.set(p.id, p);
    const all = [...byId.values()];
    const toggle = h('input', { type: 'checkbox', id: 'show-archived', checked: showArchived, onchange: async (e) => { showArchived = e.target.checked; await render('#show-archived'); } });
    const sections = ['writing', 'editing'].map((type) => {
      const list = all.filter((p) => p.type === type).sort((a, b) => (!!a.archived - !!b.archived) || a.order - b.order);
      const order = list.filter((p) => !p.archived).map((p) => p.id);
      const move = async (id, delta) => {
        const i = order.indexOf(id), j = i + delta;
        if (j < 0 || j >= order.length) return;
        [order[i], order[j]] = [order[j], order[i]];
        try { await api('POST', '/v1/admin/presets/order', { type, ids: order }); await render(`[data-preset="${id}"] [data-move="${delta}"]`); } catch (e) { fail(e); }
      };
      const act = (label, fn, extra = {}) => h('button', { type: 'button', class: 'small', ...extra, onclick: async () => { try { await fn(); } catch (e) { fail(e); } } }, label);
      const items = list.map((p) => h('li', { 'data-preset': p.id, class: p.archived ? 'archived' : '' },
        h('div', {}, h('strong', {}, p.name), ' ', h('span', { class: 'badge', 'data-version': p.version.number }, t('presetVersion', p.version.number)),
          p.builtin ? h('span', { class: 'badge' }, t('builtin')) : null, p.archived ? h('span', { class: 'badge' }, t('archived')) : null),
        h('p', { class: 'muted preset-desc' }, p.description),
        h('div', { class: 'row' },
          p.archived ? null : act('↑', () => move(p.id, -1), { 'aria-label': t('moveUp', p.name), 'data-move': '-1' }),
          p.archived ? null : act('↓', () => move(p.id, 1), { 'aria-label': t('moveDown', p.name), 'data-move': '1' }),
          act(t('editPreset', '').trim(), () => edit(p), { 'aria-label': t('editPreset', p.name), 'data-edit': p.id }),
          act(t('copyPreset', '').trim(), async () => { const c = await api('POST', `/v1/admin/presets/${p.id}/copy`, {}); note.textContent = `${c.name} ✓`; await render(`[data-preset="${c.id}"] [data-edit]`); }, { 'aria-label': t('copyPreset', p.name) }),
          p.archived
            ? act(t('restore', '').trim(), async () => { await api('POST', `/v1/admin/presets/${p.id}/restore`); await render(`[data-preset="${p.id}"] [data-edit]`); }, { 'aria-label': t('restore', p.name), 'data-restore': p.id })
            : act(t('archive', '').trim(), async () => { await api('POST', `/v1/admin/presets/${p.id}/archive`); await render('#show-archived'); }, { 'aria-label': t('archive', p.name), 'data-archive': p.id })),
        h('div', { class: 'preset-edit', id: `edit-${p.id}` })));
      const [nL, n] = field(`new-${type}-name`, t('presetName'), { required: true });
      const [dL, d] = field(`new-${type}-desc`, t('presetDesc'));
      const [pL, pr] = field(`new-${type}-prompt`, t('presetPrompt'), { multiline: true, rows: 3, required: true });
      const form = h('form', { class: 'admin-form', id: `new-${type}` }, nL, n, dL, d, pL, pr, h('button', { type: 'submit', class: 'primary' }, t('createPreset')));
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        try { const c = await api('POST', '/v1/admin/presets', { type, name: n.value.trim(), description: d.value.trim(), prompt: pr.value }); await render(`[data-preset="${c.id}"] [data-edit]`); } catch (e2) { fail(e2); }
      });
      const title = type === 'writing' ? t('presetsWriting') : t('presetsEditing');
      return h('section', { class: 'card', id: `presets-${type}`, 'aria-labelledby': `presets-${type}-title` }, h('h2', { id: `presets-${type}-title` }, title),
        h('ol', { class: 'preset-list' }, ...items),
        h('details', {}, h('summary', {}, t('newPreset')), form));
    });
    body.replaceChildren(h('div', { class: 'row' }, toggle, h('label', { for: 'show-archived' }, t('showArchived'))), note, ...sections);
    if (focusSel) { const el = body.querySelector(focusSel); if (el) el.focus(); }
  };
  async function edit(p) {
    const full = await api('GET', `/v1/admin/presets/${p.id}`);
    const slot = document.getElementById(`edit-${p.id}`);
    const cur = full.current || {};
    const [nL, n] = field(`edit-${p.id}-name`, t('presetName'), { value: full.preset.name });
    const [dL, d] = field(`edit-${p.id}-desc`, t('presetDesc'), { value: full.preset.description || '' });
    const [pL, pr] = field(`edit-${p.id}-prompt`, t('presetPrompt'), { multiline: true, rows: 5 });
    pr.value = cur.prompt || '';
    const next = (full.versions || []).length + 1;
    const rules = rowsEditor(`edit-${p.id}-rules`, t('presetRulesTitle'), t('ruleN'), t('addRule'), t('removeRule'),
      [['name', t('ruleName')], ['instruction', t('ruleInstruction'), true]], cur.rules || [], ['id']);
    const sources = rowsEditor(`edit-${p.id}-sources`, t('presetSourcesTitle'), t('sourceN'), t('addSource'), t('removeSource'),
      [['title', t('sourceTitle')], ['author', t('sourceAuthor')], ['year', t('sourceYear')], ['note', t('sourceNote')]], cur.sources || [], []);
    const form = h('form', { class: 'admin-form' }, nL, n, dL, d, pL, pr, rules.el, sources.el,
      h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: `save-${p.id}` }, t('saveVersion', next)),
        h('button', { type: 'button', onclick: () => { slot.replaceChildren(); body.querySelector(`[data-edit="${p.id}"]`).focus(); } }, t('cancelEdit'))),
      h('ol', { class: 'hint' }, ...(full.versions || []).map((v) => h('li', {}, `v${v.number} · ${v.author} · ${when(v.time)}`))));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const change = {};
      if (n.value.trim() !== full.preset.name) change.name = n.value.trim();
      if (d.value.trim() !== (full.preset.description || '')) change.description = d.value.trim();
      if (pr.value !== (cur.prompt || '')) change.prompt = pr.value;
      const rs = rules.value().filter((r) => r.name || r.instruction);
      if (JSON.stringify(rs) !== JSON.stringify(rules.initial)) change.rules = rs;
      const ss = sources.value().filter((x) => x.title);
      if (JSON.stringify(ss) !== JSON.stringify(sources.initial)) change.sources = ss;
      try {
        const r = await api('POST', `/v1/admin/presets/${p.id}/versions`, change);
        await render(`[data-preset="${p.id}"] [data-edit]`);
        document.getElementById('preset-note').textContent = t('presetSaved', r.name, r.version.number);
      } catch (e2) { fail(e2); }
    });
    slot.replaceChildren(form);
    n.focus();
  }
  await render();
}

// rowsEditor edits a list of records (a preset's rules, its sources):
// one fieldset per record with a labelled input per column, Add and
// Remove buttons. keep are fields carried through unedited (a rule's id,
// which names the local engine's implementation). value() reads the rows
// as records with every column (and kept field) present; initial is the
// starting list in the same shape, to compare with.
function rowsEditor(id, title, rowTitle, addLabel, removeLabel, cols, start, keep) {
  const list = h('ol', { class: 'rows-editor', id });
  const norm = (r) => Object.fromEntries([...keep.filter((k) => r[k]).map((k) => [k, r[k]]), ...cols.map(([k]) => [k, (r[k] || '').trim()])]);
  let seq = 0;
  const add = (r) => {
    const n = ++seq;
    const inputs = cols.map(([k, label, multi]) => field(`${id}-${n}-${k}`, label, { multiline: multi, rows: multi ? 2 : undefined, value: r[k] || '', 'data-col': k }));
    const li = h('li', { 'data-row': String(n) },
      h('fieldset', {}, h('legend', {}, `${rowTitle} ${list.children.length + 1}`), ...inputs.flat(),
        h('button', { type: 'button', class: 'quiet', 'data-remove': '', onclick: () => { li.remove(); addBtn.focus(); } }, `${removeLabel} ${list.children.length + 1}`)));
    for (const k of keep) if (r[k]) li.dataset[k] = r[k];
    list.append(li);
    return li;
  };
  const addBtn = h('button', { type: 'button', id: `${id}-add`, onclick: () => add({}).querySelector('input, textarea').focus() }, addLabel);
  for (const r of start) add(r);
  const el = h('section', { class: 'rows-section', 'aria-labelledby': `${id}-title` }, h('h3', { id: `${id}-title` }, title), list, addBtn);
  const value = () => [...list.children].map((li) => norm(Object.fromEntries([...keep.map((k) => [k, li.dataset[k]]),
    ...[...li.querySelectorAll('[data-col]')].map((i) => [i.dataset.col, i.value])])));
  return { el, value, initial: start.map(norm).filter((r) => Object.values(r).some(Boolean)) };
}

// tags lists the tags a page at a time (GET /v1/tags follows its Link
// header), each with the published articles using it and a link to its
// public page; a description is saved in place; only an unused tag can be
// deleted, and the button of a used one is disabled with the reason.
async function tags(body, fail) {
  const note = h('p', { role: 'status', id: 'tag-note', class: 'muted' });
  const list = h('ul', { class: 'claims', id: 'tag-list' });
  const more = h('button', { type: 'button', id: 'tags-more', hidden: true }, t('moreTags'));
  let next = '';
  let seq = 0;
  const row = (tag) => {
    const i = ++seq;
    const desc = h('input', { id: `tag-desc-${i}`, value: tag.description || '', 'aria-label': `${t('catDesc')} · ${tag.name}` });
    const used = tag.articles > 0;
    const del = h('button', { type: 'button', class: 'small danger', 'aria-label': t('deleteCategory', tag.name), disabled: used,
      title: used ? t('tagInUse', tag.articles) : undefined, 'aria-describedby': used ? `tag-used-${i}` : undefined, onclick: async () => {
        try { await api('DELETE', `/v1/tags/${encodeURIComponent(tag.name)}`); li.remove(); note.textContent = t('tagDeleted', tag.name); } catch (e) { fail(e); }
      } }, '×');
    const li = h('li', { 'data-tag': tag.name, 'data-articles': String(tag.articles) },
      used ? h('a', { href: `/t/${encodeURIComponent(tag.name)}` }, h('strong', {}, `#${tag.name}`)) : h('strong', {}, `#${tag.name}`),
      h('span', { class: 'muted', id: `tag-used-${i}` }, ` · ${t('catArticles', tag.articles)}${used ? ' · ' + t('tagInUse', tag.articles) : ''}`),
      h('div', { class: 'row' }, desc,
        h('button', { type: 'button', class: 'small', 'aria-label': t('saveDesc', tag.name), onclick: async () => {
          try { await api('PUT', `/v1/tags/${encodeURIComponent(tag.name)}`, { description: desc.value }); note.textContent = t('tagSaved', tag.name); } catch (e) { fail(e); }
        } }, '✓'), del));
    return li;
  };
  const load = async (path) => {
    let link = '';
    const page = await api('GET', path, undefined, { headers: (hs) => { link = hs.get('Link') || ''; } });
    list.append(...page.map(row));
    const m = /<([^>]+)>;\s*rel="next"/.exec(link);
    next = m ? m[1] : '';
    more.hidden = !next;
    if (!list.children.length) list.append(h('li', { id: 'no-tags', class: 'muted' }, t('noTags')));
  };
  more.addEventListener('click', async () => { try { await load(next); } catch (e) { fail(e); } });
  const [nL, n] = field('new-tag-name', t('catName'), { required: true, maxlength: 64 });
  const [dL, d] = field('new-tag-desc', t('catDesc'));
  const form = h('form', { class: 'row admin-form', id: 'tag-create' }, nL, n, dL, d, h('button', { type: 'submit', class: 'primary' }, t('createTag')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const c = await api('POST', '/v1/tags', { name: n.value.trim(), description: d.value.trim() });
      const none = document.getElementById('no-tags');
      if (none) none.remove();
      list.append(row({ articles: 0, ...c }));
      note.textContent = t('tagCreated', c.name);
      n.value = ''; d.value = '';
      n.focus();
    } catch (e2) { fail(e2); n.focus(); }
  });
  body.replaceChildren(h('section', { class: 'card', 'aria-labelledby': 'tags-title' }, h('h2', { id: 'tags-title' }, t('tagsTitle')),
    h('p', { class: 'hint', id: 'tags-no-rename' }, t('tagsNoRename')), note, list, more, form));
  await load('/v1/tags?limit=200');
}

async function categories(body, fail) {
  const render = async (focusSel) => {
    const cats = await api('GET', '/v1/categories');
    const [nL, n] = field('new-cat-name', t('catName'), { required: true, maxlength: 64 });
    const [dL, d] = field('new-cat-desc', t('catDesc'));
    const form = h('form', { class: 'row admin-form', id: 'cat-create' }, nL, n, dL, d, h('button', { type: 'submit', class: 'primary' }, t('createCategory')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try { await api('POST', '/v1/categories', { name: n.value.trim(), description: d.value.trim() }); await render('#new-cat-name'); } catch (e2) { fail(e2); n.focus(); }
    });
    body.replaceChildren(h('section', { class: 'card', 'aria-labelledby': 'cats-title' }, h('h2', { id: 'cats-title' }, t('categories')),
      h('ul', { class: 'claims', id: 'cat-list' }, ...cats.map((c, i) => {
        const desc = h('input', { id: `cat-desc-${i}`, value: c.description || '', 'aria-label': `${t('catDesc')} · ${c.name}` });
        return h('li', { 'data-category': c.name }, h('strong', {}, c.name), h('span', { class: 'muted' }, ` · ${t('catArticles', c.articles)}`),
          h('div', { class: 'row' }, desc,
            h('button', { type: 'button', class: 'small', 'aria-label': t('saveDesc', c.name), onclick: async () => {
              try { await api('PUT', `/v1/categories/${encodeURIComponent(c.name)}`, { description: desc.value }); await render(`#cat-desc-${i}`); } catch (e) { fail(e); }
            } }, '✓'),
            h('button', { type: 'button', class: 'small danger', 'aria-label': t('deleteCategory', c.name), onclick: async () => {
              try { await api('DELETE', `/v1/categories/${encodeURIComponent(c.name)}`); await render('#new-cat-name'); } catch (e) { fail(e); }
            } }, '×')));
      })), form));
    if (focusSel) { const el = body.querySelector(focusSel); if (el) el.focus(); }
  };
  await render();
}

async function usage(body) {
  const days = h('select', { id: 'usage-days' }, ...[1, 7, 30, 90].map((n) => h('option', { value: n, selected: n === 7 }, String(n))));
  const out = h('div', { id: 'usage-report' });
  const cats = ['reading', 'writing', 'attributes'];
  const render = async () => {
    const u = await api('GET', `/v1/admin/usage?days=${days.value}`);
    const banner = u.health === 'incomplete'
      ? h('p', { class: 'banner warn', role: 'alert', id: 'usage-undercount' }, t('undercount', u.failed_bookings))
      : h('p', { class: 'muted', id: 'usage-health' }, t('healthOk'));
    const cell = (c) => c ? `${c.events} ${t('events')} · ${c.total} ${t('tokensUsed')} · ${c.cache_hits} ${t('cacheHits')}` : '—';
    const table = h('table', { class: 'admin-table', id: 'usage-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('date')), ...cats.map((c) => h('th', { scope: 'col' }, t(c))))),
      h('tbody', {}, ...(u.days || []).map((d) => h('tr', { 'data-date': d.date, class: d.health === 'incomplete' ? 'incomplete' : '' },
        h('th', { scope: 'row' }, d.date), ...cats.map((c) => h('td', { 'data-cat': c }, cell(d.categories && d.categories[c])))))),
      h('tfoot', {}, h('tr', {}, h('th', { scope: 'row' }, t('total')), ...cats.map((c) => h('td', { 'data-total': c }, cell(u.totals && u.totals[c]))))));
    const sources = h('dl', { class: 'explain-list', id: 'usage-sources' }, ...cats.flatMap((c) => {
      const s = (u.sources || {})[c] || 'default';
      return [h('dt', {}, `${t(c)} · ${t('source')}`), h('dd', { 'data-source': s, 'data-cat': c }, t(`src_${s}`, c),
        s === 'compat' || s === 'mixed' ? h('p', { class: 'warn migrate' }, t('migrate', c, c.toUpperCase())) : null)];
    }));
    out.replaceChildren(banner, table, h('h3', {}, t('source')), sources,
      ...(u.warnings || []).map((w) => h('p', { class: 'hint' }, w)));
  };
  days.addEventListener('change', render);
  body.replaceChildren(h('section', { class: 'card', 'aria-labelledby': 'usage-title' }, h('h2', { id: 'usage-title' }, t('usageTitle')),
    h('div', { class: 'row' }, h('label', { for: 'usage-days' }, t('days')), days), out));
  await render();
}

async function index(body, fail) {
  const status = h('div', { id: 'index-status', role: 'status' });
  const show = (s) => status.replaceChildren(h('ul', {},
    h('li', {}, t('indexGen', s.generation)), h('li', {}, t('indexDocs', s.docs)), h('li', {}, t('indexPending', s.pending)),
    s.rebuilding ? h('li', {}, t('rebuilding')) : null,
    s.lastRebuildReason ? h('li', { id: 'index-reason' }, t('lastReason', s.lastRebuildReason)) : null,
    s.lastError ? h('li', { class: 'error' }, t('lastError', s.lastError)) : null,
    h('li', { class: 'muted' }, h('code', {}, s.dir))));
  const button = h('button', { type: 'button', id: 'index-rebuild', class: 'primary', onclick: async () => {
    button.setAttribute('aria-busy', 'true');
    status.replaceChildren(h('p', {}, t('rebuilding')));
    try { show(await api('POST', '/v1/admin/index/rebuild')); } catch (e) { fail(e); } finally { button.removeAttribute('aria-busy'); }
  } }, t('rebuild'));
  body.replaceChildren(h('section', { class: 'card', 'aria-labelledby': 'index-title' }, h('h2', { id: 'index-title' }, t('indexTitle')), status, button));
  try { show(await api('GET', '/v1/admin/index')); } catch (e) {
    if (e.code === 'persona_disabled') status.replaceChildren(h('p', {}, t('indexDisabled'))); else fail(e);
  }
}
