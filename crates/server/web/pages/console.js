// `/arbiter/league/{id}`: the event console for the event's arbiters and the organiser. Every
// round with its matches and boards (players, the game being played with a link to its game
// console, results), and every decision the league API has: forfeit a board or a whole match,
// set a board's result, order a board replayed, withdraw a team, move a round. Each asks for a
// reason (mandatory) and a confirmation that names its effect; the log below shows every
// decision with who (by name), when and why, and the page follows the league live.
//
// On top, the calls to the arbiter (请裁判) of the league's games, pushed live over the desk:
// each open call rings (a beep once sound is enabled, a flashing title, an alert line) and is
// listed with its board, player, time waiting and who took it; the arbiter takes it, talks with
// the board's players and closes it with a decision, or opens the board's game console for
// the arbiter commands (resume, add time, foul, result, ruling override). Below it, the
// presence lobby of the next round.

import { h, fill } from '../dom.js';
import { t, lang, errorText } from '../i18n.js';
import { http, session } from '../api.js';
import { leagueApi, leagueUrl, soon, pointsText, currentGame } from '../league.js';
import { matchdayApi, matchdayUrl, namesOf, stageLabel } from '../matchday.js';
import { Ringer, PresenceView, waitedText } from '../calls.js';

export function match(path) {
  const m = /^\/arbiter\/league\/(\d+)\/?$/.exec(path);
  return m ? { id: m[1] } : null;
}

const OUTCOMES = ['first', 'second', 'draw', 'both_lose'];

/** Local `datetime-local` text of an ISO instant. */
function localInput(iso) {
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function mount(root, { id }, { conn }) {
  const who = session();
  const title = h('h1', { 'data-testid': 'console-title' }, t('md.console.title'));
  if (!who || !(who.role === 'ROLE_ARBITER' || who.role === 'ROLE_ORGANIZER')) {
    fill(root, h('section.console', {}, title, h('p', {}, t('arbiter.need')),
      h('a', { href: `/signin#next=${encodeURIComponent(location.pathname)}` }, t('nav.signin'))));
    return () => {};
  }
  const error = h('p.error', { role: 'alert', 'data-testid': 'error' });
  const status = h('p.msg', { role: 'status', 'data-testid': 'console-msg' });
  const dialog = h('div.decide', { 'data-testid': 'decide', hidden: true, role: 'dialog', 'aria-label': t('md.console.confirmTitle') });
  const rounds = h('div.consolerounds', { 'data-testid': 'console-rounds' });
  const teamsBox = h('div.consoleteams', { 'data-testid': 'console-teams' });
  const logBody = h('tbody', { 'data-testid': 'console-log' });
  const ringer = new Ringer();
  const soundBtn = h('button', {
    type: 'button', 'data-testid': 'sound-toggle', 'aria-pressed': 'false',
    onclick: () => {
      const on = ringer.toggleSound();
      soundBtn.setAttribute('aria-pressed', String(on));
      soundBtn.textContent = on ? t('call.soundOff') : t('call.soundOn');
    },
  }, t('call.soundOn'));
  const callAlert = h('p.callalert', { 'data-testid': 'call-alert', role: 'alert', hidden: true });
  const callsBox = h('div.calls', { 'data-testid': 'calls' }, h('p.none', {}, t('call.none')));
  const callMsg = h('p.msg', { role: 'status', 'data-testid': 'calls-msg' });
  const presenceBox = h('div', { 'data-testid': 'console-presence' });
  // A message to the captains of a team or to everyone of the event (kept in the league log).
  const noticeTo = h('select', { 'data-testid': 'notice-to', 'aria-label': t('call.to') }, h('option', { value: '' }, t('notice.toEvent')));
  const noticeText = h('input', { type: 'text', maxlength: 500, 'data-testid': 'notice-text', 'aria-label': t('call.message'), placeholder: t('call.message') });
  const noticeMsg = h('p.msg', { role: 'status', 'data-testid': 'notice-msg' });
  const noticeForm = h('form.row', {
    onsubmit: async (ev) => {
      ev.preventDefault();
      const text = noticeText.value.trim();
      if (!text) return;
      const body = { command: 'message', text };
      if (noticeTo.value !== '') body.team = Number(noticeTo.value);
      noticeMsg.textContent = '';
      try {
        await http(matchdayApi.commands(id), { method: 'POST', body });
        noticeText.value = '';
        noticeMsg.textContent = t('notice.sent');
        loadLog();
      } catch (e) {
        noticeMsg.textContent = errorText(e);
      }
    },
  }, noticeTo, noticeText, h('button', { type: 'submit', 'data-testid': 'notice-send' }, t('call.send')));
  fill(root, h('section.console', {}, title, error, status, dialog,
    h('h2', {}, t('call.queue'), ' ', soundBtn), callAlert, callMsg, callsBox, presenceBox,
    h('h2', {}, t('notice.title')), noticeForm, noticeMsg,
    h('h2', {}, t('md.console.teams')), teamsBox,
    h('h2', {}, t('md.console.rounds')), rounds,
    h('h2', {}, t('md.console.log')),
    h('div.log', {}, h('table', {},
      h('thead', {}, h('tr', {}, ['seq', 'time', 'what', 'by', 'reason'].map((c) => h('th', { scope: 'col' }, c === 'by' ? t('md.console.col.by') : t(`arbiter.col.${c}`))))),
      logBody))));

  let o = null;
  let stopped = false;
  // What the user picked or typed survives the re-renders the league's stream causes.
  const kept = new Map();
  const keep = (el) => {
    const k = el.dataset.testid;
    if (kept.has(k)) {
      if (el.type === 'checkbox') el.checked = kept.get(k);
      else el.value = kept.get(k);
    }
    const save = () => kept.set(k, el.type === 'checkbox' ? el.checked : el.value);
    el.addEventListener('change', save);
    el.addEventListener('input', save);
    return el;
  };
  let stopFollow = null;
  let busy = false;
  const reload = soon(load);
  let presence = null;

  // The calls: what the queue says (GET …/calls), refreshed on every desk message.
  let calls = [];
  const known = new Set(); // `${gameId}:${callSeq}` of every call seen ringing
  const inputs = new Map(); // call key → its inputs (typed text survives the refreshes)
  const callNames = {};
  const reloadCalls = soon(loadCalls, 100);
  // Every desk message refreshes the queue; the queue is also read every 15 s (a call of a
  // game another node runs reaches this node's desk only through it).
  const stopDesk = conn.followDesk(id, () => reloadCalls(), (e) => { callMsg.textContent = errorText(e); });
  const callPoll = setInterval(reloadCalls, 15000);

  async function loadCalls() {
    if (stopped) return;
    try {
      const q = await http(`/api/v1/leagues/${encodeURIComponent(id)}/calls`);
      calls = q.calls || [];
      // A call not seen before rings.
      const fresh = calls.filter((c) => c.open && !known.has(`${c.gameId}:${c.callSeq}`));
      for (const c of fresh) known.add(`${c.gameId}:${c.callSeq}`);
      if (fresh.length) ringer.ring(() => calls.filter((c) => c.open).length);
      const ids = calls.flatMap((c) => [c.takenBy, ...(c.messages || []).map((m) => m.fromId)]).filter(Boolean);
      Object.assign(callNames, await namesOf(ids));
      if (!stopped) renderCalls();
    } catch (e) {
      callMsg.textContent = errorText(e);
    }
  }

  function callInputs(key) {
    if (!inputs.has(key)) {
      inputs.set(key, {
        text: h('input', { type: 'text', maxlength: 500, 'data-testid': 'desk-message', 'aria-label': t('call.message'), placeholder: t('call.message') }),
        to: h('select', { 'data-testid': 'desk-to', 'aria-label': t('call.to') },
          h('option', { value: '' }, t('call.toBoth')), h('option', { value: 'red' }, t('side.red')), h('option', { value: 'black' }, t('side.black'))),
        decision: h('input', { type: 'text', maxlength: 500, 'data-testid': 'desk-decision', 'aria-label': t('call.decision'), placeholder: t('call.decision') }),
      });
    }
    return inputs.get(key);
  }

  async function callAct(fn, after = () => {}) {
    callMsg.textContent = '';
    try {
      await fn();
      after();
    } catch (e) {
      callMsg.textContent = errorText(e);
    }
    reloadCalls();
  }

  function renderCalls() {
    const open = calls.filter((c) => c.open);
    callAlert.hidden = !open.length;
    callAlert.textContent = open.length ? t('call.alert', { n: open.length }) : '';
    callAlert.classList.toggle('ringing', open.length > 0);
    if (!open.length) ringer.stopFlash();
    const me = String(conn.principalId || session()?.id || '');
    fill(callsBox, open.length ? open.map((c) => {
      const key = `${c.gameId}:${c.callSeq}`;
      const i = callInputs(key);
      const where = `${t('match.roundTable', { round: c.round, table: c.table })} · ${t('match.boardN', { n: c.board })}`;
      const taken = c.takenBy ? t('call.takenBy', { who: callNames[c.takenBy] || `#${c.takenBy}` }) : t('call.notTaken');
      const mine = c.takenBy && String(c.takenBy) === me;
      return h('article.call', { 'data-testid': `call-${c.gameId}`, 'data-taken': c.takenBy ? (mine ? 'me' : 'other') : 'no' },
        h('h3', {}, where, ' · ', h('span', { 'data-testid': 'call-player' }, `${c.playerName || '?'} (${t(`side.${c.side}`)})`)),
        h('p', {},
          h('span', { 'data-testid': 'call-waiting', 'data-at': String(c.atMs) }, waitedText(conn.serverNow() - c.atMs)), ' · ',
          c.clockStopped ? t('call.clockStopped') : t('call.clockRuns'), ' · ',
          h('span', { 'data-testid': 'call-taken' }, taken)),
        c.reason ? h('p.reason', { 'data-testid': 'call-reason-text' }, c.reason) : null,
        h('ol.channel', { 'data-testid': 'desk-channel' }, (c.messages || []).map((m) => h('li', { class: m.fromRole === 'arbiter' ? 'arbiter' : '' },
          h('span.time', {}, new Date(m.atMs).toLocaleTimeString(lang())), ' ',
          m.fromRole === 'arbiter'
            ? `${t('call.fromArbiter', { who: callNames[m.fromId] || `#${m.fromId}` })} → ${m.to ? t(`side.${m.to}`) : t('call.toBoth')}: ${m.text}`
            : `${t(`side.${m.fromSide}`)} → ${t('call.toArbiter')}: ${m.text}`))),
        h('div.row', {},
          c.takenBy ? null : h('button.primary', { type: 'button', 'data-testid': 'desk-take', onclick: () => callAct(() => conn.takeCall(c.gameId)) }, t('call.take')),
          h('a', { href: `/arbiter/${c.gameId}`, 'data-testid': 'desk-open-game' }, t('call.openGame'))),
        h('form.row', {
          onsubmit: (ev) => {
            ev.preventDefault();
            const text = i.text.value.trim();
            if (text) callAct(() => conn.sendMessage(c.gameId, text, i.to.value || null), () => { i.text.value = ''; });
          },
        }, i.to, i.text, h('button', { type: 'submit', 'data-testid': 'desk-send' }, t('call.send'))),
        h('form.row', {
          onsubmit: (ev) => {
            ev.preventDefault();
            callAct(() => conn.closeCall(c.gameId, i.decision.value.trim()), () => { i.decision.value = ''; });
          },
        }, i.decision, h('button', { type: 'submit', 'data-testid': 'desk-close' }, t('call.close'))));
    }) : h('p.none', {}, t('call.none')));
  }

  const callTicker = setInterval(() => {
    for (const el of callsBox.querySelectorAll('[data-testid=call-waiting]')) el.textContent = waitedText(conn.serverNow() - Number(el.dataset.at));
  }, 1000);
  loadCalls();

  async function load() {
    if (stopped) return;
    try {
      o = await http(leagueApi.overview(id));
      if (stopped) return;
      if (!stopFollow) stopFollow = conn.followLeague(id, o.publicSeq || 0, reload);
      fill(title, t('md.console.title'), ' · ', h('a', { href: leagueUrl.event(id) }, o.name));
      error.textContent = '';
      if (!busy) render();
      loadLog();
      if (noticeTo.options.length !== (o.teams || []).length + 1) {
        fill(noticeTo, h('option', { value: '' }, t('notice.toEvent')),
          (o.teams || []).map((tm, i) => h('option', { value: String(i) }, t('notice.toCaptains', { team: tm.name }))));
      }
      if (!presence) {
        const next = (o.rounds || []).find((r) => !r.completed);
        if (next) {
          presence = new PresenceView(conn, id, next.round);
          fill(presenceBox, presence.el);
        }
      }
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  const teamName = (i) => o?.teams?.[i]?.name || `#${i}`;

  /** Asks for a reason and a confirmation naming the effect, then sends `command`. */
  function decide(effect, command, { extra = null, post = null } = {}) {
    const reason = h('input', { type: 'text', 'data-testid': 'decide-reason', size: 50, 'aria-label': t('md.console.reason'), placeholder: t('md.console.reason') });
    const msg = h('p.msg', { role: 'alert', 'data-testid': 'decide-msg' });
    const close = () => {
      busy = false;
      dialog.hidden = true;
      fill(dialog);
      render();
    };
    const go = h('button.danger', {
      type: 'button', 'data-testid': 'decide-confirm',
      onclick: async () => {
        const why = reason.value.trim();
        if (!why) {
          msg.textContent = t('arbiter.reasonMissing');
          reason.focus();
          return;
        }
        go.disabled = true;
        try {
          const body = typeof command === 'function' ? command() : command;
          if (post) await post(body, why);
          else await http(matchdayApi.commands(id), { method: 'POST', body: { ...body, reason: why } });
          status.textContent = t('md.console.done', { effect });
          // The decision is made: its inputs show the league's state again.
          kept.clear();
          close();
          load();
        } catch (e) {
          msg.textContent = errorText(e);
          go.disabled = false;
        }
      },
    }, t('md.console.confirm'));
    busy = true;
    fill(dialog,
      h('h3', {}, t('md.console.confirmTitle')),
      h('p.effect', { 'data-testid': 'decide-effect' }, effect),
      extra,
      h('label.block', {}, t('md.console.reason'), h('br'), reason),
      h('div.row', {}, go, h('button', { type: 'button', 'data-testid': 'decide-cancel', onclick: close }, t('game.cancel'))),
      msg);
    dialog.hidden = false;
    status.textContent = '';
    reason.focus();
  }

  function bySelect(tj, testid) {
    return keep(h('select', { 'data-testid': testid },
      h('option', { value: 'first' }, tj.first.name),
      h('option', { value: 'second' }, tj.second.name),
      h('option', { value: 'both' }, t('md.console.both'))));
  }

  function byText(tj, by) {
    return by === 'both' ? t('md.console.both') : by === 'first' ? tj.first.name : tj.second.name;
  }

  function playerNames(tj, b) {
    // Officials see sealed lineups too (marked so).
    const name = (s) => {
      const l = tj.lineups?.[s];
      const n = l?.players?.[b - 1];
      return n ? (l.revealed ? n : `${n} 🔒`) : '?';
    };
    return `${name(0)} – ${name(1)}`;
  }

  function matchLabel(tj) {
    return `${t('match.roundTable', { round: tj.round, table: tj.table })} (${tj.first.name} – ${tj.second.name})`;
  }

  function boardActions(tj, b) {
    const where = `${matchLabel(tj)} · ${t('match.boardN', { n: b.board })}`;
    const at = { round: tj.round, table: tj.table, board: b.board };
    const key = `${tj.round}-${tj.table}-${b.board}`;
    const forfeitBy = bySelect(tj, `forfeit-board-by-${key}`);
    const forfeit = h('button', {
      type: 'button', 'data-testid': `forfeit-board-${key}`,
      onclick: () => {
        const by = forfeitBy.value;
        decide(t(by === 'both' ? 'md.console.effect.forfeitBoardBoth' : 'md.console.effect.forfeitBoard', { where, team: byText(tj, by), other: byText(tj, by === 'first' ? 'second' : 'first') }),
          { command: 'set_board', at, setting: { forfeit: { by } } });
      },
    }, t('md.console.forfeitBoard'));
    const set = h('button', { type: 'button', 'data-testid': `set-board-${key}`, onclick: () => setBoard(tj, b, where, at) }, t('md.console.setBoard'));
    const replay = h('button', {
      type: 'button', 'data-testid': `replay-board-${key}`,
      onclick: () => decide(t('md.console.effect.replay', { where }), { command: 'replay_board', at }),
    }, t('md.console.replay'));
    return h('span.boardactions', {}, forfeitBy, forfeit, ' ', set, ' ', replay);
  }

  function setBoard(tj, b, where, at) {
    const stages = o.chain || [];
    const rows = h('tbody');
    const addRow = (colour, result) => {
      const k = rows.children.length;
      const col = h('select', { 'data-testid': `set-colour-${k}` },
        h('option', { value: 'red' }, t('side.red')), h('option', { value: 'black' }, t('side.black')));
      col.value = colour;
      const res = h('select', { 'data-testid': `set-result-${k}` },
        OUTCOMES.map((x) => h('option', { value: x }, x === 'first' ? t('match.gameWon', { team: tj.first.name }) : x === 'second' ? t('match.gameWon', { team: tj.second.name }) : t(`md.console.outcome.${x}`))));
      res.value = result || 'draw';
      rows.append(h('tr', {}, h('td', {}, stageLabel(stages[k]?.name) || String(k + 1)), h('td', {}, tj.first.name, ' ', col), h('td', {}, res)));
    };
    const games = b.games || [];
    if (games.length) for (const g of games) addRow(g.firstColour, g.result?.outcome);
    else addRow(b.board % 2 === 1 ? 'red' : 'black', 'draw');
    const more = h('button', {
      type: 'button', 'data-testid': 'set-add-game',
      onclick: () => {
        if (rows.children.length >= Math.max(1, stages.length)) return;
        const prev = rows.lastChild?.querySelector('select')?.value || 'red';
        addRow(prev === 'red' ? 'black' : 'red', 'draw');
      },
    }, t('md.console.addGame'));
    const fewer = h('button', { type: 'button', onclick: () => { if (rows.children.length > 1) rows.lastChild.remove(); } }, t('md.console.removeGame'));
    const read = () => [...rows.children].map((tr) => {
      const [col, res] = tr.querySelectorAll('select');
      return { first_colour: col.value, result: res.value, fouls: [0, 0] };
    });
    decide(t('md.console.effect.setBoard', { where }),
      () => ({ command: 'set_board', at, setting: { games: { games: read() } } }),
      { extra: h('div', {}, h('table.setgames', {}, rows), h('div.row', {}, more, fewer)) });
  }

  function renderTeams() {
    const team = keep(h('select', { 'data-testid': 'withdraw-team' }, (o.teams || []).map((tm, i) => h('option', { value: String(i) }, tm.name))));
    const after = keep(h('select', { 'data-testid': 'withdraw-after' }, (o.rounds || []).map((r) => h('option', { value: String(r.round) }, t('md.round.title', { round: r.round })))));
    const expelled = keep(h('input', { type: 'checkbox', 'data-testid': 'withdraw-expelled' }));
    const go = h('button', {
      type: 'button', 'data-testid': 'withdraw',
      onclick: () => {
        const tm = Number(team.value);
        const r = Number(after.value);
        decide(t(expelled.checked ? 'md.console.effect.expel' : 'md.console.effect.withdraw', { team: teamName(tm), round: r }),
          { command: 'withdraw', team: tm, after_round: r, expelled: expelled.checked });
      },
    }, t('md.console.withdraw'));
    fill(teamsBox,
      h('ul', {}, (o.teams || []).map((tm) => h('li', {}, tm.name, tm.withdrawn ? ` · ${t('md.console.withdrawn', { round: tm.withdrawn.afterRound })}` : ''))),
      h('div.row', {}, t('md.console.withdrawLabel'), ' ', team, ' ', after, ' ', h('label.check', {}, expelled, ' ', t('md.console.expelled')), ' ', go));
  }

  function renderRound(r) {
    const start = keep(h('input', { type: 'datetime-local', step: '1', value: localInput(r.startsAt), 'data-testid': `move-start-${r.round}` }));
    const deadline = keep(h('input', { type: 'datetime-local', step: '1', value: localInput(r.lineupDeadline), 'data-testid': `move-deadline-${r.round}` }));
    const move = h('button', {
      type: 'button', 'data-testid': `move-round-${r.round}`,
      onclick: () => {
        const s = new Date(start.value);
        const d = new Date(deadline.value);
        if (Number.isNaN(s.getTime()) || Number.isNaN(d.getTime())) {
          status.textContent = t('md.console.badTime');
          return;
        }
        decide(t('md.console.effect.move', { round: r.round, start: s.toLocaleString(lang()), deadline: d.toLocaleString(lang()) }),
          { command: 'reschedule', round: r.round, start_ms: s.getTime(), deadline_ms: d.getTime() });
      },
    }, t('md.console.move'));
    const tables = (r.tables || []).map((tj) => {
      const by = bySelect(tj, `forfeit-match-by-${r.round}-${tj.table}`);
      const forfeit = h('button', {
        type: 'button', 'data-testid': `forfeit-match-${r.round}-${tj.table}`,
        onclick: () => decide(t('md.console.effect.forfeitMatch', { where: matchLabel(tj), team: byText(tj, by.value) }),
          { command: 'forfeit_match', round: tj.round, table: tj.table, by: by.value }),
      }, t('md.console.forfeitMatch'));
      const gp = tj.gamePoints || ['0', '0'];
      const boards = (tj.boards || []).map((b) => {
        const g = currentGame(b);
        const res = b.points ? `${pointsText(b.points[0])} : ${pointsText(b.points[1])}${b.setByArbiter ? ` (${t('md.console.setByArbiter')})` : ''}` : '';
        const games = (b.games || []).map((x) => h('a', { href: `/arbiter/${x.gameId}`, 'data-testid': `console-game-${x.gameId}` },
          `${stageLabel(x.stageName) || '#'}${x.result ? ` ${x.result.outcome === 'draw' ? '½' : x.result.outcome === 'first' ? '1-0' : x.result.outcome === 'second' ? '0-1' : '0-0'}` : ` ${t('md.console.playing')}`}`));
        return h('tr', { 'data-testid': `console-board-${r.round}-${tj.table}-${b.board}` },
          h('th', { scope: 'row' }, String(b.board)),
          h('td', {}, playerNames(tj, b.board)),
          h('td.games', {}, games.length ? games.flatMap((x, i) => (i ? [' · ', x] : [x])) : (g ? '' : '—')),
          h('td', { 'data-testid': `console-board-result-${r.round}-${tj.table}-${b.board}` }, res),
          h('td', {}, boardActions(tj, b)));
      });
      return h('article.consolematch', { 'data-testid': `console-match-${r.round}-${tj.table}` },
        h('h4', {}, h('a', { href: leagueUrl.match(id, tj.round, tj.table) }, matchLabel(tj)), ` · ${pointsText(gp[0])} : ${pointsText(gp[1])}`,
          tj.finished ? ` · ${t('md.console.finished')}` : ''),
        h('div.row', {}, by, forfeit),
        h('div.tablewrap', {}, h('table.consoleboards', {},
          h('thead', {}, h('tr', {}, [t('match.board'), t('md.console.players'), t('md.console.games'), t('md.console.result'), ''].map((c) => h('th', {}, c)))),
          h('tbody', {}, boards))));
    });
    return h('section.consoleround', { 'data-testid': `console-round-${r.round}` },
      h('h3', {}, h('a', { href: matchdayUrl.round(id, r.round) }, t('md.round.title', { round: r.round })),
        ` · ${new Date(r.startsAt).toLocaleString(lang())}`, r.completed ? ` · ${t('md.round.completed')}` : ''),
      h('div.row', {}, t('md.console.start'), ' ', start, ' ', t('md.console.deadline'), ' ', deadline, ' ', move),
      tables);
  }

  function render() {
    if (!o) return;
    renderTeams();
    fill(rounds, (o.rounds || []).length ? o.rounds.map(renderRound) : h('p.none', {}, t('md.console.noRounds')));
  }

  function where(ev) {
    const a = ev?.at;
    if (a) return `${t('match.roundTable', { round: a.round, table: a.table })} ${t('match.boardN', { n: a.board })}`;
    if (ev?.round && ev?.table) return t('match.roundTable', { round: ev.round, table: ev.table });
    if (ev?.round) return t('md.round.title', { round: ev.round });
    if (ev?.team !== undefined) return teamName(ev.team);
    return '';
  }

  async function loadLog() {
    try {
      const log = await http(matchdayApi.log(id));
      const entries = (log.entries || []).slice().reverse();
      const names = await namesOf(entries.map((e) => e.actorId).filter(Boolean));
      fill(logBody, entries.map((e) => h('tr', { class: e.reason ? 'by-arbiter' : '', 'data-kind': e.kind },
        h('td', {}, String(e.seq)),
        h('td.time', {}, new Date(e.at).toLocaleString(lang())),
        h('td', {}, `${t(`md.log.${e.kind}`)}${where(e.event) ? ` · ${where(e.event)}` : ''}${e.kind === 'arbiter_message' ? `: ${e.event?.text || ''}` : ''}`),
        h('td', { 'data-testid': 'log-by' }, e.actorId ? (names[e.actorId] || `#${e.actorId}`) : t('md.log.server')),
        h('td', {}, e.reason || ''))));
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  load();
  return () => {
    stopped = true;
    stopFollow?.();
    stopDesk();
    clearInterval(callTicker);
    clearInterval(callPoll);
    ringer.stopFlash();
    presence?.destroy();
  };
}
