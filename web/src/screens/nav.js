// The top bar's links to the persona and admin screens. The admin link
// is shown only to admins (GET /v1/whoami); the API refuses the admin
// endpoints to anyone else anyway.
import { api } from '../api.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import './site-words.js';

let who = null;

// whoami is the signed-in user (asked once per token).
export function whoami() {
  if (!who) who = api('GET', '/v1/whoami').catch((err) => { who = null; throw err; });
  return who;
}

// forget drops the cached user (sign out).
export function forget() { who = null; }

export function siteLinks() {
  const personas = h('a', { href: '/personas', 'data-route': '', class: 'button quiet', id: 'nav-personas' }, t('navPersonas'));
  const slot = h('span', { class: 'nav-admin-slot' });
  whoami().then((w) => {
    if (w && w.admin) slot.replaceWith(h('a', { href: '/admin', 'data-route': '', class: 'button quiet', id: 'nav-admin' }, t('navAdmin')));
  }).catch(() => {});
  return [personas, slot];
}
