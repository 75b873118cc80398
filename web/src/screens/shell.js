// The signed-in frame every app screen shares: the top bar (home, sign
// out) and the one sync connection of the tab.
import { h } from '../dom.js';
import { session } from '../session.js';
import { Connection } from '../sync/connection.js';
import { siteLinks, forget } from './nav.js';

let conn = null;

// connection is the tab's sync connection (made on first use).
export function connection() {
  if (!conn) {
    conn = new Connection(session.token());
    conn.connect();
    addEventListener('online', () => conn && conn.reconnectNow());
  }
  return conn;
}

// signOut forgets the token and closes the socket.
export function signOut(go) {
  session.clear();
  forget();
  if (conn) conn.close();
  conn = null;
  go('/signin');
}

export function topBar(go, ...extra) {
  return h('header', { class: 'topbar' },
    h('a', { href: '/app', 'data-route': '', class: 'brand' }, 'Folio'),
    h('nav', { class: 'topbar-actions', 'aria-label': 'Account' },
      ...siteLinks(),
      ...extra,
      h('button', { type: 'button', class: 'quiet', id: 'sign-out', onclick: () => signOut(go) }, 'Sign out')));
}
