// The token lives in sessionStorage only: gone when the tab closes, never
// in localStorage or a cookie.
const KEY = 'folio.token';

export const session = {
  token: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};
