// `/organize` and `/organize/{id}`: the organiser's pages. The events list; a new event from
// its file (TOML or JSON, uploaded or pasted) or from a small form that writes the file, with
// the server's checks shown where they apply (line and column); then, for one event: publish,
// the tokens of every captain, player and arbiter on a printable sheet (name, role, team, the
// sign-in link), and moving a round.

import { h, fill } from '../dom.js';
import { t, lang, errorText } from '../i18n.js';
import { http, session } from '../api.js';
import { leagueApi, leagueUrl } from '../league.js';
import { matchdayApi, matchdayUrl, eventToml } from '../matchday.js';

export function match(path) {
  const m = /^\/organize(?:\/(\d+))?\/?$/.exec(path);
  return m ? { id: m[1] || null } : null;
}

/** Sends an event file (text) to the server; `check`: only its checks. */
async function sendFile(text, check) {
  const tok = session()?.token;
  const res = await fetch(matchdayApi.upload(check), {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}`, 'Content-Type': text.trim().startsWith('{') ? 'application/json' : 'application/toml' },
    body: text,
  });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw Object.assign(new Error(body?.message || res.statusText), { code: body?.code || 'http_error', body });
  return body;
}

/** A sign-in link as a QR code image (the server draws it; the link goes in the body). */
async function qrOf(link) {
  try {
    const res = await fetch(matchdayApi.qr(), { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: link });
    if (!res.ok) return null;
    const url = URL.createObjectURL(await res.blob());
    return h('img', { src: url, alt: t('md.org.qrAlt'), width: '120', height: '120' });
  } catch {
    return null;
  }
}

function localInput(ms) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function mount(root, { id }, { conn }) {
  const who = session();
  const title = h('h1', {}, t('md.org.title'));
  if (!who || who.role !== 'ROLE_ORGANIZER') {
    fill(root, h('section.organize', {}, title, h('p', {}, t('md.org.need')),
      h('a', { href: `/signin#next=${encodeURIComponent(location.pathname)}` }, t('nav.signin'))));
    return () => {};
  }
  return id ? mountEvent(root, id, conn) : mountList(root);
}

function mountList(root) {
  const list = h('ul.events', { 'data-testid': 'events' });
  const error = h('p.error', { role: 'alert' });
  const text = h('textarea', { rows: 18, cols: 80, spellcheck: 'false', 'data-testid': 'event-text', 'aria-label': t('md.org.fileText') });
  const file = h('input', { type: 'file', accept: '.toml,.json,application/json,application/toml,text/plain', 'data-testid': 'event-file' });
  const where = h('div.checks', { 'data-testid': 'event-checks', role: 'alert' });
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    if (!f) return;
    text.value = await f.text();
    check();
  });

  function showError(e) {
    const b = e.body || {};
    const pos = b.line ? t('md.org.at', { line: b.line, column: b.column || 1 }) : '';
    fill(where, h('p.refused', { 'data-testid': 'event-error', 'data-line': b.line ? String(b.line) : '' },
      pos ? h('strong', {}, `${pos}: `) : null, errorText(e)));
    if (b.line) {
      // Put the caret on the line the check is about.
      const lines = text.value.split('\n');
      const start = lines.slice(0, b.line - 1).reduce((n, l) => n + l.length + 1, 0) + Math.max(0, (b.column || 1) - 1);
      const end = lines.slice(0, b.line).reduce((n, l) => n + l.length + 1, 0) - 1;
      text.focus();
      text.setSelectionRange(start, Math.max(start, end));
    }
  }

  async function check() {
    fill(where, t('md.org.checking'));
    try {
      const r = await sendFile(text.value, true);
      const ev = r.event || {};
      fill(where, h('p.ok', { 'data-testid': 'event-ok' }, t('md.org.checked', { name: ev.name, teams: ev.teams, boards: ev.boards, rounds: ev.rounds, first: ev.firstRound ? new Date(ev.firstRound).toLocaleString(lang()) : '' })));
      return true;
    } catch (e) {
      showError(e);
      return false;
    }
  }

  async function create() {
    fill(where, t('md.org.checking'));
    try {
      const r = await sendFile(text.value, false);
      location.assign(matchdayUrl.organize(r.id));
    } catch (e) {
      showError(e);
    }
  }

  // The small form writes the file; the file is what is checked and sent.
  const f = {
    name: h('input', { type: 'text', size: 40, 'data-testid': 'form-name' }),
    boards: h('input', { type: 'number', min: '1', max: '8', value: '2', 'data-testid': 'form-boards', style: 'width:4em' }),
    legs: h('input', { type: 'number', min: '1', max: '4', value: '1', 'data-testid': 'form-legs', style: 'width:4em' }),
    chain: h('select', { 'data-testid': 'form-chain' },
      h('option', { value: 'slow-fast-armageddon' }, t('md.org.chainSfa')), h('option', { value: 'single' }, t('md.org.chainSingle'))),
    tcs: h('input', { type: 'text', size: 40, value: '60m+30s, 10m+5s, red:5m;black:4m', 'data-testid': 'form-tcs' }),
    teams: h('textarea', { rows: 4, cols: 60, 'data-testid': 'form-teams', placeholder: t('md.org.teamsHint') }),
    arbiters: h('textarea', { rows: 2, cols: 60, 'data-testid': 'form-arbiters' }),
    first: h('input', { type: 'datetime-local', value: localInput(Date.now() + 86400000), 'data-testid': 'form-first' }),
    every: h('input', { type: 'text', size: 6, value: '7d', 'data-testid': 'form-every' }),
  };
  const fromForm = h('button', {
    type: 'button', 'data-testid': 'form-write',
    onclick: () => {
      const first = new Date(f.first.value);
      text.value = eventToml({
        name: f.name.value, boards: f.boards.value, legs: f.legs.value, chain: f.chain.value,
        timeControls: f.tcs.value.split(/[,，]/), teams: f.teams.value, arbiters: f.arbiters.value,
        firstRound: Number.isNaN(first.getTime()) ? '' : first.toISOString(), every: f.every.value,
      });
      check();
    },
  }, t('md.org.writeFile'));
  const label = (k, el) => h('label.block', {}, t(k), ' ', el);

  fill(root, h('section.organize', {},
    h('h1', {}, t('md.org.title')),
    error,
    h('h2', {}, t('md.org.events')), list,
    h('h2', {}, t('md.org.new')),
    h('details.form', {}, h('summary', {}, t('md.org.formTitle')),
      label('md.org.name', f.name), label('md.org.boards', f.boards), label('md.org.legs', f.legs),
      label('md.org.chain', f.chain), label('md.org.tcs', f.tcs), label('md.org.teams', f.teams),
      label('md.org.arbiters', f.arbiters), label('md.org.first', f.first), label('md.org.every', f.every),
      fromForm),
    // The document's path is notation, the same in both languages.
    h('p', {}, ...t('md.org.fileHelp', { doc: '\u0000' }).split('\u0000').flatMap((x, i) => (i ? [h('code.path', {}, 'docs/league.md'), x] : [x]))),
    h('div.row', {}, file),
    text,
    where,
    h('div.row', {},
      h('button', { type: 'button', 'data-testid': 'event-check', onclick: check }, t('md.org.check')),
      h('button.primary', { type: 'button', 'data-testid': 'event-create', onclick: create }, t('md.org.create')))));

  http(leagueApi.list()).then((r) => {
    const ls = r.leagues || [];
    fill(list, ls.length ? ls.map((l) => h('li', {},
      h('a', { href: matchdayUrl.organize(l.id), 'data-testid': `event-${l.id}` }, l.name),
      ` · ${t(l.published ? 'md.org.published' : 'md.org.draft')} · ${t('md.org.progress', { done: l.completedRounds, rounds: l.rounds })}`))
      : h('li.none', {}, t('md.org.noEvents')));
  }, (e) => { error.textContent = errorText(e); });
  return () => {};
}

function mountEvent(root, id, conn) {
  const error = h('p.error', { role: 'alert' });
  const msg = h('p.msg', { role: 'status', 'data-testid': 'org-msg' });
  const head = h('div.orghead');
  const sheet = h('div.sheet', { 'data-testid': 'tokens-sheet' });
  const roundsBox = h('div.orgrounds');
  fill(root, h('section.organize', {}, h('h1', { 'data-testid': 'org-title' }, t('md.org.title')), error, msg, head,
    h('h2', {}, t('md.org.rounds')), roundsBox,
    h('h2.noprint', {}, t('md.org.tokens')), sheet));
  let o = null;

  async function load() {
    try {
      o = await http(leagueApi.overview(id));
      render();
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  async function publish() {
    try {
      await http(matchdayApi.publish(id), { method: 'POST' });
      msg.textContent = t('md.org.publishedNow');
      await load();
    } catch (e) {
      msg.textContent = errorText(e);
    }
  }

  async function tokens() {
    try {
      const r = await http(matchdayApi.tokens(id), { method: 'POST', body: { for: 'all' } });
      const base = location.origin;
      const rows = (r.tokens || []).map((x) => {
        const next = x.role === 'captain' ? leagueUrl.lineup(id) : x.role === 'arbiter' ? matchdayUrl.console(id) : `${matchdayUrl.me()}?play=1`;
        const link = `${base}${matchdayUrl.signin(x.token, next)}`;
        const qr = h('td.qr', { 'data-testid': 'token-qr' });
        qrOf(link).then((img) => { if (img) qr.append(img); });
        return h('tr', { 'data-testid': 'token-row', 'data-role': x.role, 'data-name': x.name },
          h('td.name', {}, x.name),
          h('td', {}, t(`md.org.role.${x.role}`)),
          h('td', {}, x.team === null || x.team === undefined ? '' : (o?.teams?.[x.team]?.name || '')),
          h('td.link', {}, h('a', { href: link, 'data-testid': 'token-link' }, link)),
          qr);
      });
      fill(sheet,
        h('p.noprint', {}, t('md.org.tokensHelp'), ' ', h('button', { type: 'button', onclick: () => window.print() }, t('md.org.print'))),
        h('div.tablewrap', {}, h('table.tokens', {},
          h('thead', {}, h('tr', {}, [t('md.org.col.name'), t('md.org.col.role'), t('md.org.col.team'), t('md.org.col.link'), t('md.org.col.qr')].map((c) => h('th', {}, c)))),
          h('tbody', {}, rows))));
    } catch (e) {
      msg.textContent = errorText(e);
    }
  }

  function render() {
    fill(head,
      h('p', {}, h('strong', { 'data-testid': 'org-name' }, o.name), ' · ', t(o.published ? 'md.org.published' : 'md.org.draft'), ' · ',
        h('a', { href: leagueUrl.event(id) }, t('match.event')), ' · ',
        h('a', { href: matchdayUrl.console(id) }, t('md.console.title'))),
      h('div.row.noprint', {},
        o.published ? null : h('button.primary', { type: 'button', 'data-testid': 'publish', onclick: publish }, t('md.org.publish')),
        h('button', { type: 'button', 'data-testid': 'issue-tokens', onclick: tokens }, t('md.org.issueTokens'))));
    fill(roundsBox, (o.rounds || []).length ? h('ul', {}, o.rounds.map((r) => {
      const start = h('input', { type: 'datetime-local', step: '1', value: localInput(Date.parse(r.startsAt)), 'data-testid': `resched-start-${r.round}` });
      const go = h('button', {
        type: 'button', 'data-testid': `resched-${r.round}`,
        onclick: async () => {
          const s = new Date(start.value);
          if (Number.isNaN(s.getTime())) return;
          try {
            await http(matchdayApi.reschedule(id, r.round), { method: 'POST', body: { start: s.toISOString() } });
            msg.textContent = t('md.org.moved', { round: r.round, at: s.toLocaleString(lang()) });
            await load();
          } catch (e) {
            msg.textContent = errorText(e);
          }
        },
      }, t('md.org.reschedule'));
      return h('li', {}, h('a', { href: matchdayUrl.round(id, r.round) }, t('md.round.title', { round: r.round })),
        ` · ${new Date(r.startsAt).toLocaleString(lang())}${r.completed ? ` · ${t('md.round.completed')}` : ''} `,
        r.completed ? null : h('span.noprint', {}, start, ' ', go));
    })) : h('p.none', {}, t('md.org.noRounds')));
  }

  load();
  return () => {};
}
