// The publish panel: the article's attributes (slug, summary, category,
// tags; the title is the editor's, which the assistant may propose), its visibility (public, password,
// private; the password is typed here, sent once and never kept), and
// Publish / Republish / Unpublish with the result in words: the public
// URL (/a/{slug} on the site), the version published, what was sealed.
//
// Attributes live in the draft: an edit here is an ordinary draft save of
// `attrs` through the tab's DocSync (setAttrs), so other tabs see it live
// and the publish reads it. The calls are docs/api.md "Publishing":
// POST .../publish, .../unpublish, PUT .../visibility, GET .../publication,
// GET /v1/categories, and the attributes assistant POST .../attrs/suggest,
// whose proposals the author takes one by one ("Use"), nothing saved
// before that.
import { api } from '../api.js';
import { h } from '../dom.js';

const SLUG_RE = /^[a-z0-9-]{1,80}$/;

export function publishPanel({ doc, getAttrs, setAttrs, setTitle, saved, onOpen }) {
  const heading = h('h2', { id: 'publish-title', tabindex: '-1' }, 'Publish');
  const state = h('p', { id: 'publish-state', class: 'publish-state' }, 'Reading…');
  const result = h('div', { id: 'publish-result', class: 'publish-result', role: 'status' });
  const errorBox = h('p', { id: 'publish-error', class: 'error', role: 'alert' });

  const slug = h('input', { id: 'pub-slug', type: 'text', spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'pub-slug-hint' });
  const summary = h('textarea', { id: 'pub-summary', rows: '3', maxlength: '300' });
  const category = h('select', { id: 'pub-category' });
  const tags = h('input', { id: 'pub-tags', type: 'text', autocomplete: 'off', 'aria-describedby': 'pub-tags-hint' });
  const password = h('input', { id: 'pub-password', type: 'password', autocomplete: 'new-password', minlength: '8', 'aria-describedby': 'pub-password-hint' });
  const visInputs = {};
  const visibility = h('fieldset', { class: 'pub-visibility', id: 'pub-visibility' },
    h('legend', {}, 'Visibility'),
    ...[['public', 'Public', 'anyone can read it on the site'],
      ['password', 'Password', 'readers need the password'],
      ['private', 'Private', 'only you; the public page answers “not found”']].map(([v, label, hint]) => {
      visInputs[v] = h('input', { type: 'radio', name: 'pub-vis', id: `pub-vis-${v}`, value: v });
      visInputs[v].addEventListener('change', showPassword);
      return h('div', { class: 'radio-row' }, visInputs[v],
        h('label', { for: `pub-vis-${v}` }, label, h('span', { class: 'muted' }, ` — ${hint}`)));
    }),
    h('div', { id: 'pub-password-row', hidden: true },
      h('label', { for: 'pub-password' }, 'Password'), password,
      h('p', { class: 'hint muted', id: 'pub-password-hint' }, 'At least 8 characters. Sent with the publish and kept only as a hash on the server; leave it empty to keep the current one.')));
  const visBtn = h('button', { type: 'button', class: 'small', id: 'visibility-run', onclick: applyVisibility }, 'Apply visibility only');
  visibility.append(h('div', { class: 'row vis-actions' }, visBtn,
    h('span', { class: 'hint muted' }, 'changes who may read the published version now, without publishing the draft')));

  const publishBtn = h('button', { type: 'submit', class: 'primary', id: 'publish-run' }, 'Publish');
  const unpublishBtn = h('button', { type: 'button', id: 'unpublish-run', hidden: true, onclick: unpublish }, 'Unpublish');
  const suggestBtn = h('button', { type: 'button', id: 'attrs-suggest', onclick: suggest }, 'Suggest attributes');
  const suggestion = h('section', { id: 'attrs-suggestion', class: 'attrs-suggestion', 'aria-labelledby': 'attrs-suggestion-title', hidden: true });

  const form = h('form', { class: 'publish-form', id: 'publish-form', novalidate: true },
    h('div', { class: 'row assistant-row' }, suggestBtn),
    suggestion,
    h('label', { for: 'pub-slug' }, 'Slug'), slug,
    h('p', { class: 'hint muted', id: 'pub-slug-hint' }, 'Lowercase letters, digits and “-”; the public page is /a/slug. Empty: made from the document id.'),
    h('label', { for: 'pub-summary' }, 'Summary'), summary,
    h('label', { for: 'pub-category' }, 'Category'), category,
    h('label', { for: 'pub-tags' }, 'Tags'), tags,
    h('p', { class: 'hint muted', id: 'pub-tags-hint' }, 'Separated by commas; a new tag is created when the article is published.'),
    visibility,
    // The footer stays in view while the form scrolls: the outcome and
    // the refusals are seen where the button was pressed.
    h('div', { class: 'publish-footer' }, errorBox, result,
      h('div', { class: 'row publish-actions' }, publishBtn, unpublishBtn)));
  form.addEventListener('submit', (e) => { e.preventDefault(); publish(); });

  const panel = h('aside', { class: 'panel publish-panel', id: 'publish-panel', 'aria-labelledby': 'publish-title', hidden: true },
    h('div', { class: 'panel-head' }, heading,
      h('button', { type: 'button', class: 'quiet', id: 'publish-close', onclick: () => toggle(false) }, 'Close')),
    state, form);
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { e.preventDefault(); toggle(false); }
  });
  for (const el of [slug, summary, category, tags]) el.addEventListener('change', () => saveFields());

  let status = null; // GET .../publication
  let categories = [];
  let opener = null;

  function showPassword() {
    panel.querySelector('#pub-password-row').hidden = !visInputs.password.checked;
  }
  function chosenVisibility() {
    return Object.keys(visInputs).find((k) => visInputs[k].checked) || 'public';
  }

  // fill shows the draft's attributes in the fields (a focused field is
  // left alone: the author is typing in it).
  function fill(a) {
    const set = (el, v) => { if (document.activeElement !== el) el.value = v; };
    set(slug, a.slug || '');
    set(summary, a.summary || '');
    set(tags, (a.tags || []).join(', '));
    fillCategories(a.category || '');
    slug.placeholder = doc.toLowerCase().replaceAll('_', '-');
  }
  function fillCategories(current) {
    if (document.activeElement === category) return;
    const names = categories.map((c) => c.name);
    const opts = [h('option', { value: '' }, 'No category'), ...names.map((n) => h('option', { value: n }, n))];
    if (current && !names.some((n) => n.toLowerCase() === current.toLowerCase())) {
      opts.push(h('option', { value: current }, `${current} (not one of the site’s categories)`));
    }
    category.replaceChildren(...opts);
    category.value = names.find((n) => n.toLowerCase() === current.toLowerCase()) || current;
  }

  // fields reads the form as attributes; a bad value is named.
  function fields() {
    const s = slug.value.trim();
    if (s && !SLUG_RE.test(s)) throw new Error(`The slug “${s}” may hold only lowercase letters a–z, digits and “-” (at most 80).`);
    const t = tags.value.split(/[,，、]/).map((x) => x.trim()).filter(Boolean);
    return { slug: s, summary: summary.value.trim(), category: category.value, tags: [...new Set(t)] };
  }

  function saveFields() {
    errorBox.textContent = '';
    try {
      setAttrs(fields());
    } catch (err) {
      errorBox.textContent = err.message;
      return false;
    }
    return true;
  }

  // refused shows a refusal in words and puts the focus on its field.
  function refused(err) {
    let f = {};
    try { f = fields(); } catch { /* the slug itself is bad */ }
    errorBox.textContent = words(err, f);
    const el = FIELD_OF[err.code] && panel.querySelector(`#${FIELD_OF[err.code]}`);
    if (el && !el.closest('[hidden]')) {
      el.setAttribute('aria-invalid', 'true');
      const by = (el.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
      if (!by.includes('publish-error')) el.setAttribute('aria-describedby', [...by, 'publish-error'].join(' '));
      el.focus();
      el.addEventListener('input', () => el.removeAttribute('aria-invalid'), { once: true });
    }
  }

  function renderState() {
    const vis = (status && status.visibility) || { visibility: 'public' };
    const pub = status && status.publication;
    if (!Object.values(visInputs).some((i) => i === document.activeElement)) {
      (visInputs[vis.visibility] || visInputs.public).checked = true;
      showPassword();
    }
    panel.dataset.published = pub ? 'true' : 'false';
    panel.dataset.visibility = vis.visibility;
    unpublishBtn.hidden = !pub;
    publishBtn.textContent = pub ? 'Republish' : 'Publish';
    if (!pub) {
      state.replaceChildren(h('span', { class: 'badge' }, 'not published'), ` Visibility: ${vis.visibility}.`);
      return;
    }
    state.replaceChildren(
      h('span', { class: 'badge published' }, 'published'), ' ',
      h('span', { class: 'label' }, pub.label), ` · ${vis.visibility} · `,
      publicLink(pub.slug),
      vis.visibility === 'private' ? h('span', { class: 'muted' }, ' (private: visitors get “not found”)') : null,
      vis.visibility === 'password' ? h('span', { class: 'muted' }, ' (readers need the password)') : null);
  }

  async function load() {
    const [st, cats] = await Promise.all([
      api('GET', `/v1/docs/${doc}/publication`),
      api('GET', '/v1/categories').catch(() => []),
    ]);
    status = st;
    categories = cats || [];
    fill(getAttrs());
    renderState();
    panel.dataset.loaded = 'true';
  }

  async function publish() {
    errorBox.textContent = '';
    result.replaceChildren();
    if (!saveFields()) return;
    const vis = chosenVisibility();
    const body = { visibility: vis };
    if (vis === 'password' && password.value) body.password = password.value;
    if (vis === 'password' && !password.value && !(status && status.visibility.hasPassword)) {
      errorBox.textContent = 'Type a password: a password-protected article needs one (at least 8 characters).';
      password.focus();
      return;
    }
    if (panel.dataset.busy) return;
    panel.dataset.busy = 'publish';
    publishBtn.setAttribute('aria-busy', 'true');
    try {
      await saved();
      const res = await api('POST', `/v1/docs/${doc}/publish`, body);
      password.value = '';
      const p = res.publication;
      result.replaceChildren(
        h('p', {}, res.moved === false ? `Already published: ${p.label} stays published; visibility ${p.visibility}.`
          : `Published ${p.label}${res.previous ? ` (before: ${res.previous})` : ''}, ${p.visibility}.`),
        res.sealed ? h('p', { class: 'muted' }, `The draft was sealed as ${res.sealed.label} first.`) : null,
        h('p', {}, 'Public page: ', publicLink(p.slug),
          p.visibility === 'private' ? h('span', { class: 'muted' }, ' — private: visitors get “not found” until you make it public') : null,
          p.visibility === 'password' ? h('span', { class: 'muted' }, ' — readers type the password there') : null));
      result.dataset.outcome = 'published';
      await load();
    } catch (err) {
      refused(err);
    } finally {
      delete panel.dataset.busy;
      publishBtn.removeAttribute('aria-busy');
    }
  }

  async function unpublish() {
    errorBox.textContent = '';
    result.replaceChildren();
    try {
      const p = await api('POST', `/v1/docs/${doc}/unpublish`, {});
      result.replaceChildren(h('p', {}, `Unpublished ${p.label}: /a/${p.slug} now answers “not found”.`));
      result.dataset.outcome = 'unpublished';
      await load();
      publishBtn.focus();
    } catch (err) {
      refused(err);
    }
  }

  async function applyVisibility() {
    errorBox.textContent = '';
    result.replaceChildren();
    const vis = chosenVisibility();
    const body = { visibility: vis };
    if (vis === 'password' && password.value) body.password = password.value;
    try {
      const v = await api('PUT', `/v1/docs/${doc}/visibility`, body);
      password.value = '';
      result.replaceChildren(h('p', {}, `Visibility is now ${v.visibility}${v.published ? ` for the published ${v.published}` : ''}.`));
      result.dataset.outcome = 'visibility';
      await load();
    } catch (err) {
      refused(err);
    }
  }

  async function suggest() {
    errorBox.textContent = '';
    if (suggestBtn.getAttribute('aria-busy')) return;
    suggestBtn.setAttribute('aria-busy', 'true');
    suggestion.hidden = false;
    suggestion.replaceChildren(h('p', { class: 'muted' }, 'Asking the attributes assistant…'));
    try {
      await saved();
      const s = await api('POST', `/v1/docs/${doc}/attrs/suggest`, undefined);
      renderSuggestion(s);
    } catch (err) {
      suggestion.replaceChildren(h('p', { class: 'error' }, words(err, {})));
    } finally {
      suggestBtn.removeAttribute('aria-busy');
    }
  }

  function renderSuggestion(s) {
    const offline = s.provider === 'local';
    const rows = [];
    const use = (key, value, shown, empty) => {
      const has = Array.isArray(value) ? value.length > 0 : !!value;
      const btn = h('button', {
        type: 'button', class: 'small', 'data-accept': key, disabled: !has,
        onclick: () => {
          if (key === 'title') { setTitle(value); btn.firstChild.textContent = 'Used'; btn.dataset.used = 'true'; return; }
          const el = { summary, slug, category, tags }[key];
          if (key === 'category') fillCategories(value);
          el.value = key === 'tags' ? value.join(', ') : value;
          // The button stays focusable (a disabled one would drop the
          // keyboard's focus to the page).
          if (saveFields()) { btn.firstChild.textContent = 'Used'; btn.dataset.used = 'true'; }
        },
      }, 'Use', h('span', { class: 'visually-hidden' }, ` the suggested ${key}`));
      rows.push(h('li', { 'data-field': key },
        h('div', { class: 'sugg-field' }, h('strong', {}, key[0].toUpperCase() + key.slice(1)), btn),
        h('p', { class: has ? 'sugg-value' : 'sugg-value muted' }, has ? shown : empty)));
    };
    use('title', s.title || '', s.title, offline ? 'None: the offline engine proposes a title only for an untitled article; yours stays.' : 'None: the current title fits.');
    use('summary', s.summary, s.summary, 'No summary proposed.');
    use('slug', s.slug, s.slug, 'No slug proposed.');
    use('category', s.category, s.category, offline ? 'None: no category of the site occurs in the text.' : 'None of the site’s categories fits.');
    use('tags', s.tags || [], (s.tags || []).join(', '), offline ? 'None: it picks only tags the site already has, and none occurs in the text.' : 'No tags proposed.');
    suggestion.replaceChildren(
      h('h3', { id: 'attrs-suggestion-title' }, 'Suggested attributes'),
      h('p', { class: offline ? 'offline-note' : 'muted', id: 'attrs-provider' }, offline
        ? 'No model provider is configured: the offline engine picked these from your text. It never writes new prose: the summary is sentences taken from the article, a title is proposed only for an untitled article (its first heading or sentence), the slug is the title transliterated, and the category and tags are only ones the site already has (it never invents one). Nothing is saved until you use a value.'
        : `From ${s.provider}${s.model ? ` · ${s.model}` : ''}. Nothing is saved until you use a value.`),
      h('ul', { class: 'sugg-fields' }, ...rows));
    suggestion.dataset.provider = s.provider || '';
  }

  function toggle(open) {
    if (open) {
      opener = document.activeElement;
      if (onOpen) onOpen();
    }
    panel.hidden = !open;
    document.body.classList.toggle('publish-open', open);
    if (open) {
      heading.focus();
      load().catch((err) => { state.textContent = `Could not read the publication: ${err.message}`; });
    } else if (opener && opener.isConnected) {
      opener.focus();
    }
  }

  return {
    el: panel,
    toggle: () => toggle(panel.hidden),
    close: () => { if (!panel.hidden) toggle(false); },
    // attrsChanged: the draft's attributes changed (this tab or another).
    attrsChanged: (a) => { if (!panel.hidden) fill(a); },
    // onEvent: a publication event of the document's stream.
    onEvent: (m) => {
      if (!panel.hidden && /^doc\.(published|unpublished|visibility)$/.test(m.type)) load().catch(() => {});
    },
  };
}

// FIELD_OF names the field a refusal is about (it gets the focus).
const FIELD_OF = { slug_taken: 'pub-slug', password_too_short: 'pub-password', password_required: 'pub-password', category_unknown: 'pub-category', too_many_tags: 'pub-tags', tag_limit: 'pub-tags' };

function publicLink(slug) {
  const url = `${location.origin}/a/${slug}`;
  return h('a', { href: `/a/${slug}`, id: 'publish-link', target: '_blank', rel: 'noopener' }, url);
}

// words names a refusal for the author: what is wrong and what to do.
function words(err, f) {
  const known = {
    slug_taken: () => `The slug “${f.slug || 'made from the document id'}” is taken by another published article: choose another slug.`,
    password_too_short: () => 'The password is too short: it needs at least 8 characters.',
    password_required: () => 'Type a password: a password-protected article needs one.',
    category_unknown: () => `“${f.category}” is not one of the site’s categories: choose one from the list (an admin adds categories).`,
    too_many_tags: () => 'Too many tags: an article has at most 32.',
    tag_limit: () => 'You have created as many new tags today as allowed: use existing tags, or publish tomorrow.',
    not_published: () => 'It is not published.',
    attributes_disabled: () => 'The attributes assistant is off on this daemon ([attributes] enabled in its configuration).',
    private_content_blocked: () => 'This article is not public and the attributes assistant would send it to an external provider, which the daemon does not allow ([privacy] send_private_to_provider).',
    storage_full: () => 'The server’s disk is full: nothing was published. Try again once space is freed.',
  };
  const head = known[err.code] ? known[err.code]() : '';
  const detail = err.problems && err.problems.length ? err.problems.map((p) => `${p.path}: ${p.rule}`).join('; ') : err.message;
  if (err.code && err.code.endsWith('_rate_limited')) return `The attributes assistant is busy for you right now (${detail}). Try again in a moment.`;
  return head ? `${head} (${detail})` : `Not done: ${detail}`;
}
