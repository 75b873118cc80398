// Connection: one WebSocket to /v1/sync with the JSON subprotocol
// (docs/protocol.md): hello with the token as the first message (a browser
// cannot set headers on the upgrade), replies matched to requests by id,
// events routed to the open documents by stream, and reconnection with
// exponential backoff and jitter after every resumable close. After a
// reconnect each registered document opens again (a fresh snapshot) and
// resends its save in flight (sync/document.js).

export const SUBPROTOCOL = 'folio.v1.json';

export class Connection {
  constructor(token, opts = {}) {
    this.token = token;
    this.url = opts.url || wsURL();
    this.state = 'connecting'; // connecting | online | reconnecting | offline | closed | denied
    this.ws = null;
    this.seq = 0;
    this.waiting = new Map(); // request id -> onReply
    this.docs = new Map(); // doc id -> DocSync
    this.listeners = new Set();
    this.backoff = 500;
    this.timer = null;
    this.welcome = null;
    this.WebSocket = opts.WebSocket || globalThis.WebSocket;
  }

  connected() {
    return this.state === 'online';
  }

  nextId() {
    return String(++this.seq);
  }

  onState(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  setState(s) {
    this.state = s;
    for (const fn of this.listeners) fn(s);
    for (const d of this.docs.values()) d.notify();
  }

  // attach registers a document's sync; it opens now or once connected.
  attach(docSync) {
    this.docs.set(docSync.doc, docSync);
    if (this.connected()) docSync.open();
  }

  detach(docSync) {
    this.docs.delete(docSync.doc);
    docSync.close();
  }

  connect() {
    clearTimeout(this.timer);
    if (this.state === 'closed' || this.state === 'denied') return;
    let ws;
    try {
      ws = new this.WebSocket(this.url, SUBPROTOCOL);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      const id = this.nextId();
      this.waiting.set(id, (m) => {
        if (m.type !== 'welcome') return;
        this.welcome = m;
        this.backoff = 500;
        this.setState('online');
        for (const d of this.docs.values()) d.open();
      });
      ws.send(JSON.stringify({ type: 'hello', id, token: this.token, client: 'folio-web/1' }));
    };
    ws.onmessage = (e) => this.receive(e.data);
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.waiting.clear();
      if (this.state === 'closed') return;
      if (e.code === 4001 || e.code === 4002) {
        // Never reconnect by ourselves after an auth failure.
        this.setState('denied');
        return;
      }
      this.retry();
    };
  }

  retry() {
    this.setState(this.welcome ? 'reconnecting' : 'offline');
    const wait = this.backoff * (0.75 + Math.random() * 0.5);
    this.backoff = Math.min(this.backoff * 2, 30000);
    this.timer = setTimeout(() => this.connect(), wait);
  }

  // reconnectNow skips the backoff (the browser came back online).
  reconnectNow() {
    if (this.ws || this.state === 'closed' || this.state === 'denied') return;
    this.backoff = 500;
    this.connect();
  }

  receive(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (m.id !== undefined && m.id !== '' && this.waiting.has(m.id)) {
      const fn = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      fn(m);
      return;
    }
    if (m.stream && m.stream.startsWith('doc:')) {
      const d = this.docs.get(m.stream.slice(4));
      if (d) d.handle(m);
    }
  }

  // request sends msg with a new id (or the given one, for a resend) and
  // calls onReply with its answer. It returns false when offline.
  request(msg, onReply, id) {
    if (!this.ws || this.ws.readyState !== 1) return false;
    const rid = id || this.nextId();
    this.waiting.set(rid, onReply);
    this.ws.send(JSON.stringify({ ...msg, id: rid }));
    return true;
  }

  // call is request as a promise (for the panels).
  call(msg) {
    return new Promise((resolve, reject) => {
      if (!this.request(msg, (m) => (m.type === 'error' ? reject(m) : resolve(m)))) reject({ code: 'offline', message: 'not connected' });
    });
  }

  close() {
    this.setState('closed');
    clearTimeout(this.timer);
    for (const d of this.docs.values()) d.close();
    this.docs.clear();
    if (this.ws) this.ws.close(1000, 'signed out');
    this.ws = null;
  }
}

function wsURL() {
  const l = globalThis.location;
  return (l.protocol === 'https:' ? 'wss://' : 'ws://') + l.host + '/v1/sync';
}
