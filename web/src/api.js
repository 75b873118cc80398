// The HTTP API client (docs/api.md): JSON in and out, the token in the
// Authorization header. Errors are thrown as ApiError with the server's
// code and kind (clients switch on those, never on the message).
import { session } from './session.js';

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.kind = body && body.kind;
    this.problems = body && body.problems;
  }
}

export async function api(method, path, body, opts = {}) {
  const headers = { Authorization: `Bearer ${opts.token || session.token()}` };
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers, body: payload });
  if (opts.headers) opts.headers(res.headers); // for a caller that pages by Link
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { message: text }; }
  if (!res.ok) throw new ApiError(res.status, data && (data.error || data));
  return data;
}
