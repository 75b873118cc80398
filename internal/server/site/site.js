// The reading assistant on a public article page: select a passage, press
// "Explain", and the answer streams into a popover from the explain
// endpoint (POST, Server-Sent Events; docs/api.md). The page reads without
// this script. It builds every element with createElement and writes text
// with textContent only (the site's policy enforces Trusted Types and no
// policy exists); it sends the passage, the block it is in, and nothing
// else. Keyboard: the Explain button follows the selected block in the tab
// order (Tab from the selection, or from the page's links, reaches it
// before the rest of the article); Escape closes the popover and gives the
// focus back.
(() => {
  'use strict';
  const root = document.querySelector('[data-explain]');
  if (!root || !window.fetch || !window.TextDecoder) return;
  const endpoint = root.getAttribute('data-explain');
  const zh = /^zh/.test(document.documentElement.lang || '');
  const words = zh ? {
    explain: '解释', title: '解释', close: '关闭', asking: '正在解释…', done: '解释完毕。',
    extractive: '摘录：由本站从文章中整理，未使用模型。', model: (m) => '由 ' + m + ' 撰写。', cached: '（缓存）',
    limited: (s) => '你在短时间内请求了较多解释。请 ' + s + ' 秒后再试。',
    busy: (s) => '现在请求解释的读者较多。请 ' + s + ' 秒后再试。',
    disabled: '本站已关闭文章解释。', failed: '未能解释：', offline: '无法连接到本站。',
  } : {
    explain: 'Explain', title: 'Explanation', close: 'Close', asking: 'Explaining…', done: 'Explanation complete.',
    extractive: 'Extractive: assembled from this article by the site, no model was used.', model: (m) => 'Written by ' + m + '.', cached: ' (from the cache)',
    limited: (s) => 'You have asked for several explanations in a short while. Please try again in ' + s + ' seconds.',
    busy: (s) => 'Many readers are asking for explanations right now. Please try again in ' + s + ' seconds.',
    disabled: 'Explanations are switched off on this site.', failed: 'No explanation: ', offline: 'The site could not be reached.',
  };

  const el = (tag, attrs, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    for (const k of kids) n.append(k);
    return n;
  };

  const button = el('button', { type: 'button', id: 'explain-button', class: 'explain-button', hidden: '' }, words.explain);
  const title = el('h2', { id: 'explain-title', tabindex: '-1' }, words.title);
  const quote = el('blockquote', { id: 'explain-passage' });
  const label = el('p', { id: 'explain-label', class: 'explain-label' });
  const answer = el('div', { id: 'explain-answer', class: 'explain-answer' });
  const status = el('p', { id: 'explain-status', class: 'explain-status', role: 'status' });
  const close = el('button', { type: 'button', id: 'explain-close', class: 'explain-close' }, words.close);
  const popover = el('section', { id: 'explain-popover', class: 'explain-popover', role: 'dialog', 'aria-labelledby': 'explain-title', hidden: '' },
    el('div', { class: 'explain-head' }, title, close), quote, label, answer, status);
  root.append(button);
  document.body.append(popover);

  let chosen = null; // {passage, block, anchor}: what the button would explain
  let running = null; // the AbortController of the answer streaming

  // blockOf is the article's top-level element holding node, and its
  // data-block id (the block of a list item or a table cell counts).
  const blockOf = (node) => {
    let n = node && node.nodeType === 1 ? node : node && node.parentElement;
    let id = '';
    while (n && n !== root) {
      if (!id && n.hasAttribute('data-block')) id = n.getAttribute('data-block');
      if (n.parentElement === root) return { top: n, id };
      n = n.parentElement;
    }
    return null;
  };

  const readSelection = () => {
    const sel = document.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    if (!root.contains(range.commonAncestorContainer)) return null;
    const passage = sel.toString().trim();
    if (!passage) return null;
    const start = blockOf(range.startContainer);
    const end = blockOf(range.endContainer);
    if (!start || !end) return null;
    const rect = range.getBoundingClientRect();
    return { passage, block: start.id === end.id ? start.id : '', anchor: end.top, rect };
  };

  const place = (s) => {
    // The button follows the selected block in the DOM, so Tab from the
    // selection reaches it, and is drawn just below the selection.
    if (button.previousElementSibling !== s.anchor) s.anchor.after(button);
    const box = root.getBoundingClientRect();
    button.style.top = Math.round(s.rect.bottom - box.top + 6) + 'px';
    button.style.left = Math.max(0, Math.round(s.rect.left - box.left)) + 'px';
    button.hidden = false;
  };

  document.addEventListener('selectionchange', () => {
    const s = readSelection();
    if (!s && (document.activeElement === button || popover.contains(document.activeElement))) return; // the chosen passage stays
    if (!s) {
      button.hidden = true;
      chosen = null;
      return;
    }
    chosen = s;
    place(s);
  });
  // Pressing the button must not clear the selection it explains.
  button.addEventListener('mousedown', (e) => e.preventDefault());
  button.addEventListener('click', () => {
    if (chosen) ask(chosen);
  });
  close.addEventListener('click', () => hide(true));
  popover.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      hide(true);
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !popover.hidden) hide(true);
  });

  function hide(refocus) {
    if (running) running.abort();
    running = null;
    popover.hidden = true;
    if (refocus && !button.hidden) button.focus();
  }

  function setState(state, text) {
    popover.setAttribute('data-state', state);
    status.textContent = text;
  }

  async function ask(s) {
    if (running) running.abort();
    const ctl = new AbortController();
    running = ctl;
    quote.textContent = s.passage;
    label.textContent = '';
    label.removeAttribute('data-extractive');
    answer.textContent = '';
    popover.hidden = false;
    setState('asking', words.asking);
    const r = button.getBoundingClientRect();
    popover.style.top = Math.round(r.bottom + window.scrollY + 6) + 'px';
    popover.style.left = Math.round(Math.max(8, Math.min(r.left, document.documentElement.clientWidth - popover.offsetWidth - 8)) + window.scrollX) + 'px';
    title.focus();
    let res;
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        credentials: 'same-origin',
        body: JSON.stringify(s.block ? { passage: s.passage, block: s.block } : { passage: s.passage }),
        signal: ctl.signal,
      });
    } catch (err) {
      if (!ctl.signal.aborted) setState('error', words.offline);
      return;
    }
    if (!res.ok) {
      refused(res, await res.json().catch(() => ({})));
      return;
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          event(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
        }
      }
    } catch (err) {
      if (!ctl.signal.aborted) setState('error', words.offline);
      return;
    }
    if (popover.getAttribute('data-state') === 'streaming') setState('done', words.done);
  }

  function event(chunk) {
    let type = 'message';
    let data = '';
    for (const line of chunk.split('\n')) {
      if (line.startsWith('event:')) type = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trim();
    }
    let v = {};
    try {
      v = JSON.parse(data || '{}');
    } catch (err) {
      return;
    }
    switch (type) {
      case 'meta':
        if (v.extractive) label.setAttribute('data-extractive', 'true');
        label.textContent = (v.extractive ? words.extractive : words.model(v.model || v.provider || '')) + (v.cached ? words.cached : '');
        setState('streaming', words.asking);
        break;
      case 'delta':
        answer.append(v.text || '');
        break;
      case 'done':
        setState('done', words.done);
        break;
      case 'error':
        setState('error', words.failed + (v.message || v.code || ''));
        break;
    }
  }

  function refused(res, body) {
    const e = body.error || {};
    const after = parseInt(res.headers.get('Retry-After') || '', 10) || 60;
    if (res.status === 429) setState('limited', words.limited(after));
    else if (res.status === 503) setState('limited', words.busy(after));
    else if (e.kind === 'disabled') setState('error', words.disabled);
    else setState('error', words.failed + (e.message || res.status));
  }
})();
