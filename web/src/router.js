// The router maps a path to a screen. A screen is registered with
// route(pattern, screen): pattern is a path with :params (e.g. '/d/:id'),
// screen is a function ({params, root, go}) that renders into root and
// may return a cleanup function, called before the next screen renders.
const routes = [];
let cleanup = null;
let rootEl = null;

export function route(pattern, screen, { auth = true } = {}) {
  const names = [];
  const re = new RegExp('^' + pattern.replace(/:(\w+)/g, (_, n) => { names.push(n); return '([^/]+)'; }) + '/?$');
  routes.push({ re, names, screen, auth });
}

export function go(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

export function start(root, { signedIn, signInPath }) {
  rootEl = root;
  addEventListener('popstate', render);
  document.addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[data-route]');
    if (!a || e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    go(a.getAttribute('href'));
  });
  start.signedIn = signedIn;
  start.signInPath = signInPath;
  render();
}

async function render() {
  const path = location.pathname;
  for (const r of routes) {
    const m = r.re.exec(path);
    if (!m) continue;
    if (r.auth && !start.signedIn()) {
      go(`${start.signInPath}?next=${encodeURIComponent(path)}`, { replace: true });
      return;
    }
    if (cleanup) { try { cleanup(); } catch { /* the old screen is gone anyway */ } }
    cleanup = null;
    rootEl.replaceChildren();
    const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
    cleanup = (await r.screen({ params, root: rootEl, go })) || null;
    return;
  }
  go('/app', { replace: true });
}
