// askbridge — the built-in web page.
//
// Shows the questions agents send to `web` (or, opened as `/#ask=<id>`, the
// one ask an agent host links to, wherever it was posted) and answers them
// through the same HTTP API every client uses:
//   GET  /v1/events[?ask=id]              live events (SSE, read with fetch so
//                                         the bearer token can be sent)
//   GET  /v1/asks?status=pending&channel=web
//   GET  /v1/asks/{id}
//   POST /v1/asks/{id}/reply              {"answers": {...}} or {"text": "..."}
//
// Plain modern JavaScript: no build step, no dependencies, nothing loaded
// from elsewhere. Text from agents is only ever put in the page with
// textContent (the `h` helper), never parsed as HTML.
//
// The page's own words are the server's phrase table (askbridge's core
// table, the same words every channel uses), inline in the page as the
// `#phrases` JSON in every language it speaks. `t('page_send')` looks one
// up in the current language (`t('page_n_questions', { n: 3 })` fills a
// template): the person's choice on the language switch (kept in
// localStorage), else the one the server picked for the browser
// (`<html lang>`). No user-facing words are written here.

'use strict';

(() => {
  const TOKEN_KEY = 'askbridge.token';
  const LOCALE_KEY = 'askbridge.locale';
  /** The "(Recommended)" markers the core recognises, at the end of a label. */
  const RECOMMENDED_MARKER =
    /\s*(?:\(recommended\)|\[recommended\]|（recommended）|\(推荐\)|（推荐）|\(建议\)|（建议）|\(แนะนำ\))\s*$/iu;
  const STREAM_SILENCE_MS = 45000; // the server sends a keep-alive every 15 s
  const NOTICE_MS = 8000;

  // ---------------------------------------------------------------- DOM

  /** Properties set directly; everything else is an attribute. */
  const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'type', 'id', 'name', 'placeholder', 'rows', 'htmlFor', 'tabIndex']);

  /**
   * Creates an element. `props.text` sets textContent, `on*` functions are
   * listeners, `class` the class name; children are nodes or strings
   * (added as text nodes), null/false skipped, arrays flattened.
   */
  function h(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
      else if (PROPS.has(key)) node[key] = value;
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';
  /** Icon paths (24×24); drawn, not emoji, so they look the same everywhere. */
  const ICONS = {
    star: 'M12 2.6l2.85 5.9 6.5.85-4.75 4.5 1.2 6.45L12 17.2l-5.8 3.1 1.2-6.45-4.75-4.5 6.5-.85z',
    check: 'M4.5 12.5l5 5 10-11',
    skip: 'M5 5.5l7.5 6.5L5 18.5M18 5.5v13',
    clock: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18zM12 7.5V12l3 2',
    cross: 'M6.5 6.5l11 11M17.5 6.5l-11 11',
    alert: 'M12 3.5L2.5 20h19zM12 10v4.5M12 17.2v.3',
    dot: 'M12 9a3 3 0 1 0 0 6a3 3 0 1 0 0-6z',
  };

  /** A decorative icon (hidden from assistive technology). */
  function icon(name) {
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('focusable', 'false');
    svg.setAttribute('class', 'icon icon-' + name);
    const path = document.createElementNS(SVG_NS, 'path');
    path.setAttribute('d', ICONS[name] || ICONS.dot);
    svg.append(path);
    return svg;
  }

  const $ = (id) => document.getElementById(id);
  const els = {
    languages: $('languages'),
    conn: $('conn'),
    connText: $('conn-text'),
    timeline: $('timeline'),
    feed: $('feed'),
    empty: $('empty'),
    notice: $('notice'),
    panel: $('panel'),
    composer: $('composer'),
    input: $('composer-input'),
    send: $('composer-send'),
  };

  // -------------------------------------------------------------- state

  /**
   * One ask the page knows about.
   * @typedef {{id: string, data: any, ended: boolean, seq: number,
   *   entry: HTMLElement|null, reply: HTMLElement|null,
   *   draft: {step: number, values: Object<string, any>, dirty: boolean, error: string},
   *   submitting: boolean, endedWhileSubmitting: any, endedHere: boolean|null}} Rec
   */

  const S = {
    token: null,
    /** `#session=name`: only asks to `web:name`; none: every web ask. */
    session: null,
    /** `#ask=id`: only that ask, wherever it was posted (the link an agent host shows). */
    only: null,
    /** @type {Map<string, Rec>} */
    asks: new Map(),
    currentId: null,
    collapsed: false,
    /** Bumped by every event, to tell stale list answers from fresh events. */
    eventSeq: 0,
    historyLoaded: false,
    panelKey: '',
    noticeTimer: 0,
    /** The language shown: a tag of `LOCALES`. */
    locale: '',
    /** Its phrases, by name. */
    phrases: {},
  };

  // ------------------------------------------------------------- words

  /** Every language the server speaks: `[{tag, name, phrases}]`. */
  const LOCALES = readLocales();

  function readLocales() {
    try {
      const data = JSON.parse($('phrases').textContent);
      if (data && Array.isArray(data.locales) && data.locales.length) return data.locales;
    } catch (_) { /* not there: names stand in for the words */ }
    return [{ tag: document.documentElement.lang || 'en', name: '', phrases: {} }];
  }

  /**
   * A phrase in the current language, its `{name}` placeholders filled
   * from `values` in one pass (inserted values are not scanned again).
   */
  function t(name, values) {
    const template = S.phrases[name];
    if (typeof template !== 'string') return name;
    return template.replace(/\{(\w+)\}/g, (whole, key) =>
      (values && Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : whole));
  }

  const knownLocale = (tag) => LOCALES.some((l) => l.tag === tag);

  /** The person's choice on this page, else the server's pick for the browser. */
  function initialLocale() {
    let chosen = null;
    try { chosen = localStorage.getItem(LOCALE_KEY); } catch (_) { /* storage off */ }
    if (knownLocale(chosen)) return chosen;
    const served = document.documentElement.lang;
    return knownLocale(served) ? served : LOCALES[0].tag;
  }

  /** Switches the words, `<html lang>` and the page's fixed texts to `tag`. */
  function useLocale(tag) {
    const locale = LOCALES.find((l) => l.tag === tag) || LOCALES[0];
    S.locale = locale.tag;
    S.phrases = locale.phrases || {};
    document.documentElement.lang = locale.tag;
    for (const node of document.querySelectorAll('[data-phrase]')) node.textContent = t(node.dataset.phrase);
    for (const node of document.querySelectorAll('[data-phrase-label]')) node.setAttribute('aria-label', t(node.dataset.phraseLabel));
    for (const button of els.languages.children) button.setAttribute('aria-pressed', String(button.lang === S.locale));
  }

  /** The language switch: one button per language, in its own name. */
  function renderLanguages() {
    if (LOCALES.length < 2) return;
    els.languages.replaceChildren(...LOCALES.map((l) => h('button', {
      type: 'button',
      class: 'language',
      lang: l.tag,
      'aria-pressed': String(l.tag === S.locale),
      onclick: () => chooseLocale(l.tag),
    }, l.name)));
  }

  /** The switch was used: remember it and say everything again in that language. */
  function chooseLocale(tag) {
    try { localStorage.setItem(LOCALE_KEY, tag); } catch (_) { /* not remembered */ }
    useLocale(tag);
    setConn(els.conn.dataset.state);
    for (const rec of S.asks.values()) {
      if (rec.entry && rec.data.ask) renderEntry(rec);
      if (rec.reply) swap(rec, 'reply', replyNode(rec));
    }
    renderPanel({ force: true });
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    const token = params.get('token');
    if (token) {
      try { sessionStorage.setItem(TOKEN_KEY, token); } catch (_) { /* storage off: keep in memory */ }
      params.delete('token');
      const rest = params.toString();
      history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
    }
    let stored = null;
    try { stored = sessionStorage.getItem(TOKEN_KEY); } catch (_) { /* ignore */ }
    S.token = token || stored;
    S.session = params.get('session');
    S.only = params.get('ask');
  }

  // ---------------------------------------------------------------- API

  function authHeaders(extra) {
    const headers = Object.assign({ Accept: 'application/json' }, extra || {});
    if (S.token) headers.Authorization = 'Bearer ' + S.token;
    return headers;
  }

  /** A JSON request; never throws: `{ok, status, data}` (status 0: network). */
  async function api(path, options) {
    const opts = options || {};
    const init = { method: opts.method || 'GET', headers: authHeaders(), cache: 'no-store' };
    if (opts.body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(opts.body);
    }
    try {
      const res = await fetch(path, init);
      let data = null;
      try { data = await res.json(); } catch (_) { /* not JSON */ }
      if (res.status === 401 || res.status === 403) setConn('auth');
      return { ok: res.ok, status: res.status, data };
    } catch (_) {
      return { ok: false, status: 0, data: null };
    }
  }

  const askPath = (id) => '/v1/asks/' + encodeURIComponent(id);

  function errorMessage(res) {
    const message = res.data && res.data.error && res.data.error.message;
    if (message) return String(message);
    if (res.status === 0) return t('page_unreachable');
    if (res.status === 401 || res.status === 403) return t('page_needs_token');
    return t('page_http_error', { status: res.status });
  }

  // ------------------------------------------------------ event stream

  const stream = { controller: null, backoff: 1000, watchdog: 0, retryTimer: 0 };

  function setConn(state) {
    els.conn.dataset.state = state;
    els.connText.textContent = {
      connecting: t('page_connecting'),
      live: t('page_live'),
      offline: t('page_offline'),
      auth: t('page_token_needed'),
    }[state] || state;
  }

  function scheduleReconnect(delay) {
    clearTimeout(stream.retryTimer);
    stream.retryTimer = setTimeout(connect, delay);
  }

  function armWatchdog(controller) {
    clearTimeout(stream.watchdog);
    stream.watchdog = setTimeout(() => controller.abort(), STREAM_SILENCE_MS);
  }

  /** Opens `/v1/events` and reads it until it ends, then reconnects. */
  async function connect() {
    clearTimeout(stream.retryTimer);
    if (stream.controller) stream.controller.abort();
    const controller = new AbortController();
    stream.controller = controller;
    if (els.conn.dataset.state !== 'auth') setConn(els.conn.dataset.state === 'live' ? 'offline' : 'connecting');
    let res;
    try {
      const path = S.only ? '/v1/events?ask=' + encodeURIComponent(S.only) : '/v1/events';
      res = await fetch(path, { headers: authHeaders({ Accept: 'text/event-stream' }), cache: 'no-store', signal: controller.signal });
    } catch (_) {
      return streamLost(controller);
    }
    if (res.status === 401 || res.status === 403) {
      setConn('auth');
      scheduleReconnect(30000);
      return;
    }
    if (!res.ok || !res.body) return streamLost(controller);
    stream.backoff = 1000;
    setConn('live');
    armWatchdog(controller);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let name = '';
    let data = [];
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        armWatchdog(controller);
        buffer += value;
        let newline;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          let line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line.endsWith('\r')) line = line.slice(0, -1);
          if (line === '') {
            if (data.length) dispatch(name || 'message', data.join('\n'));
            name = '';
            data = [];
          } else if (!line.startsWith(':')) {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            let text = colon < 0 ? '' : line.slice(colon + 1);
            if (text.startsWith(' ')) text = text.slice(1);
            if (field === 'event') name = text;
            else if (field === 'data') data.push(text);
          }
        }
      }
    } catch (_) { /* aborted or broken: reconnect */ }
    streamLost(controller);
  }

  function streamLost(controller) {
    clearTimeout(stream.watchdog);
    if (stream.controller !== controller) return; // replaced by a newer connection
    stream.controller = null;
    if (els.conn.dataset.state !== 'auth') setConn('offline');
    scheduleReconnect(stream.backoff);
    stream.backoff = Math.min(stream.backoff * 2, 15000);
  }

  function dispatch(name, text) {
    let data = null;
    try { data = JSON.parse(text); } catch (_) { return; }
    switch (name) {
      case 'ready':
        onReady();
        break;
      case 'resync':
        if (S.only) loadOnly(); else loadPending();
        break;
      case 'created':
      case 'updated':
      case 'ended':
        S.eventSeq += 1;
        upsert(data, S.eventSeq);
        break;
      default:
        break;
    }
  }

  async function onReady() {
    if (S.only) return loadOnly();
    if (!S.historyLoaded) {
      S.historyLoaded = true;
      await loadHistory();
    }
    await loadPending();
  }

  /** Recent ended asks, so a reload keeps some of the conversation. Best effort. */
  async function loadHistory() {
    const res = await api('/v1/asks?channel=web&limit=20');
    if (!res.ok || !res.data || !Array.isArray(res.data.asks)) return;
    const ended = res.data.asks
      .filter((a) => a && a.id && a.status !== 'pending' && a.ask && visible(a) && !S.asks.has(a.id))
      .sort((a, b) => time(a.createdAt) - time(b.createdAt))
      .slice(-20);
    for (const data of ended) {
      const rec = record(data, 0);
      endAsk(rec, data, { here: null, quiet: true });
    }
  }

  /** The pending list: asks we missed, and asks that ended while we were away. */
  async function loadPending() {
    const startSeq = S.eventSeq;
    const res = await api('/v1/asks?status=pending&channel=web');
    if (!res.ok || !res.data || !Array.isArray(res.data.asks)) return;
    const listed = new Set();
    for (const data of res.data.asks) {
      if (!data || !data.id || data.status !== 'pending') continue;
      listed.add(data.id);
      upsert(data, 0);
    }
    for (const rec of [...S.asks.values()]) {
      if (!rec.ended && !listed.has(rec.id) && rec.seq <= startSeq) refreshEnded(rec);
    }
  }

  /** `#ask=id`: that ask, pending or ended. */
  async function loadOnly() {
    const res = await api(askPath(S.only));
    if (!res.ok || !res.data || !res.data.id) {
      if (res.status === 404) showNotice(t('page_gone'));
      return;
    }
    if (res.data.status === 'pending') {
      upsert(res.data, 0);
    } else if (!S.asks.has(res.data.id)) {
      endAsk(record(res.data, 0), res.data, { here: null, quiet: true });
    }
  }

  async function refreshEnded(rec) {
    const res = await api(askPath(rec.id));
    if (res.ok && res.data && res.data.status && res.data.status !== 'pending') {
      endAsk(rec, res.data, { here: false });
    } else if (res.status === 404) {
      endAsk(rec, { status: 'gone' }, { here: false, quiet: true });
    }
  }

  // ------------------------------------------------------------- model

  const time = (value) => {
    const t = Date.parse(value);
    return Number.isNaN(t) ? Date.now() : t;
  };

  /** `web`, `web:name`, `web:name@user` → the session ('' for none); undefined when not web. */
  function targetSession(to) {
    if (typeof to !== 'string') return undefined;
    const match = /^web(?::([^@]*))?(?:@.*)?$/.exec(to);
    return match ? match[1] || '' : undefined;
  }

  /** Every place the ask is posted in: its `to` (or their list), then its escalation steps'. */
  function placesOf(data) {
    const ask = data.ask || {};
    const to = Array.isArray(ask.to) ? ask.to : [ask.to !== undefined ? ask.to : data.to];
    return to.concat((ask.escalate || []).map((step) => step.to)).filter((place) => typeof place === 'string');
  }

  function visible(data) {
    if (S.only) return data.id === S.only;
    const sessions = placesOf(data).map(targetSession).filter((session) => session !== undefined);
    if (data.to !== undefined && !sessions.length) return false;
    return S.session === null || sessions.includes(S.session);
  }

  /** Whether a place is this page. */
  function isHere(place) {
    const session = targetSession(place);
    return session !== undefined && (S.session === null || session === S.session);
  }

  /**
   * The escalation step that brings the ask to this page, when the page is
   * not among the places it was posted to at once (`{afterSeconds, to}`).
   */
  function passedOnStep(data) {
    if (S.only) return null;
    const ask = data.ask || {};
    const to = Array.isArray(ask.to) ? ask.to : [ask.to !== undefined ? ask.to : data.to];
    if (to.some(isHere)) return null;
    return (ask.escalate || []).find((step) => isHere(step.to)) || null;
  }

  const PLATFORM_NAMES = { telegram: 'Telegram', discord: 'Discord', slack: 'Slack', feishu: 'Feishu', lark: 'Lark', matrix: 'Matrix' };

  /** A place as a person calls it: the platform's name, or the web page. */
  function placeName(place) {
    return PLATFORM_NAMES[place.split(':')[0]] || t('web_page');
  }

  /** "↪ Passed on from Telegram after 10 min without an answer", or ''. */
  function passedOnLine(data) {
    const step = passedOnStep(data);
    const first = placesOf(data)[0];
    if (!step || !first) return '';
    const secs = step.afterSeconds;
    const after = secs < 60 ? t('duration_s', { s: secs }) : t('duration_min', { m: Math.floor(secs / 60) });
    return '↪ ' + t('passed_on', { place: placeName(first), after });
  }

  /** "⏰ Still waiting for your answer — expires in 5 min" once a reminder is due, else ''. */
  function reminderLine(data) {
    const due = (data.remindAt || []).some((at) => time(at) <= Date.now());
    return due ? '⏰ ' + t('still_waiting') + ' — ' + remaining(data.expiresAt) : '';
  }

  /** "Also asked in Telegram, Slack": the ask's places that are not this page. */
  function alsoIn(data) {
    const others = [];
    for (const place of placesOf(data)) {
      const name = PLATFORM_NAMES[place.split(':')[0]];
      if (name && !others.includes(name)) others.push(name);
    }
    return others.length ? t('page_also_in', { places: others.join(t('list_sep')) }) : '';
  }

  /** The record for an ask, created on first sight. */
  function record(data, seq) {
    let rec = S.asks.get(data.id);
    if (!rec) {
      rec = {
        id: data.id,
        data,
        ended: false,
        /** Where it ended: true in this tab, false elsewhere, null for history. */
        endedHere: null,
        seq,
        entry: null,
        reply: null,
        draft: { step: 0, values: {}, dirty: false, error: '' },
        submitting: false,
        endedWhileSubmitting: null,
        shown: false,
      };
      S.asks.set(data.id, rec);
    }
    rec.seq = Math.max(rec.seq, seq);
    return rec;
  }

  function upsert(data, seq) {
    if (!data || typeof data.id !== 'string' || !visible(data)) return;
    const known = S.asks.has(data.id);
    const rec = record(data, seq);
    if (rec.ended) return;
    if (data.status === 'pending') {
      rec.data = Object.assign({}, rec.data, data);
      if (!rec.data.ask) return;
      renderEntry(rec);
      if (!known) announceNew(rec);
      renderPanel();
    } else {
      // Tell the person only about asks they saw waiting.
      endAsk(rec, data, { here: false, quiet: !known || !rec.shown });
    }
  }

  /** A newly arrived ask becomes the one shown, unless the person is busy with another. */
  function announceNew(rec) {
    const current = S.currentId && S.asks.get(S.currentId);
    const busy = current && !current.ended && (current.draft.dirty || current.submitting);
    if (!busy) S.currentId = null; // the panel then shows the newest
    rec.shown = true;
  }

  function questions(rec) {
    return (rec.data.ask && Array.isArray(rec.data.ask.questions)) ? rec.data.ask.questions : [];
  }

  /** The questions still to answer (the server's `open` list, else all). */
  function openQuestions(rec) {
    const all = questions(rec);
    if (!Array.isArray(rec.data.open)) return all;
    const open = new Set(rec.data.open);
    return all.filter((q) => open.has(q.id));
  }

  function pendingRecs() {
    return [...S.asks.values()]
      .filter((r) => !r.ended && r.data.ask)
      .sort((a, b) => time(b.data.createdAt) - time(a.data.createdAt));
  }

  function titleOf(rec) {
    const ask = rec.data.ask || {};
    if (ask.title) return ask.title;
    const qs = questions(rec);
    if (qs.length === 1) return qs[0].header || t('page_question');
    return t('page_questions_from_agent');
  }

  /** "Staging (Recommended)" → "Staging" (for display only; answers keep the label verbatim). */
  function displayLabel(label) {
    const stripped = String(label).replace(RECOMMENDED_MARKER, '').trim();
    return stripped || String(label);
  }

  const fold = (s) => displayLabel(s).toLocaleLowerCase();

  /** Index of the one option to mark ⭐ Recommended, or -1. */
  function recommendedIndex(q) {
    const options = q.options || [];
    return options.findIndex((o) => o.recommended || RECOMMENDED_MARKER.test(o.label));
  }

  /** The draft value of a question, seeded from its default. */
  function valueOf(rec, q) {
    let v = rec.draft.values[q.id];
    if (v) return v;
    const def = Array.isArray(q.default) ? q.default.map(String)
      : typeof q.default === 'boolean' ? [q.default ? 'yes' : 'no']
        : typeof q.default === 'string' ? [q.default] : [];
    const options = q.options || [];
    const matches = (label) => def.some((d) => fold(d) === fold(label));
    v = { choice: null, checked: new Set(), other: '', text: '', skipped: false };
    if (q.type === 'single') {
      const found = options.find((o) => matches(o.label));
      v.choice = found ? found.label : null;
    } else if (q.type === 'multi') {
      for (const o of options) if (matches(o.label)) v.checked.add(o.label);
    } else if (q.type === 'confirm') {
      // Nothing picked unless the agent gave a default: a Submit never
      // answers "no" for the person.
      if (def.length) v.choice = ['yes', 'true', 'y'].includes(def[0].toLowerCase()) ? 'yes' : 'no';
    } else {
      v.text = def[0] || '';
    }
    rec.draft.values[q.id] = v;
    return v;
  }

  /** The answer to send for one question: `{answer}` or `{error}`. */
  function collect(rec, q) {
    const v = valueOf(rec, q);
    const optional = q.required === false;
    if (v.skipped && optional) return { answer: [] };
    const other = v.other.trim();
    switch (q.type) {
      case 'single':
        if (other) return { answer: [other] };
        if (v.choice !== null) return { answer: [v.choice] };
        return optional ? { answer: [] } : { error: t('page_choose_one') };
      case 'multi': {
        const picked = (q.options || []).map((o) => o.label).filter((l) => v.checked.has(l));
        if (other) picked.push(other);
        if (picked.length) return { answer: picked };
        return optional ? { answer: [] } : { error: t('page_choose_some') };
      }
      case 'confirm':
        if (other) return { answer: [other] };
        if (v.choice !== null) return { answer: [v.choice] };
        return optional ? { answer: [] } : { error: t('page_choose_one') };
      default: {
        const text = v.text.trim();
        if (text) return { answer: [text] };
        return optional ? { answer: [] } : { error: t('page_write_or_skip', { skip: t('skip') }) };
      }
    }
  }

  // ---------------------------------------------------------- timeline

  function clock(value) {
    const d = new Date(time(value));
    return d.toLocaleTimeString(S.locale, { hour: '2-digit', minute: '2-digit' });
  }

  function nearBottom() {
    const t = els.timeline;
    return t.scrollHeight - t.scrollTop - t.clientHeight < 80;
  }

  function scrollToEnd() {
    els.timeline.scrollTop = els.timeline.scrollHeight;
  }

  /** Puts `node` where the record's `key` node was, keeping its place in time. */
  function swap(rec, key, node) {
    const old = rec[key];
    if (old.dataset.ts !== undefined) node.dataset.ts = old.dataset.ts;
    old.replaceWith(node);
    rec[key] = node;
  }

  /** Adds a timeline entry in time order. */
  function place(node, ts) {
    const stick = nearBottom();
    els.empty.hidden = true;
    node.dataset.ts = String(ts);
    let before = null;
    for (const child of els.feed.children) {
      if (child.dataset.ts !== undefined && Number(child.dataset.ts) > ts) { before = child; break; }
    }
    els.feed.insertBefore(node, before);
    if (stick || !before) scrollToEnd();
  }

  /** The agent's message for an ask: title, questions, and its state. */
  function renderEntry(rec) {
    const ask = rec.data.ask || {};
    const qs = questions(rec);
    const answered = new Set(Array.isArray(rec.data.answered) ? rec.data.answered : []);
    const stateNode = rec.ended
      ? null
      : h('button', {
        type: 'button',
        class: 'entry-action',
        onclick: () => openAsk(rec.id),
      }, t('page_waiting_for_you'));
    const bubble = h('div', { class: 'bubble' },
      ask.title ? h('div', { class: 'bubble-title', text: ask.title }) : null,
      ask.context && ask.context.text
        ? h('pre', { class: 'bubble-context', dataset: { language: ask.context.language || '' } }, h('code', { text: ask.context.text }))
        : null,
      h('ol', { class: 'qlist' }, qs.map((q) => {
        const done = !rec.ended && answered.has(q.id);
        return h('li', { class: done ? 'done' : null },
          h('span', { class: 'chip', text: q.header || t('page_question') }), ' ',
          h('span', { text: q.question || '' }),
          done ? h('span', { class: 'visually-hidden', text: t('page_answered_mark') }) : null,
          done ? icon('check') : null);
      })),
      stateNode);
    const entry = h('article', { class: 'entry agent', dataset: { ask: rec.id } },
      h('div', { class: 'meta' }, h('span', { class: 'avatar', 'aria-hidden': 'true', text: '✦' }), t('page_agent_at', { time: clock(rec.data.createdAt) })),
      bubble);
    if (rec.entry) swap(rec, 'entry', entry);
    else {
      place(entry, time(rec.data.createdAt));
      rec.entry = entry;
    }
  }

  /** How an ended ask is labelled. */
  function endState(data) {
    if (data.status === 'answered') return { kind: 'answered', icon: 'check', label: t('answered') };
    switch (data.reason || data.status) {
      case 'skipped': return { kind: 'skipped', icon: 'skip', label: t('skipped') };
      case 'timeout':
      case 'timed_out': return { kind: 'expired', icon: 'clock', label: t('expired') };
      case 'cancelled': return { kind: 'cancelled', icon: 'cross', label: t('cancelled') };
      case 'delivery_failed': return { kind: 'failed', icon: 'alert', label: t('delivery_failed') };
      case 'gone': return { kind: 'cancelled', icon: 'cross', label: t('page_gone') };
      default: return { kind: 'ended', icon: 'dot', label: t('page_ended') };
    }
  }

  /**
   * The status of an ended ask: where it ended (`rec.endedHere`: true in
   * this tab, false elsewhere, null for history) and who answered.
   */
  function endLabel(rec) {
    const state = endState(rec.data);
    if (state.kind === 'answered' && rec.endedHere !== true) return answeredLabel(rec.data, rec.endedHere === false);
    if (state.kind === 'skipped' && rec.endedHere === false) return t('page_skipped_elsewhere');
    return state.label;
  }

  /** "Answered by alice on telegram", from the outcome's `answeredBy`. */
  function answeredLabel(data, elsewhere) {
    const by = data.answeredBy || {};
    if (by.channel === 'host') return t('answered_in_host_alone');
    const who = by.name || by.userId || '';
    const name = who !== 'web' ? who : '';
    const channel = by.channel && by.channel !== 'web' ? by.channel : '';
    if (name && channel) return t('page_answered_by_on', { name, channel });
    if (channel) return t('page_answered_on', { channel });
    if (name) return t('answered_by_alone', { name });
    return elsewhere ? t('page_answered_elsewhere') : t('answered');
  }

  /** The timeline's line for an ended ask: the answers' summary and the status. */
  function replyNode(rec) {
    const state = endState(rec.data);
    const showText = state.kind === 'answered' && typeof rec.data.text === 'string' && rec.data.text.trim();
    const mine = state.kind === 'answered' || state.kind === 'skipped';
    return h('article', { class: 'entry ' + (mine ? 'reply' : 'system') + ' ' + state.kind, dataset: { ask: rec.id } },
      showText ? h('div', { class: 'bubble' }, h('div', { class: 'summary', text: rec.data.text })) : null,
      h('div', { class: 'status status-' + state.kind },
        icon(state.icon),
        endLabel(rec),
        rec.data.ask ? null : ' — ' + titleOf(rec)));
  }

  /**
   * Marks an ask ended: its summary joins the timeline and it leaves the
   * panel. `here`: true when this tab answered, false when it happened
   * elsewhere, null for history.
   */
  function endAsk(rec, data, { here, quiet }) {
    if (rec.ended) return;
    if (rec.submitting && !here) {
      rec.endedWhileSubmitting = data;
      return;
    }
    rec.ended = true;
    rec.endedHere = here;
    rec.data = Object.assign({}, rec.data, data);
    if (rec.data.ask) renderEntry(rec);
    const reply = replyNode(rec);
    if (rec.reply) swap(rec, 'reply', reply);
    else {
      if (rec.entry) {
        place(reply, Math.max(time(rec.data.createdAt) + 1, here === null ? time(rec.data.answeredAt) : Date.now()));
      } else if (!quiet) {
        place(reply, Date.now());
      }
      rec.reply = reply;
    }
    if (S.currentId === rec.id) S.currentId = null;
    if (!here && !quiet && rec.data.ask) {
      const title = titleOf(rec);
      showNotice(endState(rec.data).kind === 'answered'
        ? t('page_notice_answered', { title })
        : t('page_notice_ended', { title, status: endLabel(rec) }));
    }
    renderPanel();
  }

  function note(text, kind) {
    place(h('div', { class: 'entry note ' + (kind || ''), role: kind === 'error' ? 'alert' : null, text }), Date.now());
  }

  function showNotice(text) {
    els.notice.textContent = text;
    els.notice.hidden = false;
    clearTimeout(S.noticeTimer);
    S.noticeTimer = setTimeout(() => { els.notice.hidden = true; }, NOTICE_MS);
  }

  // ------------------------------------------------------------- panel

  function openAsk(id) {
    S.currentId = id;
    S.collapsed = false;
    renderPanel({ focus: true, force: true });
  }

  function remaining(expiresAt) {
    if (!expiresAt) return '';
    const ms = time(expiresAt) - Date.now();
    if (ms <= 0) return t('page_expiring');
    const minutes = Math.ceil(ms / 60000);
    if (minutes < 2) return t('page_expires_soon');
    if (minutes < 60) return t('page_expires_min', { m: minutes });
    return t('page_expires_h_min', { h: Math.floor(minutes / 60), m: minutes % 60 });
  }

  /**
   * Draws the panel for the current ask. Skipped when nothing it shows has
   * changed, so an update never steals focus or a half-typed answer.
   */
  function renderPanel(opts) {
    const options = opts || {};
    const pending = pendingRecs();
    updateComposer(pending);
    if (!pending.length) {
      S.currentId = null;
      S.panelKey = '';
      els.panel.hidden = true;
      els.panel.replaceChildren();
      return;
    }
    if (!S.currentId || !pending.some((r) => r.id === S.currentId)) S.currentId = pending[0].id;
    const rec = S.asks.get(S.currentId);
    const steps = openQuestions(rec);
    rec.draft.step = Math.max(0, Math.min(rec.draft.step, steps.length - 1));
    const key = [rec.id, steps.map((q) => q.id).join(','), rec.draft.step, S.collapsed, pending.map((r) => r.id).join(','), rec.submitting, rec.draft.error, reminderLine(rec.data) !== ''].join('|');
    if (key === S.panelKey && !options.force) return;
    S.panelKey = key;

    const hadFocus = els.panel.contains(document.activeElement);
    const active = hadFocus ? document.activeElement : null;
    const restore = active && active.id ? { id: active.id, start: active.selectionStart, end: active.selectionEnd } : null;
    const index = pending.findIndex((r) => r.id === rec.id);
    const count = steps.length;
    const collapseButton = h('button', {
      type: 'button',
      class: 'icon-btn',
      'aria-expanded': String(!S.collapsed),
      'aria-controls': 'panel-body',
      'aria-label': S.collapsed ? t('page_expand_question') : t('page_collapse_question'),
      title: S.collapsed ? t('page_expand') : t('page_collapse'),
      onclick: () => setCollapsed(!S.collapsed),
    }, h('span', { class: 'chevron', 'aria-hidden': 'true' }));

    const switcher = pending.length > 1
      ? h('div', { class: 'switcher', role: 'group', 'aria-label': t('page_waiting_questions') },
        h('button', { type: 'button', class: 'icon-btn', 'aria-label': t('page_newer'), disabled: index === 0, onclick: () => openAsk(pending[index - 1].id) }, '‹'),
        h('span', { class: 'switcher-count', 'aria-live': 'polite', text: t('page_n_of_waiting', { n: index + 1, total: pending.length }) }),
        h('button', { type: 'button', class: 'icon-btn', 'aria-label': t('page_older'), disabled: index === pending.length - 1, onclick: () => openAsk(pending[index + 1].id) }, '›'))
      : null;

    const head = h('header', { class: 'panel-head' },
      h('div', { class: 'panel-heading', onclick: S.collapsed ? () => setCollapsed(false) : null },
        h('span', { class: 'pulse', 'aria-hidden': 'true' }),
        h('h2', { id: 'panel-title', text: titleOf(rec) }),
        S.collapsed && count > 1 ? h('span', { class: 'muted', text: t('page_n_questions', { n: count }) }) : null,
        // Passed on from a place: that says where else it is.
        passedOnLine(rec.data)
          ? h('span', { class: 'muted passed-on', text: passedOnLine(rec.data) })
          : alsoIn(rec.data) ? h('span', { class: 'muted also-in', text: alsoIn(rec.data) }) : null,
        reminderLine(rec.data)
          ? h('span', { class: 'reminder', id: 'panel-reminder', role: 'status', text: reminderLine(rec.data) })
          : h('span', { class: 'expires', id: 'panel-expires', text: remaining(rec.data.expiresAt) })),
      h('div', { class: 'panel-tools' }, switcher, collapseButton));

    const children = [head];
    if (!S.collapsed) children.push(h('div', { class: 'panel-body', id: 'panel-body' }, stepView(rec, steps)));
    els.panel.replaceChildren(...children);
    els.panel.hidden = false;
    els.panel.classList.toggle('collapsed', S.collapsed);
    els.panel.dataset.ask = rec.id;

    const again = restore && !options.focus && $(restore.id);
    if (again) {
      again.focus({ preventScroll: true });
      if (typeof restore.start === 'number' && typeof again.setSelectionRange === 'function') {
        try { again.setSelectionRange(restore.start, restore.end); } catch (_) { /* not a text field */ }
      }
    } else if (!S.collapsed && (options.focus || hadFocus || document.activeElement === document.body || document.activeElement === null)) {
      focusStep();
    } else if (S.collapsed && (options.focus || hadFocus)) {
      collapseButton.focus();
    }
  }

  function focusStep() {
    const body = $('panel-body');
    if (!body) return;
    const target = body.querySelector('input:checked, [data-autofocus]') || body.querySelector('input, textarea, button.btn-primary');
    if (target) target.focus({ preventScroll: true });
  }

  function setCollapsed(collapsed) {
    S.collapsed = collapsed;
    renderPanel({ focus: true, force: true });
  }

  /** One question of the stepper, with its controls and actions. */
  function stepView(rec, steps) {
    const step = rec.draft.step;
    const q = steps[step];
    if (!q) return h('p', { class: 'muted', text: t('page_nothing_left') });
    const last = step === steps.length - 1;
    const qid = 'q-' + step;
    const optional = q.required === false;

    const progress = steps.length > 1
      ? h('div', { class: 'segments', 'aria-hidden': 'true' }, steps.map((_, i) => h('span', { class: 'seg' + (i < step ? ' done' : i === step ? ' current' : '') })))
      : null;

    const headRow = h('div', { class: 'step-head' },
      h('span', { class: 'chip chip-strong', text: q.header || t('page_question') }),
      optional ? h('span', { class: 'chip chip-quiet', text: t('hint_optional') }) : null,
      steps.length > 1 ? h('span', { class: 'step-count', 'aria-label': t('page_question_n_of', { n: step + 1, total: steps.length }), text: (step + 1) + '/' + steps.length }) : null,
      progress);

    const error = h('p', { class: 'field-error', id: qid + '-error', role: 'alert', text: rec.draft.error || '' });
    error.hidden = !rec.draft.error;

    const actions = h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'btn btn-ghost', disabled: rec.submitting, title: t('page_skip_title'), onclick: () => skipAll(rec) }, t('skip')),
      h('span', { class: 'spacer' }),
      optional ? h('button', { type: 'button', class: 'btn', disabled: rec.submitting, onclick: () => skipQuestion(rec, q) }, t('skip_question')) : null,
      step > 0 ? h('button', { type: 'button', class: 'btn', disabled: rec.submitting, onclick: () => go(rec, step - 1) }, t('page_back')) : null,
      h('button', { type: 'submit', class: 'btn btn-primary', disabled: rec.submitting },
        rec.submitting ? t('page_sending') : last ? t('page_submit') : t('page_next')));

    const key = q.type === 'textarea' ? 'Ctrl+Enter' : 'Enter';
    const keys = [last ? t('page_key_submit', { key }) : t('page_key_continue', { key }), t('page_key_collapse')];
    const picks = q.type === 'confirm' ? 2 : (q.options || []).length;
    if (picks) keys.push(t('page_key_pick', { n: Math.min(picks, 9) }));

    const form = h('form', {
      class: 'step',
      novalidate: true,
      'aria-labelledby': qid,
      onsubmit: (e) => { e.preventDefault(); next(rec); },
      onkeydown: (e) => stepKeys(e, rec, q),
    },
    headRow,
    h('p', { class: 'question', id: qid, text: q.question || '' }),
    controls(rec, q, qid),
    error,
    actions,
    h('p', { class: 'hint', text: keys.join(' · ') }));
    return form;
  }

  /** The inputs for one question. */
  function controls(rec, q, qid) {
    const v = valueOf(rec, q);
    const touched = () => {
      rec.draft.dirty = true;
      v.skipped = false;
      if (rec.draft.error) {
        rec.draft.error = '';
        const err = $(qid + '-error');
        if (err) { err.hidden = true; err.textContent = ''; }
      }
    };
    const described = qid + '-error';

    if (q.type === 'single' || q.type === 'multi' || q.type === 'confirm') {
      const multi = q.type === 'multi';
      // A yes/no question is two cards, sent as `yes` / `no`.
      const options = q.type === 'confirm'
        ? [{ label: 'yes', shown: t('yes') }, { label: 'no', shown: t('no') }]
        : (q.options || []);
      const star = q.type === 'confirm' ? -1 : recommendedIndex(q);
      const otherInput = h('input', {
        type: 'text',
        id: qid + '-other',
        class: 'text-input',
        placeholder: t('page_write_own'),
        value: v.other,
        'aria-describedby': described,
        oninput: (e) => {
          touched();
          v.other = e.target.value;
          if (!multi && v.other.trim()) {
            v.choice = null;
            for (const r of group.querySelectorAll('input[type=radio]')) r.checked = false;
          }
        },
      });
      const group = h('div', {
        class: 'cards',
        role: multi ? 'group' : 'radiogroup',
        'aria-labelledby': qid,
        'aria-describedby': described,
      }, options.map((o, i) => {
        const labelId = qid + '-o' + i;
        const input = h('input', {
          type: multi ? 'checkbox' : 'radio',
          name: qid,
          value: String(i),
          checked: multi ? v.checked.has(o.label) : v.choice === o.label,
          'aria-labelledby': labelId + (i === star ? ' ' + labelId + '-star' : ''),
          'aria-describedby': o.description ? labelId + '-desc' : null,
          onchange: (e) => {
            touched();
            if (multi) {
              if (e.target.checked) v.checked.add(o.label); else v.checked.delete(o.label);
            } else if (e.target.checked) {
              v.choice = o.label;
              v.other = '';
              otherInput.value = '';
            }
          },
        });
        return h('label', { class: 'card' + (i === star ? ' recommended' : '') },
          input,
          h('span', { class: 'card-main' },
            h('span', { class: 'card-top' },
              h('span', { class: 'card-label', id: labelId },
                q.letters ? h('span', { class: 'letter', text: String.fromCharCode(65 + i) + '.' }) : null,
                o.shown || displayLabel(o.label)),
              i === star ? h('span', { class: 'badge', id: labelId + '-star' }, icon('star'), t('recommended')) : null),
            o.description ? h('span', { class: 'card-desc', id: labelId + '-desc', text: o.description }) : null));
      }));
      return h('div', { class: 'controls' },
        group,
        h('div', { class: 'other' },
          h('label', { htmlFor: qid + '-other', class: 'other-label', text: t('other') }),
          otherInput));
    }

    const area = q.type === 'textarea';
    const field = h(area ? 'textarea' : 'input', {
      type: area ? null : 'text',
      rows: area ? 4 : null,
      class: area ? 'text-area' : 'text-input',
      id: qid + '-text',
      placeholder: q.placeholder || (area ? t('page_write_answer') : t('page_your_answer')),
      'aria-labelledby': qid,
      'aria-describedby': described,
      'data-autofocus': true,
      oninput: (e) => { touched(); v.text = e.target.value; },
    });
    field.value = v.text;
    return h('div', { class: 'controls' }, field);
  }

  /** Keyboard: Enter continues (Ctrl+Enter in a textarea), digits pick options. */
  function stepKeys(e, rec, q) {
    const target = e.target;
    const tag = target.tagName;
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey) {
      if (tag === 'TEXTAREA' && !(e.ctrlKey || e.metaKey)) return;
      if (tag === 'BUTTON') return; // the button's own action
      e.preventDefault();
      next(rec);
      return;
    }
    const typing = tag === 'TEXTAREA' || (tag === 'INPUT' && target.type === 'text');
    if (!typing && !e.ctrlKey && !e.metaKey && !e.altKey && /^[1-9]$/.test(e.key)) {
      const inputs = $('panel-body').querySelectorAll('.cards input');
      const input = inputs[Number(e.key) - 1];
      if (input && (q.type === 'single' || q.type === 'multi' || q.type === 'confirm')) {
        e.preventDefault();
        input.click();
        input.focus();
      }
    }
  }

  function go(rec, step) {
    rec.draft.step = step;
    rec.draft.error = '';
    renderPanel({ focus: true, force: true });
  }

  function next(rec) {
    if (rec.submitting) return;
    const steps = openQuestions(rec);
    const q = steps[rec.draft.step];
    if (!q) return;
    const result = collect(rec, q);
    if (result.error) return showError(rec, result.error);
    if (rec.draft.step < steps.length - 1) go(rec, rec.draft.step + 1);
    else submit(rec);
  }

  function skipQuestion(rec, q) {
    const v = valueOf(rec, q);
    v.skipped = true;
    rec.draft.dirty = true;
    const steps = openQuestions(rec);
    if (rec.draft.step < steps.length - 1) go(rec, rec.draft.step + 1);
    else submit(rec);
  }

  function showError(rec, message) {
    rec.draft.error = message;
    renderPanel({ focus: true });
  }

  async function submit(rec) {
    const steps = openQuestions(rec);
    const answers = {};
    for (let i = 0; i < steps.length; i += 1) {
      const result = collect(rec, steps[i]);
      if (result.error) {
        rec.draft.step = i;
        return showError(rec, result.error);
      }
      answers[steps[i].id] = result.answer;
    }
    await send(rec, { answers });
  }

  function skipAll(rec) {
    send(rec, { text: 'skip' });
  }

  /** Posts a reply and applies the result. */
  async function send(rec, body) {
    if (rec.submitting || rec.ended) return;
    rec.submitting = true;
    rec.draft.error = '';
    renderPanel();
    const res = await api(askPath(rec.id) + '/reply', { method: 'POST', body });
    rec.submitting = false;
    const late = rec.endedWhileSubmitting;
    rec.endedWhileSubmitting = null;
    const data = res.data || {};
    if (res.ok) {
      // `answered`, or `ended` (this reply ended it, e.g. a skip): done here.
      const ask = data.ask || {};
      if (ask.status && ask.status !== 'pending') {
        endAsk(rec, ask, { here: true });
      } else if (late) {
        endAsk(rec, late, { here: true });
      } else {
        // Accepted: some questions are still open, maybe with a question back.
        if (ask.id) rec.data = Object.assign({}, rec.data, ask);
        if (Array.isArray(data.stillOpen)) rec.data.open = data.stillOpen.map((s) => (typeof s === 'string' ? s : s && s.id)).filter(Boolean);
        const clarify = (Array.isArray(data.clarify) ? data.clarify : []).map((c) => clarifyText(rec, c)).filter(Boolean);
        rec.draft.step = 0;
        rec.draft.error = clarify.join(' ');
        if ('text' in body) {
          const open = openQuestions(rec).map((q) => q.header || q.id).join(t('list_sep'));
          note(clarify.length ? clarify.join('\n') : t('still_open') + t('sentence_sep') + open, 'info');
        }
        renderEntry(rec);
        renderPanel({ focus: true, force: true });
      }
      return;
    }
    const code = data.error && data.error.code;
    if (res.status === 409 || code === 'already_answered') {
      if (late) return endAsk(rec, late, { here: false });
      const fresh = await api(askPath(rec.id));
      if (fresh.ok && fresh.data && fresh.data.status !== 'pending') return endAsk(rec, fresh.data, { here: false });
      rec.draft.error = t('already_answered');
      renderPanel({ force: true });
      return;
    }
    if (late) return endAsk(rec, late, { here: false });
    rec.draft.error = errorMessage(res);
    if ('text' in body) note(rec.draft.error, 'error');
    renderPanel({ focus: true, force: true });
  }

  /** A clarifying question from the server, as one sentence. */
  function clarifyText(rec, item) {
    if (typeof item === 'string') return item;
    if (!item || typeof item !== 'object') return '';
    const text = item.message || item.text || item.prompt;
    if (text) return String(text);
    const q = questions(rec).find((x) => x.id === (item.id || item.question));
    const candidates = Array.isArray(item.candidates) ? item.candidates.map(displayLabel) : [];
    const header = q ? (q.header || q.id) : (item.id || t('page_question'));
    return candidates.length
      ? t('page_clarify', { q: header, options: candidates.join(t('list_sep')) })
      : t('page_answer_again', { q: header });
  }

  // ---------------------------------------------------------- composer

  function updateComposer(pending) {
    const list = pending || pendingRecs();
    const current = list.find((r) => r.id === S.currentId) || list[0];
    const enabled = Boolean(current);
    els.input.disabled = !enabled;
    els.send.disabled = !enabled;
    els.input.placeholder = enabled
      ? (openQuestions(current).length > 1 ? t('page_type_reply_keyed') : t('page_type_reply'))
      : t('page_no_questions');
    els.input.setAttribute('aria-label', enabled ? t('page_reply_to', { title: titleOf(current) }) : t('page_reply'));
  }

  function growComposer() {
    els.input.style.height = 'auto';
    els.input.style.height = Math.min(els.input.scrollHeight, 160) + 'px';
  }

  async function sendComposer() {
    const text = els.input.value.trim();
    const rec = S.currentId && S.asks.get(S.currentId);
    if (!text || !rec || rec.ended || rec.submitting) return;
    place(h('article', { class: 'entry me' }, h('div', { class: 'bubble' }, h('div', { class: 'summary', text }))), Date.now());
    els.input.value = '';
    growComposer();
    await send(rec, { text });
  }

  // -------------------------------------------------------------- start

  function start() {
    useLocale(initialLocale());
    renderLanguages();
    readHash();
    els.composer.addEventListener('submit', (e) => { e.preventDefault(); sendComposer(); });
    els.input.addEventListener('input', growComposer);
    els.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        sendComposer();
      }
    });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !els.panel.hidden && !S.collapsed) {
        e.preventDefault();
        setCollapsed(true);
      }
    });
    window.addEventListener('hashchange', () => {
      const { session, only } = S;
      readHash();
      if (S.session !== session || S.only !== only) location.reload();
    });
    window.addEventListener('online', () => { if (!stream.controller) connect(); });
    setInterval(() => {
      const rec = S.currentId && S.asks.get(S.currentId);
      renderPanel();
      const expires = $('panel-expires');
      if (expires && rec) expires.textContent = remaining(rec.data.expiresAt);
      const reminder = $('panel-reminder');
      if (reminder && rec) reminder.textContent = reminderLine(rec.data);
    }, 15000);
    connect();
  }

  start();
})();
