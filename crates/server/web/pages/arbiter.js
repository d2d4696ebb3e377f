// `/arbiter` and `/arbiter/{id}`: the arbiter console. Pick any game (the live list or a
// number); see it live with its clocks; pause and resume, add or charge time, record a foul,
// set a result, override a ruling — each with a mandatory reason — and read the game's log
// (every event, arbiter actions with who and why), which continues live.

import { h, fill, confirmButton } from '../dom.js';
import { t, sideName, resultText, errorText } from '../i18n.js';
import { session, gameEvents } from '../api.js';
import { GameView } from '../gameview.js';
import { GameModel } from '../model.js';
import { entryText, rulingText } from './game.js';
import { namesOf } from '../matchday.js';
import { showNotFound } from './notfound.js';
import { CallBox } from '../calls.js';

export function match(path) {
  const m = /^\/arbiter(?:\/(\d+))?\/?$/.exec(path);
  return m ? { id: m[1] || null } : null;
}

const RESULTS = ['RESULT_RED_WINS', 'RESULT_BLACK_WINS', 'RESULT_DRAW', 'RESULT_BOTH_LOSE'];

function sideSelect(testid) {
  return h('select', { 'data-testid': testid },
    h('option', { value: 'SIDE_RED' }, sideName('red')),
    h('option', { value: 'SIDE_BLACK' }, sideName('black')));
}

function resultSelect(testid, withContinue) {
  return h('select', { 'data-testid': testid },
    withContinue ? h('option', { value: 'RESULT_UNSPECIFIED' }, t('arbiter.continue')) : null,
    ...RESULTS.map((r) => h('option', { value: r }, resultText(r))));
}

export function mount(root, { id }, { conn }) {
  const who = session();
  if (!who || !(who.role === 'ROLE_ARBITER' || who.role === 'ROLE_ORGANIZER')) {
    fill(root, h('section', {}, h('h1', {}, t('arbiter.title')), h('p', {}, t('arbiter.need')),
      h('a', { href: `/signin#next=${encodeURIComponent(location.pathname)}` }, t('nav.signin'))));
    return () => {};
  }
  const list = h('ul.games', { 'data-testid': 'arbiter-games' });
  const goto = h('input', { type: 'text', inputmode: 'numeric', size: 8, 'aria-label': t('lobby.goto'), placeholder: t('lobby.goto') });
  const picker = h('section.picker', {},
    h('h2', {}, t('arbiter.pick')), list,
    h('form.goto', {
      onsubmit: (ev) => {
        ev.preventDefault();
        if (/^\d+$/.test(goto.value.trim())) location.href = `/arbiter/${goto.value.trim()}`;
      },
    }, goto, h('button', { type: 'submit' }, t('lobby.go'))));
  const offList = conn.onGameList((games) => {
    fill(list, games.length ? games.map((g) => h('li', { class: g.gameId === id ? 'sel' : '' },
      h('a', { href: `/arbiter/${g.gameId}`, 'data-game': g.gameId },
        `#${g.gameId} ${g.redName || '?'} – ${g.blackName || '?'} · ${t('lobby.plies', { n: g.plies || 0 })}`)))
      : h('li.none', {}, t('lobby.none')));
  });
  const offState = conn.onState((s) => { if (s === 'open') conn.listGames(); });

  if (!id) {
    fill(root, h('div.arbiter', {}, h('h1', {}, t('arbiter.title')), picker));
    return () => { offList(); offState(); };
  }

  const status = h('p.msg', { role: 'status', 'data-testid': 'arbiter-msg' });
  const reason = h('input', { type: 'text', 'data-testid': 'reason', 'aria-label': t('arbiter.reason'), placeholder: t('arbiter.reason'), size: 40 });
  const logBody = h('tbody', { 'data-testid': 'arbiter-log' });
  const rows = new Map(); // seq → log entry
  const pauseBtn = h('button.primary', { type: 'button', 'data-testid': 'pause' });
  const addSide = sideSelect('add-side');
  const addSecs = h('input', { type: 'number', value: '60', step: '1', 'data-testid': 'add-seconds', 'aria-label': t('arbiter.seconds'), style: 'width:6em' });
  const foulSide = sideSelect('foul-side');
  const setRes = resultSelect('set-result', false);
  const rulingSel = h('select', { 'data-testid': 'ruling-seq' });
  const overRes = resultSelect('override-result', true);

  async function act(action) {
    const why = reason.value.trim();
    if (!why) {
      status.textContent = t('arbiter.reasonMissing');
      reason.focus();
      return;
    }
    status.textContent = '';
    try {
      const r = await conn.arbiter(id, why, action);
      status.textContent = t('arbiter.done', { seq: r.seq || 0 });
      // Each decision gives its own reason.
      reason.value = '';
    } catch (e) {
      status.textContent = errorText(e);
    }
  }

  pauseBtn.addEventListener('click', () => act(view.model.paused ? { resume: {} } : { pause: {} }));
  const actions = h('section.actions', { 'aria-label': t('arbiter.title') },
    h('label.block', {}, t('arbiter.reason'), h('br'), reason),
    h('div.row', {}, pauseBtn),
    h('div.row', {}, addSide, addSecs, h('button', {
      type: 'button', 'data-testid': 'add-time',
      onclick: () => {
        const s = Number(addSecs.value);
        if (!Number.isFinite(s) || s === 0) return;
        act({ addTime: { side: addSide.value, deltaMs: String(Math.round(s * 1000)) } });
      },
    }, t('arbiter.addTime'))),
    h('div.row', {}, foulSide, h('button', { type: 'button', 'data-testid': 'record-foul', onclick: () => act({ recordFoul: { side: foulSide.value } }) }, t('arbiter.foul'))),
    // Setting a result ends the game: confirmed first, naming the result.
    h('div.row', {}, setRes, confirmButton(t('arbiter.setResult'), t('md.arb.confirmSet'), t('game.cancel'),
      () => act({ setResult: { result: setRes.value } }), { 'data-testid': 'set-result-go' })),
    h('div.row', {}, t('arbiter.ruling'), ' ', rulingSel, ' → ', overRes, h('button', {
      type: 'button', 'data-testid': 'override',
      onclick: () => {
        if (!rulingSel.value) return;
        act({ overrideRuling: { rulingSeq: rulingSel.value, result: overRes.value } });
      },
    }, t('arbiter.override'))),
    status);

  const view = new GameView(conn, id, {
    onUpdate: (kind, d, m) => {
      // No such game: say so, with no console over an empty board.
      if (kind === 'error' && d?.code === 'game_not_found') {
        view.destroy();
        showNotFound(root, t('notfound.arbiterGame', { id }));
        root.append(picker);
        return;
      }
      onUpdate(kind, m);
    },
  });

  // The call to the arbiter (请裁判): take it, talk with the players, close it with a decision.
  const callBox = new CallBox(conn, id, view.model, { mode: 'arbiter', onError: (e) => { status.textContent = e ? errorText(e) : ''; } });

  // Arbiters by name in the log.
  const names = {};
  async function learnNames() {
    const ids = [...rows.values()].map((e) => e.arbiter?.arbiterId).filter((x) => x && !(x in names));
    if (!ids.length) return;
    Object.assign(names, await namesOf(ids));
    renderLogRows();
  }

  function renderLog() {
    renderLogRows();
    learnNames();
  }

  function renderLogRows() {
    const sorted = [...rows.values()].sort((a, b) => b.seq - a.seq);
    fill(logBody, sorted.map((e) => h('tr', { class: e.arbiter ? 'by-arbiter' : '', 'data-kind': e.kind },
      h('td', {}, String(e.seq)),
      h('td.time', {}, e.atMs ? new Date(e.atMs).toLocaleTimeString([], { hour12: false }) : ''),
      h('td', {}, logText(e)),
      h('td', { 'data-testid': 'log-by' }, e.arbiter?.arbiterId ? (names[e.arbiter.arbiterId] || `#${e.arbiter.arbiterId}`) : ''),
      h('td', {}, e.arbiter?.reason || ''))));
    const rulings = sorted.filter((e) => e.kind === 'ruling');
    const keep = rulingSel.value;
    fill(rulingSel, rulings.length
      // The ruling in the page's language, as the game page words it (the article once).
      ? rulings.map((e) => h('option', { value: String(e.seq) }, `#${e.seq}: ${rulingText(e.ruling || {})}`))
      : h('option', { value: '' }, t('arbiter.noRulings')));
    if (keep) rulingSel.value = keep;
  }

  function logText(e) {
    switch (e.kind) {
      case 'created': return t('log.created', { tc: view.model.info?.timeControl || '' });
      case 'move': return entryText(e);
      case 'paused': return t('log.paused');
      case 'resumed': return t('log.resumed');
      case 'rulingOverridden': return t('log.rulingOverridden', { seq: e.rulingSeq, result: resultText(e.result) });
      case 'serverRestarted': return t('log.serverRestarted');
      default: return entryText(e) || t('log.unknown');
    }
  }

  function onUpdate(kind, m) {
    pauseBtn.textContent = m.paused ? t('arbiter.resume') : t('arbiter.pause');
    pauseBtn.disabled = m.finished;
    callBox.render();
    if (kind === 'event') {
      const e = m.log[m.log.length - 1];
      if (e) rows.set(e.seq, e);
      renderLog();
    }
  }

  // The whole log so far, then the live events as they come.
  gameEvents(id).then((log) => {
    const past = new GameModel(id);
    for (const e of log.events || []) past.apply({ event: e });
    for (const e of past.log) if (!rows.has(e.seq)) rows.set(e.seq, e);
    // The conversation before this page was opened, and the open call's reason.
    const live = view.model;
    const seen = new Set(live.channel.map((e) => e.seq));
    live.channel.unshift(...past.channel.filter((e) => !seen.has(e.seq)));
    live.channel.sort((a, b) => a.seq - b.seq);
    if (live.openCall && past.openCall?.seq === live.openCall.seq) live.openCall.reason = past.openCall.reason;
    callBox.render();
    renderLog();
  }).catch((e) => { status.textContent = errorText(e); });

  fill(root, h('div.arbiter', {},
    h('h1', {}, `${t('arbiter.title')} · ${t('game.title', { id })}`, ' ', h('a', { href: `/game/${id}` }, '↗')),
    h('div.arbiter-grid', {},
      h('div.boardcol', {}, view.el),
      h('div.side', {}, callBox.el, actions,
        h('h2', {}, t('arbiter.log')),
        h('div.log', {}, h('table', {},
          h('thead', {}, h('tr', {}, ['seq', 'time', 'what', 'by', 'reason'].map((c) => h('th', { scope: 'col' }, t(`arbiter.col.${c}`))))),
          logBody)))),
    picker));
  return () => {
    offList();
    offState();
    callBox.destroy();
    view.destroy();
  };
}
