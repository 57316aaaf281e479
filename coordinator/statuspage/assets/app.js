// SPDX-License-Identifier: Apache-2.0
//
// The status page: polls the admin API of the member that served it, once a second, and renders
// what it answers. Everything it shows is built with textContent (node identities and errors come
// from edges and must never become markup). The admin token is kept in sessionStorage, so it
// lives as long as this tab and is sent only in the Authorization header, never in a URL.
'use strict';

(() => {
  const TOKEN_KEY = 'muster.adminToken';
  const POLL_MS = 1000;
  const REQUEST_TIMEOUT_MS = 5000;
  const FAILURES_EVERY = 2; // polls between two reads of the ledger's failure index (cheap at any size)
  const HISTORY_EVERY = 2; // polls between two reads of the selected node
  const MAX_SAMPLES = 600; // ten minutes of per-region counts at one sample a second
  const PAGE_LIMIT = 10000; // the admin API's largest page
  const MAX_FAILURES = 50; // of the ledger's newest 500
  const MAX_LEASE_NODES_SHOWN = 6;
  const STATES = ['waiting', 'leased', 'provisioned', 'deferred', 'shutdown', 'abandoned', 'gone', 'banned', 'held']; // api.NodeStates(), in its order
  const MAX_HELD = 500; // the first page of the held queue
  const HELD_EVERY = 2; // polls between two reads of the held queue

  const $ = (id) => document.getElementById(id);
  const page = {
    token: sessionStorage.getItem(TOKEN_KEY) || '',
    samples: [], // {at, regions: {region: {state: count}}}, oldest first
    polls: 0,
    timer: 0,
    generation: 0, // bumped on log-in and log-out so a poll of an old session stops
    selected: '',
    readSelected: false,
    failuresDue: true, // the next poll reads the failures (set again when a read fails)
    caller: null, // {name, role} the member authenticated, from status
    heldDue: true, // the next poll reads the held queue (set after an approve)
  };

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  const isAuthError = (e) => e instanceof APIError && (e.status === 401 || e.status === 403);

  async function get(path, query) {
    const url = query ? path + '?' + new URLSearchParams(query).toString() : path;
    const headers = { Accept: 'application/json' };
    if (page.token) headers.Authorization = 'Bearer ' + page.token;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), REQUEST_TIMEOUT_MS);
    try {
      let resp;
      try {
        resp = await fetch(url, { headers, signal: abort.signal, cache: 'no-store', credentials: 'same-origin', redirect: 'error' });
      } catch (e) {
        throw new APIError(0, 'unreachable', 'this member did not answer (' + (e.name === 'AbortError' ? 'timed out' : e.message) + ')');
      }
      let body = null;
      try {
        body = await resp.json();
      } catch (_) {
        body = null;
      }
      if (!resp.ok) {
        const msg = body && body.error ? body.error : 'HTTP ' + resp.status;
        throw new APIError(resp.status, body && body.code ? body.code : '', msg);
      }
      return body;
    } finally {
      clearTimeout(timer);
    }
  }

  // post sends a JSON body to an admin write of the API, with the admin token only (a reader's
  // certificate opens no write: the member answers 403, shown beside the queue).
  async function post(path, body) {
    const headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
    if (page.token) headers.Authorization = 'Bearer ' + page.token;
    let resp;
    try {
      resp = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), cache: 'no-store', credentials: 'same-origin', redirect: 'error' });
    } catch (e) {
      throw new APIError(0, 'unreachable', 'this member did not answer (' + e.message + ')');
    }
    let answer = null;
    try {
      answer = await resp.json();
    } catch (_) {
      answer = null;
    }
    if (!resp.ok) throw new APIError(resp.status, answer && answer.code ? answer.code : '', answer && answer.error ? answer.error : 'HTTP ' + resp.status);
    return answer;
  }

  // el builds an element; children are nodes or strings (always text, never markup).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const fmtTime = (s) => {
    if (!s) return '';
    const d = new Date(s);
    if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 2) return '';
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  };

  const nodeButton = (identity) => el('button', { type: 'button', class: 'link', 'data-node': identity }, identity);

  function setNote(id, text) {
    const e = $(id);
    e.textContent = text;
    e.hidden = !text;
  }

  // ---- status: members, leader, pause, counts --------------------------------------------------

  function renderStatus(st) {
    $('member').textContent = st.id + ' (' + st.state + ')';
    $('member-note').textContent = st.id;
    const leader = $('leader');
    leader.textContent = st.leader_id || 'none: election under way';
    leader.className = st.leader_id ? '' : 'error';
    $('term').textContent = String(st.term);
    // Who the member took this session for (auth.admins): a write above its role is refused.
    page.caller = st.caller || null;
    $('caller').textContent = st.caller ? 'signed in as ' + st.caller.name + ' (' + st.caller.role + ')' : '';
    $('applied').textContent = String(st.applied_index);
    $('commit').textContent = String(st.commit_index);

    const pause = $('pause');
    pause.textContent = st.paused ? 'paused' + (st.pause_reason ? ': ' + st.pause_reason : '') : 'running';
    pause.className = st.paused ? 'paused' : 'running';
    pause.dataset.paused = String(st.paused);

    const rows = (st.members || []).map((m) => {
      const isLeader = m.id === st.leader_id;
      return el('tr', { 'data-id': m.id, 'data-leader': String(isLeader), class: isLeader ? 'leader' : '' },
        el('td', {}, m.id, m.id === st.id ? ' (this member)' : ''),
        el('td', {}, el('span', { class: 'badge ' + (isLeader ? 'leader' : 'follower') }, isLeader ? 'leader' : 'follower')),
        el('td', {}, m.voter ? 'yes' : 'no'),
        el('td', {}, m.api_address || ''),
        el('td', {}, m.raft_address),
        el('td', { class: 'num', 'data-round-trip': m.round_trip || '' }, m.round_trip || (m.id === st.id ? '' : '-')));
    });
    $('members').tBodies[0].replaceChildren(...rows);
    renderRegions(st.regions || {});
  }

  function renderRegions(regions) {
    const head = el('tr', {}, el('th', {}, 'region'), ...STATES.map((s) => el('th', { class: 's-' + s }, s)), el('th', {}, 'total'));
    $('regions').tHead.replaceChildren(head);
    const names = Object.keys(regions).sort();
    const rows = names.map((r) => {
      const counts = regions[r] || {};
      let total = 0;
      const cells = STATES.map((s) => {
        const n = counts[s] || 0;
        total += n;
        return el('td', { class: 'num', 'data-state': s }, n);
      });
      return el('tr', { 'data-region': r }, el('td', {}, r), ...cells, el('td', { class: 'num', 'data-state': 'total' }, total));
    });
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: STATES.length + 2 }, 'no node registered yet')));
    $('regions').tBodies[0].replaceChildren(...rows);
  }

  // ---- per-region counts over time: a ring buffer in this tab ----------------------------------

  function addSample(st) {
    page.samples.push({ at: Date.now(), regions: st.regions || {} });
    if (page.samples.length > MAX_SAMPLES) page.samples.splice(0, page.samples.length - MAX_SAMPLES);
    renderCharts();
  }

  function renderCharts() {
    const names = new Set();
    for (const s of page.samples) for (const r of Object.keys(s.regions)) names.add(r);
    const W = 300;
    const H = 70;
    const charts = [...names].sort().map((region) => {
      const series = page.samples.map((s) => s.regions[region] || {});
      let max = 1;
      for (const c of series) for (const st of STATES) max = Math.max(max, c[st] || 0);
      const span = Math.max(series.length - 1, 60); // a fresh page draws from the left
      const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('width', W);
      svg.setAttribute('height', H);
      svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
      svg.setAttribute('role', 'img');
      svg.setAttribute('aria-label', 'node counts of ' + region + ' over time');
      const legend = [];
      for (const st of STATES) {
        if (!series.some((c) => c[st])) continue;
        const pts = series.map((c, i) => `${((i / span) * (W - 4) + 2).toFixed(1)},${(H - 2 - ((c[st] || 0) / max) * (H - 4)).toFixed(1)}`);
        if (pts.length === 1) pts.push(pts[0]);
        const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
        line.setAttribute('points', pts.join(' '));
        line.setAttribute('class', 's-' + st);
        svg.append(line);
        legend.push(el('span', { class: 's-' + st }, `${st} ${series[series.length - 1][st] || 0} `));
      }
      return el('div', { class: 'chart', 'data-region': region, 'data-samples': series.length },
        el('div', {}, el('b', {}, region), ` (max ${max})`), svg, el('div', { class: 'legend' }, ...legend));
    });
    $('charts').replaceChildren(...charts);
  }

  // ---- leases in flight: the leased nodes, grouped by lease ------------------------------------

  // leasesInFlight is every leased node grouped by lease, and the staleness of the answers, if a
  // member answered from its own copy of the ledger.
  async function leasesInFlight() {
    const byLease = new Map();
    let after = '';
    let stale = null;
    for (;;) {
      const q = { state: 'leased', limit: String(PAGE_LIMIT) };
      if (after) q.after = after;
      const resp = await get('/v1/admin/nodes', q);
      if (resp.stale) stale = resp.stale;
      for (const n of resp.nodes || []) {
        const id = n.lease_id || '(none)';
        if (!byLease.has(id)) byLease.set(id, { id, edge: n.edge || '', region: n.region, leasedAt: n.leased_at || '', nodes: [] });
        const l = byLease.get(id);
        l.nodes.push(n.identity);
        if (n.leased_at && n.leased_at < l.leasedAt) l.leasedAt = n.leased_at;
      }
      if (!resp.next) break;
      after = resp.next;
    }
    const leases = [...byLease.values()].sort((a, b) => (a.leasedAt < b.leasedAt ? 1 : a.leasedAt > b.leasedAt ? -1 : 0));
    return { leases, stale };
  }

  function renderLeases(leases) {
    $('lease-count').textContent = `(${leases.length})`;
    const rows = leases.map((l) => {
      const shown = l.nodes.slice(0, MAX_LEASE_NODES_SHOWN).flatMap((n) => [nodeButton(n), ' ']);
      const more = l.nodes.length > MAX_LEASE_NODES_SHOWN ? `+${l.nodes.length - MAX_LEASE_NODES_SHOWN} more` : '';
      return el('tr', { 'data-lease': l.id, 'data-edge': l.edge },
        el('td', { class: 'id' }, l.id),
        el('td', { class: 'edge' }, l.edge),
        el('td', {}, l.region),
        el('td', {}, `${l.nodes.length}: `, ...shown, more),
        el('td', { class: 'time' }, fmtTime(l.leasedAt)));
    });
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 5 }, 'no lease in flight')));
    $('leases').tBodies[0].replaceChildren(...rows);
  }

  // ---- recent failures: the ledger's index of failed attempts, abandoned and gone nodes ---------

  // The ledger keeps its newest failures in an index written with each result, so this reads
  // at most MAX_FAILURES records, never the nodes: the same cost at a hundred nodes or a million.
  async function recentFailures() {
    return get('/v1/admin/failures', { limit: String(MAX_FAILURES) });
  }

  // staleNote says that a member answered from its own copy of the ledger, without the leader.
  function staleNote(st) {
    if (!st) return '';
    return `stale: member ${st.member} answered from its own copy of the ledger (applied index ${st.applied_index}): ${st.reason}`;
  }

  function renderFailures(failures) {
    $('failure-count').textContent = `(newest ${failures.length})`;
    const rows = failures.map((f) =>
      el('tr', { 'data-node': f.identity, 'data-edge': f.edge || '' },
        el('td', {}, nodeButton(f.identity)),
        el('td', {}, f.region),
        el('td', {}, f.state),
        el('td', { class: 'num' }, f.attempts || 0),
        el('td', { class: 'error' }, f.error || f.reason),
        el('td', { class: 'edge' }, f.edge || ''),
        el('td', { class: 'time' }, fmtTime(f.at))));
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 7 }, 'no failure')));
    $('failures').tBodies[0].replaceChildren(...rows);
  }

  // ---- the held queue: nodes waiting for an operator's approve --------------------------------

  async function heldQueue() {
    return get('/v1/admin/nodes', { state: 'held', limit: String(MAX_HELD) });
  }

  function renderHeld(resp) {
    const nodes = resp.nodes || [];
    $('held-count').textContent = `(${nodes.length}${resp.next ? '+' : ''})`;
    const rows = nodes.map((n) => {
      const h = n.hold || {};
      return el('tr', { 'data-node': n.identity, 'data-reason': h.reason || '' },
        el('td', {}, nodeButton(n.identity)),
        el('td', {}, n.region),
        el('td', {}, h.reason || ''),
        el('td', { class: 'time' }, fmtTime(h.at)),
        el('td', { class: 'edge' }, h.edge || ''),
        el('td', { class: 'error' }, h.detail || ''),
        el('td', {}, el('button', { type: 'button', 'data-approve': n.identity, disabled: !canOperate() }, 'approve')));
    });
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 7 }, 'no node is held')));
    $('held').tBodies[0].replaceChildren(...rows);
  }

  // canOperate: approve needs a token of role operate or admin (a reader's is refused with 403).
  const canOperate = () => Boolean(page.token) && !(page.caller && page.caller.role === 'read');

  // approve sends one held node to waiting, with the reason typed above the queue.
  async function approve(identity) {
    setNote('held-result', 'approving ' + identity + '…');
    const reason = $('held-reason').value.trim();
    try {
      const r = await post('/v1/admin/operator', { verb: 'approve', nodes: [identity], reason: reason || undefined });
      const refused = (r.rejected || []).map((x) => `${x.identity}: ${x.reason}`);
      setNote('held-result', refused.length ? 'refused ' + refused.join('; ') : 'approved ' + identity);
    } catch (e) {
      setNote('held-result', 'approve ' + identity + ' failed: ' + e.message);
    }
    page.heldDue = true;
    restartPolling();
  }

  // ---- one node's history ----------------------------------------------------------------------

  function select(identity) {
    page.selected = identity;
    page.readSelected = true;
    $('history-node').textContent = identity;
    $('history-summary').textContent = 'reading…';
    $('history-table').tBodies[0].replaceChildren();
    $('history').dataset.node = '';
    $('history').hidden = false;
    restartPolling();
  }

  function renderNode(n) {
    const parts = [`state ${n.state}`, `region ${n.region}`, `attempts ${n.attempts}`];
    if (n.edge) parts.push(`edge ${n.edge}`);
    if (n.lease_id) parts.push(`lease ${n.lease_id}`);
    if (n.inventory_version) parts.push(`version ${n.inventory_version}`);
    if (n.last_error) parts.push(`last error: ${n.last_error}`);
    $('history-summary').textContent = parts.join(' · ');
    const rows = (n.history || []).map((t) =>
      el('tr', {},
        el('td', { class: 'time' }, fmtTime(t.at)),
        el('td', {}, t.from || ''),
        el('td', {}, t.to),
        el('td', {}, t.reason || ''),
        el('td', {}, t.edge || ''),
        el('td', {}, t.lease_id ? `${t.lease_id} #${t.lease_token || ''}` : ''),
        el('td', { class: 'error' }, t.error || '')));
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 7 }, 'no history kept')));
    $('history-table').tBodies[0].replaceChildren(...rows);
    $('history').dataset.node = n.identity;
  }

  // ---- polling ---------------------------------------------------------------------------------

  async function poll(generation) {
    page.polls++;
    const n = page.polls;
    const problems = [];
    // fn may return a note to show beside its section, as when a member answered from its own copy.
    const task = async (name, fn, onError) => {
      try {
        const note = await fn();
        if (onError) onError(note || '');
      } catch (e) {
        if (isAuthError(e)) throw e;
        if (onError) onError(`not updated (${e.message}); showing the last answer`);
        else problems.push(`${name}: ${e.message}`);
      }
    };
    const tasks = [
      task('status', async () => {
        const st = await get('/v1/admin/status');
        if (generation !== page.generation) return;
        renderStatus(st);
        addSample(st);
      }),
      task('leases', async () => {
        const l = await leasesInFlight();
        if (generation === page.generation) renderLeases(l.leases);
        return staleNote(l.stale);
      }, (msg) => setNote('leases-stale', msg)),
    ];
    if (page.failuresDue || n % FAILURES_EVERY === 0) {
      page.failuresDue = false;
      tasks.push(task('failures', async () => {
        try {
          const f = await recentFailures();
          if (generation === page.generation) renderFailures(f.failures || []);
          return staleNote(f.stale);
        } catch (e) {
          page.failuresDue = true; // try again at the next poll, not five polls later
          throw e;
        }
      }, (msg) => setNote('failures-stale', msg)));
    }
    if (page.heldDue || n % HELD_EVERY === 0) {
      page.heldDue = false;
      tasks.push(task('held', async () => {
        const h = await heldQueue();
        if (generation === page.generation) renderHeld(h);
        return staleNote(h.stale);
      }, (msg) => setNote('held-stale', msg)));
    }
    if (page.selected && (page.readSelected || n % HISTORY_EVERY === 0)) {
      const identity = page.selected;
      page.readSelected = false;
      tasks.push(task('history', async () => {
        try {
          const node = await get('/v1/admin/nodes/' + encodeURIComponent(identity));
          if (generation === page.generation && identity === page.selected) renderNode(node);
          return staleNote(node.stale);
        } catch (e) {
          if (e instanceof APIError && e.status === 404 && identity === page.selected) {
            $('history-summary').textContent = 'no such node: ' + e.message;
            $('history-table').tBodies[0].replaceChildren();
            return;
          }
          page.readSelected = identity === page.selected;
          throw e;
        }
      }, (msg) => setNote('history-stale', msg)));
    }
    const results = await Promise.allSettled(tasks);
    if (generation !== page.generation) return;
    const denied = results.find((r) => r.status === 'rejected');
    if (denied) {
      logout('The admin API refused the credential: ' + denied.reason.message);
      return;
    }
    setNote('problem', problems.join('; '));
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    $('updated').dataset.polls = String(page.polls);
    page.timer = setTimeout(() => poll(generation), POLL_MS);
  }

  function restartPolling() {
    clearTimeout(page.timer);
    page.generation++;
    const g = page.generation;
    page.timer = setTimeout(() => poll(g), 0);
  }

  function showBoard() {
    $('login').hidden = true;
    $('summary').hidden = false;
    $('board').hidden = false;
    $('logout').hidden = !page.token;
    page.polls = 0;
    page.failuresDue = true;
    page.heldDue = true;
    restartPolling();
  }

  function logout(reason) {
    clearTimeout(page.timer);
    page.generation++;
    page.token = '';
    sessionStorage.removeItem(TOKEN_KEY);
    $('board').hidden = true;
    $('summary').hidden = true;
    $('login').hidden = false;
    setNote('login-error', reason || '');
    $('token').focus();
  }

  async function login(ev) {
    ev.preventDefault();
    const input = $('token');
    const token = input.value.trim();
    input.value = '';
    if (!token) return;
    const before = page.token;
    page.token = token;
    try {
      await get('/v1/admin/status');
    } catch (e) {
      page.token = before;
      setNote('login-error', isAuthError(e) ? 'That token does not open the admin API.' : 'Could not check the token: ' + e.message);
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    setNote('login-error', '');
    showBoard();
  }

  async function start() {
    $('login').addEventListener('submit', login);
    $('logout').addEventListener('click', () => logout(''));
    $('history-close').addEventListener('click', () => {
      page.selected = '';
      $('history').hidden = true;
    });
    $('find').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const id = $('find-identity').value.trim();
      if (id) select(id);
    });
    document.addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-node]');
      if (b) select(b.dataset.node);
      const a = ev.target.closest('button[data-approve]');
      if (a) approve(a.dataset.approve);
    });
    // With a stored token, or with a client certificate the member verified, the reads answer
    // at once; otherwise ask for the token.
    try {
      await get('/v1/admin/status');
    } catch (e) {
      if (isAuthError(e)) {
        logout(page.token ? 'The stored token was refused: ' + e.message : '');
        return;
      }
    }
    showBoard();
  }

  start();
})();
