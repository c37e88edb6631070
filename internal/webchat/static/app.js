// nodmix web chat. Plain JavaScript, no build step: everything the page knows about models,
// levels and sessions comes from the gateway's /v1 API (the picker's levels from the session
// row's thinkingLevels; the browser keeps no provider list of its own).
'use strict';

(() => {
  const $ = (sel) => document.querySelector(sel);
  const TOKEN_KEY = 'nodmix.token';
  const SESSION_KEY = 'nodmix.session';
  const OUTPUT_LIMIT = 4000; // characters of a tool output shown under /verbose full
  const PAGE = 100; // sessions the sidebar loads at a time ("More sessions" loads the next)
  const MAX_PAGE = 1000; // the most the API returns at once

  const state = {
    token: sessionStorage.getItem(TOKEN_KEY) || '',
    key: '',
    row: null, // the open session's row
    defaults: null, // the row a new session starts from
    rows: [], // the sidebar's sessions: the pages loaded so far
    next: null, // the cursor of the page after them (next_after); null after the last
    models: [],
    busy: false,
    rowSeq: 0, // counts the reads of a session row; only the latest one started is shown
  };

  // ---- API -----------------------------------------------------------------------------

  class APIError extends Error {
    constructor(status, body) {
      const e = (body && body.error) || {};
      super(e.message || `HTTP ${status}`);
      this.status = status;
      this.code = e.code || '';
      this.param = e.param || '';
      this.options = e.options || [];
    }
  }

  function headers(extra) {
    const h = Object.assign({ Accept: 'application/json' }, extra || {});
    if (state.token) h.Authorization = 'Bearer ' + state.token;
    return h;
  }

  // request sends one API call; a 401 asks for the bearer token once and retries.
  async function request(method, path, body, extraHeaders) {
    for (let attempt = 0; ; attempt++) {
      const init = { method, headers: headers(extraHeaders), cache: 'no-store' };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        init.headers['Content-Type'] = 'application/json';
      }
      const resp = await fetch(path, init);
      if (resp.status === 401 && attempt < 5) {
        await askToken(attempt > 0 || !!state.token);
        continue;
      }
      return resp;
    }
  }

  async function api(method, path, body) {
    const resp = await request(method, path, body);
    let data = null;
    try {
      data = await resp.json();
    } catch (_) {
      data = null;
    }
    if (!resp.ok) throw new APIError(resp.status, data);
    return data;
  }

  const sessionPath = (key) => '/v1/sessions/' + encodeURIComponent(key);

  function askToken(refused) {
    const dialog = $('#token-dialog');
    const input = $('#token');
    $('#token-error').hidden = !refused;
    input.value = '';
    return new Promise((resolve) => {
      const form = $('#token-form');
      const done = (ev) => {
        ev.preventDefault();
        const v = input.value.trim();
        if (!v) return;
        state.token = v;
        sessionStorage.setItem(TOKEN_KEY, v);
        form.removeEventListener('submit', done);
        dialog.close();
        resolve();
      };
      form.addEventListener('submit', done);
      if (!dialog.open) dialog.showModal();
      input.focus();
    });
  }

  // ---- small DOM helpers ---------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  function notice(msg, info) {
    const n = $('#notice');
    n.textContent = msg || '';
    n.hidden = !msg;
    n.classList.toggle('info', !!info);
  }

  function fmt(n) {
    return Number(n || 0).toLocaleString('en-US');
  }

  function scrollDown() {
    const t = $('#transcript');
    t.scrollTop = t.scrollHeight;
  }

  // ---- sessions ------------------------------------------------------------------------

  function newKey() {
    const b = new Uint8Array(4);
    crypto.getRandomValues(b);
    return 'web-' + Date.now().toString(36) + '-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  }

  // loadRows reads the sidebar's sessions again from the most recent: as many as it showed (so
  // that a create or a delete does not fold the pages the user opened), a page at least.
  async function loadRows() {
    const limit = Math.min(MAX_PAGE, Math.max(PAGE, state.rows.length));
    const list = await api('GET', '/v1/sessions?limit=' + limit);
    state.rows = list.data || [];
    state.next = list.has_more ? list.next_after : null;
    state.defaults = list.defaults || null;
    renderSessions();
  }

  // loadMore appends the next page. A session updated since the last page moved to the front,
  // before the cursor, so it is not listed again; it shows where it is on the next loadRows.
  async function loadMore() {
    if (!state.next) return;
    const list = await api('GET', '/v1/sessions?limit=' + PAGE + '&after=' + encodeURIComponent(state.next));
    const have = new Set(state.rows.map((r) => r.key));
    state.rows = state.rows.concat((list.data || []).filter((r) => !have.has(r.key)));
    state.next = list.has_more ? list.next_after : null;
    renderSessions();
  }

  function renderSessions() {
    const ul = $('#sessions');
    ul.replaceChildren();
    for (const r of state.rows) {
      const open = el('button', { type: 'button', class: 'session-open', 'data-key': r.key },
        el('span', { class: 'key', text: r.key }),
        el('span', { class: 'sub', text: `${r.model || 'no model'} · ${r.messages} message${r.messages === 1 ? '' : 's'}` }));
      open.addEventListener('click', () => openSession(r.key).catch((e) => notice(e.message)));
      const del = el('button', { type: 'button', class: 'session-delete', 'aria-label': 'Delete session ' + r.key, title: 'Delete', text: '×' });
      del.addEventListener('click', () => deleteSession(r.key).catch((e) => notice(e.message)));
      ul.append(el('li', { 'aria-current': r.key === state.key ? 'true' : null }, open, del));
    }
    if (state.next) {
      const more = el('button', { type: 'button', class: 'session-open more-sessions', id: 'more-sessions' },
        el('span', { class: 'key', text: 'More sessions' }));
      more.addEventListener('click', () => {
        more.disabled = true;
        loadMore().catch((e) => { more.disabled = false; notice(e.message); });
      });
      ul.append(el('li', {}, more));
    }
  }

  // busyTurn tells the user that the open session's turn is still streaming, which another
  // session's transcript would take over on screen; true when that is so.
  function busyTurn() {
    if (!state.busy) return false;
    notice('A turn is still running in this session: wait for its answer, then switch.');
    return true;
  }

  async function createSession() {
    if (busyTurn()) return;
    const key = newKey();
    await api('PATCH', sessionPath(key), {});
    await loadRows();
    await openSession(key);
  }

  async function deleteSession(key) {
    if (key === state.key && busyTurn()) return;
    try {
      await api('DELETE', sessionPath(key));
    } catch (e) {
      if (e.status !== 404) return notice(e.message);
    }
    await loadRows();
    if (key === state.key) {
      if (state.rows.length > 0) await openSession(state.rows[0].key);
      else await createSession();
    }
  }

  async function openSession(key) {
    if (key !== state.key && busyTurn()) return;
    const seq = ++state.rowSeq;
    let detail;
    try {
      detail = await api('GET', sessionPath(key));
    } catch (e) {
      if (e.status !== 404) throw e;
      await api('PATCH', sessionPath(key), {}); // a key from the address bar: start it
      detail = await api('GET', sessionPath(key));
      await loadRows();
    }
    if (seq !== state.rowSeq) return; // another session was opened, or the row read again
    state.key = key;
    sessionStorage.setItem(SESSION_KEY, key);
    const hash = '#session=' + encodeURIComponent(key);
    if (location.hash !== hash) history.replaceState(null, '', hash);
    notice('');
    applyRow(detail);
    renderTranscript(detail);
    renderSessions();
  }

  // applyRow shows a session row: header, model and thinking pickers, token economy.
  function applyRow(row) {
    state.row = row;
    $('#session-title').textContent = row.key;
    const l = row.levels || {};
    const bits = [row.model || 'no model', `verbose ${l.verbose}`, `reasoning ${l.reasoning}`];
    if (l.fast && l.fast !== 'off') bits.push(`fast ${l.fast}`);
    if (l.trace && l.trace !== 'off') bits.push(`trace ${l.trace}`);
    $('#session-meta').textContent = bits.join(' · ');
    if (row.modelError) notice(row.modelError);
    else if (row.notice) notice(row.notice, true);
    renderModelPicker(row);
    renderThinkingPicker(row);
    renderEconomy(row.economy || {});
  }

  // ---- pickers -------------------------------------------------------------------------

  // The thinking picker as the seed describes it: the first option clears the override and reads
  // "Inherited: <level>" (or "Off"); each level of the row's profile reads "Override: <label>".
  function renderThinkingPicker(row) {
    const sel = $('#thinking');
    const levels = row.thinkingLevels || [];
    const label = (id) => {
      const o = levels.find((x) => x.id === id);
      return o ? o.label : id || 'default';
    };
    const inherited = row.thinkingDefault || '';
    sel.replaceChildren(el('option', { value: '', text: inherited === 'off' ? 'Off' : 'Inherited: ' + label(inherited) }));
    for (const o of levels) sel.append(el('option', { value: o.id, text: 'Override: ' + o.label }));
    const chosen = (row.thinkingMenu || []).find((c) => c.selected);
    sel.value = chosen ? chosen.value : '';
  }

  function renderModelPicker(row) {
    const sel = $('#model');
    const def = (state.defaults && state.defaults.model) || (!row.modelPinned && row.model) || '';
    sel.replaceChildren(el('option', { value: '', text: def ? 'Default: ' + def : 'Default' }));
    const refs = state.models.map((m) => m.id);
    if (row.modelPinned && !refs.includes(row.model)) refs.push(row.model);
    for (const id of refs) sel.append(el('option', { value: id, text: id }));
    sel.value = row.modelPinned ? row.model : '';
  }

  async function patch(body) {
    const seq = ++state.rowSeq;
    try {
      const row = await api('PATCH', sessionPath(state.key), body);
      if (seq === state.rowSeq) applyRow(row);
      await loadRows();
    } catch (e) {
      notice(e.options && e.options.length ? `${e.message}` : e.message);
      if (state.row) applyRow(state.row); // nothing changed: show the stored state again
    }
  }

  // ---- transcript ----------------------------------------------------------------------

  function verbose() {
    return (state.row && state.row.levels && state.row.levels.verbose) || 'off';
  }

  function reasoningShown() {
    const r = state.row && state.row.levels && state.row.levels.reasoning;
    return r === 'on' || r === 'stream';
  }

  // toolLabel is a readable tool name, as the CLI's /verbose lines show it: "Exec", "Tool
  // search", "github: create_issue".
  function toolLabel(name) {
    const m = /^mcp__(.+?)__(.+)$/.exec(name || '');
    if (m) return m[1] + ': ' + m[2];
    const s = (name || '').replace(/_/g, ' ');
    return s ? s[0].toUpperCase() + s.slice(1) : 'Tool';
  }

  // salientArg is the argument that says what a call does, by the names tools commonly use.
  function salientArg(args) {
    for (const k of ['command', 'query', 'code', 'url', 'urls', 'path', 'id', 'name']) {
      const v = args[k];
      if (typeof v === 'string') {
        const t = v.trim();
        const nl = t.indexOf('\n');
        return nl >= 0 ? t.slice(0, nl) + ' …' : t;
      }
      if (Array.isArray(v)) return v.map(String).join(' ');
    }
    return '';
  }

  // toolSummary is the /verbose line of a call: "🛠️ <Tool>: <what it does>".
  function toolSummary(name, args) {
    let a = args;
    if (typeof a === 'string' && a) {
      try {
        a = JSON.parse(a);
      } catch (_) {
        a = null;
      }
    }
    let arg = a && typeof a === 'object' && !Array.isArray(a) ? salientArg(a) : '';
    if (arg.length > 80) arg = arg.slice(0, 80) + '…';
    return '🛠️ ' + toolLabel(name) + (arg ? ': ' + arg : '');
  }

  function toolItem(callID, name, args) {
    const li = el('li', { 'data-role': 'tool', 'data-call-id': callID || null, 'data-state': 'running' },
      el('div', { class: 'tool-line' },
        el('span', { class: 'tool-summary', text: toolSummary(name, args) }),
        el('span', { class: 'tool-state', text: 'running' })));
    return li;
  }

  function finishTool(li, isError) {
    li.dataset.state = isError ? 'error' : 'done';
    li.querySelector('.tool-state').textContent = isError ? 'failed' : 'done';
  }

  function toolOutput(li, text) {
    if (li.querySelector('.tool-output')) return;
    let t = text || '';
    if (t.length > OUTPUT_LIMIT) t = t.slice(0, OUTPUT_LIMIT) + '\n… (truncated)';
    li.append(el('pre', { class: 'tool-output', text: t }));
  }

  function bubble(role, text, cls) {
    return el('li', { 'data-role': role, class: cls || null, text });
  }

  function reasoningItem(text) {
    const li = el('li', { 'data-role': 'reasoning' }, el('span', { class: 'label', text: 'Thinking' }));
    const body = el('span', { class: 'body', text: text || '' });
    li.append(body);
    return li;
  }

  function renderTranscript(detail) {
    const ol = $('#transcript');
    ol.replaceChildren();
    const msgs = detail.transcript || [];
    if (msgs.length === 0) {
      ol.append(el('li', { class: 'empty', text: 'No messages yet. Say something, or type /think high.' }));
      return;
    }
    const v = verbose();
    const tools = new Map();
    for (const m of msgs) {
      for (const p of m.parts || []) {
        if (m.role === 'user' && p.kind === 'text') ol.append(bubble('user', p.text));
        else if (m.role === 'user' && p.kind === 'image') ol.append(bubble('user', '[image]'));
        else if (p.kind === 'reasoning' && reasoningShown()) ol.append(reasoningItem(p.text));
        else if (m.role === 'assistant' && p.kind === 'text' && p.text) ol.append(bubble('assistant', p.text));
        else if (p.kind === 'tool_call') {
          const li = toolItem(p.call_id, p.name, p.args);
          tools.set(p.call_id, li);
          if (v !== 'off') ol.append(li);
        } else if (p.kind === 'tool_result') {
          const li = tools.get(p.call_id) || toolItem(p.call_id, p.name || 'tool', null);
          finishTool(li, p.is_error);
          if (v === 'full') toolOutput(li, p.text);
          // Off: a failure is still shown, as its summary.
          if (v === 'off' && p.is_error && !li.isConnected) ol.append(li);
        }
      }
    }
    scrollDown();
  }

  // After a turn: fill in tool outputs (verbose full) from the stored transcript.
  function fillOutputs(detail) {
    if (verbose() !== 'full') return;
    const results = new Map();
    for (const m of detail.transcript || []) {
      for (const p of m.parts || []) if (p.kind === 'tool_result') results.set(p.call_id, p);
    }
    for (const li of document.querySelectorAll('#transcript [data-role="tool"][data-call-id]')) {
      const r = results.get(li.dataset.callId);
      if (r) toolOutput(li, r.text);
    }
  }

  // ---- sending -------------------------------------------------------------------------

  // readEvents yields the data of each server-sent event of a fetch body.
  async function* readEvents(body) {
    const reader = body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let m;
      while ((m = /\r?\n\r?\n/.exec(buf)) !== null) {
        const block = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
        if (data) yield data;
      }
    }
  }

  // directiveOnly guesses whether a message is nothing but directives (/think low, /verbose on):
  // the gateway answers those from the session without a model, and the page asks for that
  // answer in one piece. A wrong guess costs only the streaming of that one reply.
  const DIRECTIVES = /^\/(t|think|thinking|v|verbose|trace|fast|reasoning|reason|status)(:\S*)?$/i;
  function directiveOnly(text) {
    const words = text.trim().split(/\s+/);
    let i = 0;
    while (i < words.length) {
      if (!DIRECTIVES.test(words[i])) return false;
      const inline = words[i].includes(':');
      i++;
      for (let n = 0; !inline && n < 2 && i < words.length && !words[i].startsWith('/'); n++) i++;
    }
    return words.length > 0;
  }

  async function sendDirective(text) {
    const ol = $('#transcript');
    const resp = await request('POST', '/v1/chat/completions', { messages: [{ role: 'user', content: text }] },
      { 'X-Nodmix-Session': state.key });
    let data = null;
    try {
      data = await resp.json();
    } catch (_) {
      data = null;
    }
    if (!resp.ok) throw new APIError(resp.status, data);
    const msg = data.choices && data.choices[0] && data.choices[0].message;
    const reply = (msg && msg.content) || '';
    if (reply) ol.append(bubble('assistant', reply, 'system'));
  }

  async function send(text) {
    if (state.busy || !text.trim()) return;
    state.busy = true;
    $('#send').disabled = true;
    notice('');
    const ol = $('#transcript');
    const empty = ol.querySelector('.empty');
    if (empty) empty.remove();
    ol.append(bubble('user', text));
    scrollDown();

    const v = verbose();
    let answer = null; // the assistant bubble text goes to
    let reasoning = null;
    const tools = new Map();
    const closeAnswer = () => {
      if (answer) answer.classList.remove('streaming');
      answer = null;
    };
    try {
      if (directiveOnly(text)) {
        await sendDirective(text);
      } else {
        const resp = await request('POST', '/v1/chat/completions',
          { messages: [{ role: 'user', content: text }], stream: true, stream_options: { include_usage: true } },
          { 'X-Nodmix-Session': state.key, Accept: 'text/event-stream' });
        if (!resp.ok) {
          let data = null;
          try {
            data = await resp.json();
          } catch (_) {
            data = null;
          }
          throw new APIError(resp.status, data);
        }
        for await (const data of readEvents(resp.body)) {
          if (data === '[DONE]') break;
          let ev;
          try {
            ev = JSON.parse(data);
          } catch (_) {
            continue;
          }
          if (ev.error) {
            closeAnswer();
            ol.append(bubble('error', ev.error.message || 'the turn failed'));
            continue;
          }
          if (ev.nodmix_tool) {
            const t = ev.nodmix_tool;
            closeAnswer();
            reasoning = null;
            if (t.phase === 'start') {
              const li = toolItem(t.call_id, t.name, t.args);
              tools.set(t.call_id, li);
              if (v !== 'off') ol.append(li);
            } else {
              const li = tools.get(t.call_id) || toolItem(t.call_id, t.name, null);
              finishTool(li, t.is_error);
              if (v === 'off' && t.is_error && !li.isConnected) ol.append(li);
            }
            scrollDown();
            continue;
          }
          const d = ev.choices && ev.choices[0] && ev.choices[0].delta;
          if (!d) continue;
          if (Array.isArray(d.nodmix_trace)) {
            closeAnswer();
            for (const line of d.nodmix_trace) ol.append(bubble('trace', line));
          }
          if (d.reasoning_content) {
            if (!reasoning) {
              reasoning = reasoningItem('');
              ol.append(reasoning);
            }
            // append adds a text node: += would copy the whole text at every delta.
            reasoning.querySelector('.body').append(d.reasoning_content);
          }
          if (d.content) {
            if (!answer) {
              answer = bubble('assistant', '', 'streaming');
              ol.append(answer);
            }
            answer.append(d.content);
            // The marker of a system reply leads the answer, within its first two deltas.
            if (answer.childNodes.length <= 2 && answer.textContent.startsWith('⚙️')) answer.classList.add('system');
          }
          scrollDown();
        }
      }
    } catch (e) {
      ol.append(bubble('error', e.message));
    } finally {
      closeAnswer();
      state.busy = false;
      $('#send').disabled = false;
    }
    // The turn may have changed the session (a /think or /verbose directive, counters): read it
    // back, unless a pick or another session started a newer read meanwhile (shown over it, this
    // older row would undo the pick on screen).
    const seq = ++state.rowSeq;
    const key = state.key;
    try {
      const detail = await api('GET', sessionPath(key));
      if (seq === state.rowSeq) applyRow(detail);
      if (key === state.key) fillOutputs(detail);
      await loadRows();
    } catch (e) {
      notice(e.message);
    }
    scrollDown();
  }

  // ---- token economy -------------------------------------------------------------------

  const SVG = 'http://www.w3.org/2000/svg';

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The chart: three groups of bars, each scaled to its own largest value — schema bytes sent
  // against direct exposure, discovery operations, and tokenjuice characters before and after.
  function renderChart(e) {
    // The transcript's markers give raw and kept characters; the counter alone, the saving.
    const saved = Math.max(e.tokenjuiceSavedChars || 0, (e.tokenjuice && e.tokenjuice.savedChars) || 0);
    const tj = e.tokenjuice && e.tokenjuice.rawChars ? e.tokenjuice : { rawChars: saved, compactChars: 0 };
    const groups = [
      { title: 'Tool schemas up front (bytes)', bars: [
        { label: 'Sent', value: e.schemaBytes, color: '#3451d1' },
        { label: 'Direct exposure', value: e.directSchemaBytes, color: '#b8c1e6' }] },
      { title: 'Discovery operations', bars: [
        { label: 'Searches', value: e.searches, color: '#2f8f6a' },
        { label: 'Describes', value: e.describes, color: '#58b08c' },
        { label: 'Calls', value: e.calls, color: '#8fd0b3' },
        { label: 'Code runs', value: e.codeRuns, color: '#c2e6d4' }] },
      { title: 'Tool output compacted by tokenjuice (characters)', bars: [
        { label: 'Raw output', value: tj.rawChars, color: '#c77d1a' },
        { label: 'Kept', value: tj.compactChars, color: '#f0c27d' },
        { label: 'Saved', value: saved, color: '#e3a33d' }] },
    ];
    const W = 520, labelW = 130, barMax = W - labelW - 90, rowH = 20;
    let y = 4;
    const root = svg('svg', { width: W, viewBox: '0 0 ' + W + ' 10', role: 'img',
      'aria-label': `Schemas sent ${fmt(e.schemaBytes)} bytes against ${fmt(e.directSchemaBytes)} for direct exposure; ` +
        `${fmt(e.searches)} searches, ${fmt(e.describes)} describes, ${fmt(e.calls)} calls; tokenjuice saved ${fmt(saved)} characters` });
    for (const g of groups) {
      y += 14;
      root.append(svg('text', { x: 0, y, 'font-weight': 600 }, g.title));
      y += 8;
      const max = Math.max(1, ...g.bars.map((b) => b.value || 0));
      for (const b of g.bars) {
        const w = Math.max((b.value || 0) > 0 ? 2 : 0, Math.round((barMax * (b.value || 0)) / max));
        root.append(svg('text', { x: 0, y: y + 14, class: 'muted' }, b.label));
        root.append(svg('rect', { x: labelW, y: y + 3, width: w, height: rowH - 6, rx: 3, fill: b.color }));
        root.append(svg('text', { x: labelW + w + 6, y: y + 14 }, fmt(b.value)));
        y += rowH;
      }
      y += 6;
    }
    root.setAttribute('height', y);
    root.setAttribute('viewBox', `0 0 ${W} ${y}`);
    $('#economy-chart').replaceChildren(root);
  }

  function renderEconomy(e) {
    renderChart(e);
    const calls = e.modelCalls || 0;
    const per = (n) => (calls ? fmt(Math.round((n || 0) / calls)) : '0');
    const saved = e.savedSchemaBytes || 0;
    const pct = e.directSchemaBytes ? Math.round((100 * saved) / e.directSchemaBytes) : 0;
    const tj = e.tokenjuice;
    const rows = [
      ['Model calls', fmt(calls)],
      ['Schemas up front, per call', per(e.schemaCount)],
      ['Schema bytes sent', fmt(e.schemaBytes)],
      ['Direct exposure would send', fmt(e.directSchemaBytes)],
      ['Saved', `${fmt(saved)} bytes (${pct}%)`],
      ['Tools in the catalog now', fmt(e.catalogTools)],
      ['Tool calls', fmt(e.toolCalls)],
      ['Searches / describes / calls', `${fmt(e.searches)} / ${fmt(e.describes)} / ${fmt(e.calls)}`],
      ['Code runs', fmt(e.codeRuns)],
      ['Tokenjuice saved', `${fmt(Math.max(e.tokenjuiceSavedChars || 0, (tj && tj.savedChars) || 0))} chars` +
        (tj ? ` (${fmt(tj.results)} result${tj.results === 1 ? '' : 's'})` : '')],
      ['Input / output tokens', `${fmt(e.inputTokens)} / ${fmt(e.outputTokens)}`],
    ];
    const dl = $('#economy-numbers');
    dl.replaceChildren();
    for (const [k, v] of rows) dl.append(el('dt', { text: k }), el('dd', { text: v }));
  }

  // ---- wiring --------------------------------------------------------------------------

  function keyFromHash() {
    const m = /^#session=(.+)$/.exec(location.hash);
    if (!m) return '';
    try {
      return decodeURIComponent(m[1]);
    } catch (_) {
      return '';
    }
  }

  async function start() {
    $('#composer').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const box = $('#message');
      const text = box.value;
      if (!text.trim() || state.busy) return;
      box.value = '';
      send(text);
    });
    $('#message').addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        $('#composer').requestSubmit();
      }
    });
    $('#thinking').addEventListener('change', (ev) => {
      const v = ev.target.value;
      patch({ thinking: v === '' ? null : v });
    });
    $('#model').addEventListener('change', (ev) => {
      const v = ev.target.value;
      patch({ model: v === '' ? null : v });
    });
    $('#new-session').addEventListener('click', () => createSession().catch((e) => notice(e.message)));
    $('#economy-toggle').addEventListener('click', (ev) => {
      const open = ev.currentTarget.getAttribute('aria-expanded') !== 'true';
      ev.currentTarget.setAttribute('aria-expanded', String(open));
      $('#economy').hidden = !open;
    });
    window.addEventListener('hashchange', () => {
      const k = keyFromHash();
      if (k && k !== state.key) openSession(k).catch((e) => notice(e.message));
    });

    try {
      await loadRows();
      const models = await api('GET', '/v1/models');
      state.models = (models && models.data) || [];
      const want = keyFromHash() || sessionStorage.getItem(SESSION_KEY) || '';
      if (want) await openSession(want);
      else if (state.rows.length > 0) await openSession(state.rows[0].key);
      else await createSession();
      document.body.dataset.ready = 'true';
    } catch (e) {
      notice(e.message);
    }
  }

  start();
})();
