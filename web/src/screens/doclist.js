// The document list: newest first (by `updated`, the last change), each
// with its head, unsealed and published markers; a text filter, "New document", import
// of a Markdown or FlowDocument file (picker or drop), open one. A search
// box finds documents by the words of their title, body or tags
// (GET /v1/search), each result with the body around the match, the
// words marked; arrow keys move between the results, Escape goes back.
import { api } from '../api.js';
import { h } from '../dom.js';
import { topBar } from './shell.js';

export async function docList({ root, go }) {
  document.title = 'Documents · Folio';
  const filter = h('input', { type: 'search', id: 'filter', placeholder: 'Filter documents', 'aria-label': 'Filter documents' });
  const search = h('input', { type: 'search', id: 'doc-search', name: 'q', placeholder: 'Search the text of your documents',
    'aria-label': 'Search the text of your documents', 'aria-controls': 'search-results', autocomplete: 'off' });
  const searchStatus = h('p', { class: 'muted search-status', id: 'search-status', role: 'status' });
  const results = h('ol', { class: 'doc-list search-results', id: 'search-results', 'aria-label': 'Search results', hidden: true });
  const searchForm = h('form', { role: 'search', class: 'search-form', id: 'search-form', onsubmit: (e) => { e.preventDefault(); runSearch(); } },
    search, h('button', { type: 'submit', id: 'search-run' }, 'Search'));
  const list = h('ul', { class: 'doc-list', id: 'doc-list', 'aria-live': 'polite' });
  const notes = h('div', { class: 'notes', role: 'status', id: 'import-notes' });
  const fileInput = h('input', { type: 'file', id: 'import-file', accept: '.md,.markdown,.txt,.json,text/markdown,application/json', class: 'visually-hidden' });
  const main = h('main', { class: 'page', id: 'main' },
    h('div', { class: 'page-head' },
      h('h1', {}, 'Documents'),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'primary', id: 'new-doc', onclick: create }, 'New document'),
        h('label', { class: 'button', for: 'import-file' }, 'Import…'),
        fileInput)),
    searchForm, searchStatus, results, filter, notes, list,
    h('p', { class: 'muted drop-hint' }, 'Drop a Markdown (.md) or FlowDocument (.json) file here to import it.'));
  root.append(topBar(go), main);

  let docs = [];
  const render = () => {
    const q = filter.value.trim().toLowerCase();
    list.replaceChildren();
    const shown = docs.filter((d) => !q || (d.title || '').toLowerCase().includes(q) || d.id.includes(q));
    if (!shown.length) list.append(h('li', { class: 'empty muted' }, docs.length ? 'No document matches.' : 'No documents yet. Make one with “New document”.'));
    for (const d of shown) {
      list.append(h('li', {},
        h('a', { href: `/d/${d.id}`, 'data-route': '', class: 'doc-link' },
          h('span', { class: 'doc-title' }, d.title || 'Untitled'),
          h('span', { class: 'doc-meta' },
            h('span', { class: 'label' }, d.head),
            d.unsealed ? h('span', { class: 'badge', title: 'Changes not yet sealed in a version' }, 'unsealed') : null,
            d.published ? h('span', { class: 'badge published', 'data-published': d.published, title: `Version ${d.published} is published (${d.visibility || 'public'})` },
              d.visibility && d.visibility !== 'public' ? `published · ${d.visibility}` : 'published') : null,
            h('time', { datetime: new Date(d.updated || d.created).toISOString(), title: 'Last changed' }, `updated ${when(d.updated || d.created)}`)))));
    }
  };
  filter.addEventListener('input', render);

  // Search: the latest query's answer wins (an older one arriving late
  // is dropped); an empty box shows the list again.
  let asked = 0;
  let typing;
  const showList = (on) => {
    results.hidden = on;
    filter.hidden = !on;
    list.hidden = !on;
  };
  async function runSearch() {
    clearTimeout(typing);
    const q = search.value.trim();
    const n = ++asked;
    if (!q) {
      searchStatus.textContent = '';
      results.replaceChildren();
      delete results.dataset.query;
      showList(true);
      return;
    }
    searchStatus.textContent = 'Searching…';
    searchStatus.classList.remove('error');
    let res;
    try {
      res = await api('GET', `/v1/search?q=${encodeURIComponent(q)}`);
    } catch (err) {
      if (n !== asked) return;
      searchStatus.textContent = `Could not search: ${err.message}`;
      searchStatus.classList.add('error');
      return;
    }
    if (n !== asked) return;
    results.replaceChildren(...res.hits.map((hit) => h('li', {},
      h('a', { href: `/d/${hit.id}`, 'data-route': '', class: 'doc-link search-hit' },
        h('span', { class: 'doc-title' }, hit.title || 'Untitled'),
        h('span', { class: 'snippet' }, ...(hit.snippet || []).map((s) => (s.mark ? h('mark', {}, s.text) : s.text)))))));
    searchStatus.textContent = res.hits.length === 0 ? `No document contains “${q}”.`
      : res.hits.length === 1 ? `1 document contains “${q}”.` : `${res.hits.length} documents contain “${q}”.`;
    results.dataset.query = q;
    showList(false);
  }
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(runSearch, 250);
  });
  const hits = () => [...results.querySelectorAll('a.search-hit')];
  const leaveSearch = () => {
    search.value = '';
    runSearch();
    search.focus();
  };
  search.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' && !results.hidden && hits().length) {
      e.preventDefault();
      hits()[0].focus();
    } else if (e.key === 'Escape' && search.value) {
      e.preventDefault();
      leaveSearch();
    }
  });
  results.addEventListener('keydown', (e) => {
    const all = hits();
    const i = all.indexOf(document.activeElement);
    if (i < 0) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const j = i + (e.key === 'ArrowDown' ? 1 : -1);
      if (j < 0) search.focus();
      else all[Math.min(j, all.length - 1)].focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      leaveSearch();
    }
  });

  async function load() {
    docs = await api('GET', '/v1/docs');
    docs.sort((a, b) => new Date(b.updated || b.created) - new Date(a.updated || a.created));
    render();
  }

  async function create() {
    const v = await api('POST', '/v1/docs', { attrs: { title: 'Untitled' }, body: { schemaVersion: 1, blocks: [] } });
    go(`/d/${v.doc}`);
  }

  async function importFile(file) {
    notes.replaceChildren(h('p', {}, `Importing ${file.name}…`));
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      const res = await api('POST', '/v1/docs/import', form);
      notes.replaceChildren(h('p', {}, `Imported ${file.name} as “${res.title}”.`),
        ...(res.notes || []).map((n) => h('p', { class: 'note' }, `Line ${n.line}: ${n.kind} has no block — ${n.text}${n.note ? ` (${n.note})` : ''}`)));
      await load();
      if (!(res.notes || []).length) go(`/d/${res.doc}`);
    } catch (err) {
      notes.replaceChildren(h('p', { class: 'error' }, `Could not import ${file.name}: ${err.message}`));
    }
  }
  fileInput.addEventListener('change', () => fileInput.files[0] && importFile(fileInput.files[0]));
  main.addEventListener('dragover', (e) => { e.preventDefault(); main.classList.add('dropping'); });
  main.addEventListener('dragleave', () => main.classList.remove('dropping'));
  main.addEventListener('drop', (e) => {
    e.preventDefault();
    main.classList.remove('dropping');
    const f = e.dataTransfer.files[0];
    if (f) importFile(f);
  });
  await load();
}

function when(t) {
  const d = new Date(t);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
