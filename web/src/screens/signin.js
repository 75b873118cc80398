// Sign-in: a token in a password field, checked with GET /v1/whoami and
// kept in sessionStorage.
import { api } from '../api.js';
import { h } from '../dom.js';
import { session } from '../session.js';

export function signIn({ root, go }) {
  document.title = 'Sign in · Folio';
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'current-password', required: true, 'aria-describedby': 'token-help' });
  const error = h('p', { class: 'error', role: 'alert', id: 'signin-error' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  // method post: were the script to fail, the token would not land in a URL.
  const form = h('form', { class: 'signin-form', method: 'post', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in to Folio'),
    h('label', { for: 'token' }, 'Access token'),
    input,
    h('p', { class: 'muted', id: 'token-help' }, 'The token folio serve printed, or one an admin gave you (folio_…). It is kept in this tab only.'),
    error,
    button);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    error.textContent = '';
    button.disabled = true;
    try {
      await api('GET', '/v1/whoami', undefined, { token });
      session.set(token);
      const next = new URLSearchParams(location.search).get('next');
      go(next && next.startsWith('/') && !next.startsWith('//') ? next : '/app', { replace: true });
    } catch (err) {
      error.textContent = err.status === 401 ? 'That token was not accepted. Check it and try again.' : `Could not sign in: ${err.message}`;
      button.disabled = false;
      input.focus();
    }
  });
  root.append(h('main', { class: 'signin' }, form, h('p', { class: 'signin-home' }, h('a', { href: '/' }, '← Folio home'))));
  input.focus();
}
