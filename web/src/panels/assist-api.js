// The assistant's calls to the daemon (docs/api.md "Writing assistant"):
// sessions and their personalization, presets and personas, requests,
// runs followed over their SSE stream (fetch, so the token goes in the
// Authorization header), suggestions previewed, accepted and rejected.
import { api } from '../api.js';
import { session as tokenStore } from '../session.js';

export const assistApi = {
  sessions: (doc) => api('GET', `/v1/docs/${doc}/sessions`),
  startSession: (doc) => api('POST', `/v1/docs/${doc}/sessions`, {}),
  switchSession: (doc, id) => api('POST', `/v1/docs/${doc}/sessions/${id}/switch`),
  session: (id) => api('GET', `/v1/sessions/${id}`),
  messages: (id) => api('GET', `/v1/sessions/${id}/messages?limit=100`),
  message: (id, seq) => api('GET', `/v1/sessions/${id}/messages/${seq}`),
  setChoice: (id, choice) => api('PUT', `/v1/sessions/${id}/personalization`, choice),
  presets: () => api('GET', '/v1/presets'),
  personas: () => api('GET', '/v1/personas').catch(() => []),
  ask: (doc, body) => api('POST', `/v1/docs/${doc}/assist`, body),
  run: (id) => api('GET', `/v1/runs/${id}`),
  cancel: (id) => api('POST', `/v1/runs/${id}/cancel`),
  pending: (doc) => api('GET', `/v1/docs/${doc}/suggestions?status=pending&limit=20`),
  suggestion: (id) => api('GET', `/v1/suggestions/${id}`),
  preview: (id) => api('GET', `/v1/suggestions/${id}/preview`),
  accept: (id, confirmDelete) => api('POST', `/v1/suggestions/${id}/accept`, confirmDelete ? { confirmDelete: true } : {}),
  reject: (id) => api('POST', `/v1/suggestions/${id}/reject`, {}),
};

// followRun reads the run's event stream and calls onEvent with each
// event ({seq, type, time, data}) until the final one; it reconnects from
// the last seq when the stream ends early. signal stops it.
export async function followRun(run, onEvent, signal) {
  let after = 0;
  for (let tries = 0; tries < 20 && !signal.aborted; tries++) {
    let res;
    try {
      res = await fetch(`/v1/runs/${run}/stream?after=${after}`, { headers: { Authorization: `Bearer ${tokenStore.token()}` }, signal });
    } catch (e) {
      if (signal.aborted) return;
      continue;
    }
    if (!res.ok || !res.body) throw new Error(`run stream: HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const chunk = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = chunk.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (!data) continue;
        const ev = JSON.parse(data);
        after = Math.max(after, ev.seq);
        onEvent(ev);
        if (ev.type === 'succeeded' || ev.type === 'failed' || ev.type === 'cancelled') return;
      }
    }
  }
}
