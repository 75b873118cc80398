// Assets in the editor (docs/api.md "Assets"): upload sends a file's bytes
// to POST /v1/assets and answers the stored asset; shown() gives an
// <img> a URL for a block's src.
//
// GET /v1/assets/{hash} needs the bearer token, which an <img src> cannot
// send, and the API has no signed URLs for authors (the public site signs
// only the assets of a published, password-protected article). So the
// editor fetches an asset with the token and shows it through a blob: URL
// (the app's CSP allows img-src blob:). A blob URL is kept while some node
// view shows the asset and revoked a moment after the last one lets go (a
// block re-rendered by a remote update takes it again meanwhile), so a long
// session holds the bytes only of the images on the page.
import { ApiError } from '../api.js';
import { session } from '../session.js';

export const ASSET_SCHEME = 'folio-asset:';
const HEX64 = /^[0-9a-f]{64}$/;

// assetHash is the hash of a folio-asset: URL, or '' for any other URL.
export function assetHash(src) {
  if (typeof src !== 'string' || !src.startsWith(ASSET_SCHEME)) return '';
  const h = src.slice(ASSET_SCHEME.length);
  return HEX64.test(h) ? h : '';
}

// upload stores file as an asset: {hash, url, mime, size, width, height,
// name}. A refusal throws ApiError with the server's code (too_large,
// unsupported_type) and its message, which names the problem.
export async function upload(file) {
  const headers = { Authorization: `Bearer ${session.token()}` };
  // The server sniffs the bytes; a declared type it never stores (SVG,
  // HTML) is refused at once with a message saying so.
  if (file.type) headers['Content-Type'] = file.type;
  const res = await fetch(`/v1/assets?name=${encodeURIComponent(file.name || '')}`, { method: 'POST', headers, body: file });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { message: text }; }
  if (!res.ok) throw new ApiError(res.status, data && (data.error || data));
  return data;
}

// uploadError says in words why file was not added.
export function uploadError(file, err) {
  const name = file.name || 'The file';
  const said = (m) => (m ? m[0].toUpperCase() + m.slice(1) + (/[.!?]$/.test(m) ? '' : '.') : '');
  if (err instanceof ApiError) {
    if (err.code === 'too_large' || err.status === 413) return `${name} was not added: it is too large. ${said(err.message)}`;
    if (err.code === 'unsupported_type' || err.status === 415) return `${name} was not added: this type of file is refused. ${said(err.message)}`;
    return `${name} was not added: ${said(err.message)}`;
  }
  return `${name} was not added: the upload failed (${(err && err.message) || err}).`;
}

// Shown assets: hash -> {refs, url, promise, timer}.
const shownAssets = new Map();
const RELEASE_AFTER_MS = 1000;

// acquire resolves to a URL an <img> can show for src: an https URL as it
// is, an asset through a blob: URL. Call release(src) when it is no longer
// shown.
export function acquire(src) {
  const hash = assetHash(src);
  if (!hash) return Promise.resolve(src);
  let e = shownAssets.get(hash);
  if (!e) {
    e = { refs: 0, url: '', timer: 0, promise: null };
    e.promise = fetch(`/v1/assets/${hash}`, { headers: { Authorization: `Bearer ${session.token()}` } })
      .then(async (res) => {
        if (!res.ok) throw new Error(res.status === 404 ? 'this image is not in the store (or not yours)' : `HTTP ${res.status}`);
        const blob = await res.blob();
        if (shownAssets.get(hash) !== e) return '';
        e.url = URL.createObjectURL(blob);
        return e.url;
      });
    e.promise.catch(() => { if (shownAssets.get(hash) === e) shownAssets.delete(hash); });
    shownAssets.set(hash, e);
  }
  e.refs++;
  clearTimeout(e.timer);
  return e.promise;
}

export function release(src) {
  const hash = assetHash(src);
  const e = hash && shownAssets.get(hash);
  if (!e) return;
  e.refs--;
  if (e.refs > 0) return;
  clearTimeout(e.timer);
  e.timer = setTimeout(() => {
    if (e.refs > 0 || shownAssets.get(hash) !== e) return;
    shownAssets.delete(hash);
    if (e.url) URL.revokeObjectURL(e.url);
  }, RELEASE_AFTER_MS);
}

// shownCount is how many assets hold a blob URL now (tests, benchmarks).
export function shownCount() {
  return shownAssets.size;
}
