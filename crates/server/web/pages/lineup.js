// `/league/{id}/lineup` (the next match awaiting the lineup) and `/league/{id}/lineup/{round}/{table}`:
// a captain's lineup. The roster in order — boards first, substitutes after — rearranged by
// dragging or by the up/down buttons (keyboard: the buttons, or Alt+↑/↓ on a player); submitted
// before the deadline, which counts down on screen; sealed until the deadline reveals both
// teams' lineups. A refusal lists every reason in words (the `chuhe-league` refusal codes); an
// accepted lineup is confirmed with the time it was sealed. The organizer picks the team
// (`?team=N`) and submits for it.

import { h, fill } from '../dom.js';
import { t, lang, errorText } from '../i18n.js';
import { http, session } from '../api.js';
import { leagueApi, leagueUrl, captainTeam, lineupMatch, startingOrder, moveItem, countdown, refusalDetails } from '../league.js';

export function match(path) {
  const m = /^\/league\/(\d+)\/lineup(?:\/(\d+)\/(\d+))?\/?$/.exec(path);
  return m ? { id: m[1], round: m[2] ? Number(m[2]) : null, table: m[3] ? Number(m[3]) : null } : null;
}

function when(iso) {
  return new Date(iso).toLocaleString(lang(), { dateStyle: 'medium', timeStyle: 'medium' });
}

/** A refused lineup's reasons in words (one sentence per reason). */
export function refusalTexts(reasons, ctx) {
  return refusalDetails(reasons, ctx).map((r) => ({ code: r.code, text: t(`refusal.${r.code}`, r.vars) }));
}

export function mount(root, params, { conn }) {
  const { id } = params;
  const me = session();
  const title = h('h1', {}, t('lineup.title'));
  if (!me) {
    fill(root, h('section.lineuppage', {}, title, h('p', {}, t('lineup.needSignin')),
      h('a', { href: `/signin#next=${encodeURIComponent(location.pathname)}` }, t('nav.signin'))));
    return () => {};
  }
  const info = h('div.lineupinfo', { 'data-testid': 'lineup-match' });
  const deadline = h('p.deadline', {});
  const clock = h('span.countdown', { 'data-testid': 'countdown', role: 'timer', 'aria-live': 'off' });
  const help = h('p.help', { 'data-testid': 'lineup-help' });
  const status = h('p.lineupstatus', { 'data-testid': 'lineup-status', role: 'status' });
  const list = h('ol.roster', { 'data-testid': 'roster', 'aria-label': t('lineup.rosterLabel') });
  const submit = h('button.primary', { type: 'button', 'data-testid': 'submit-lineup' }, t('lineup.submit'));
  const outcome = h('div.outcome', { 'data-testid': 'lineup-outcome', 'aria-live': 'assertive' });
  const say = h('div.sr-only', { 'aria-live': 'polite', 'data-testid': 'lineup-announce' });
  const error = h('p.error', { role: 'alert' });
  fill(root, h('section.lineuppage', {}, title, error, info));

  let overview = null;
  let m = null; // { round, table, side }
  let team = -1;
  let roster = [];
  let order = [];
  let boards = 0;
  let deadlineMs = 0;
  let sending = false;
  let dragFrom = null;
  let gone = false;

  const ticker = setInterval(tick, 500);

  function tick() {
    if (!m) return;
    const left = deadlineMs - conn.serverNow();
    clock.textContent = countdown(left);
    clock.classList.toggle('soon', left > 0 && left < 600000);
    const open = left > 0 && !m.table.lineups?.[m.side]?.revealed;
    submit.disabled = sending || !open;
    if (!open && !status.dataset.closed) {
      status.dataset.closed = '1';
      renderStatus();
    }
  }

  function renderStatus() {
    const own = m.table.lineups?.[m.side] || {};
    let key;
    if (own.revealed) key = 'lineup.status.revealed';
    else if (deadlineMs <= conn.serverNow()) key = own.submitted ? 'lineup.status.closedSubmitted' : 'lineup.status.closedMissing';
    else key = own.submitted ? 'lineup.status.sealed' : 'lineup.status.missing';
    status.textContent = t(key);
    status.dataset.state = key.split('.').pop();
    help.textContent = t(own.revealed || deadlineMs <= conn.serverNow() ? 'lineup.helpClosed' : 'lineup.help', { n: boards });
  }

  function renderList(focusIndex = null, focusWhat = null) {
    const items = order.map((name, i) => {
      const playing = i < boards;
      const up = h('button.icon', { type: 'button', 'data-testid': `up-${i}`, 'aria-label': t('lineup.up', { name }), disabled: i === 0, onclick: () => move(i, i - 1, 'up') }, '↑');
      const down = h('button.icon', { type: 'button', 'data-testid': `down-${i}`, 'aria-label': t('lineup.down', { name }), disabled: i === order.length - 1, onclick: () => move(i, i + 1, 'down') }, '↓');
      const li = h(`li.${playing ? 'plays' : 'sub'}`, {
        draggable: 'true', tabindex: '0', 'data-name': name, 'data-index': String(i),
        'aria-label': `${playing ? t('lineup.boardN', { n: i + 1 }) : t('lineup.substitute')}: ${name}`,
        ondragstart: (ev) => {
          dragFrom = i;
          ev.dataTransfer.effectAllowed = 'move';
          ev.dataTransfer.setData('text/plain', name);
          li.classList.add('dragging');
        },
        ondragend: () => li.classList.remove('dragging'),
        ondragover: (ev) => {
          ev.preventDefault();
          li.classList.add('over');
        },
        ondragleave: () => li.classList.remove('over'),
        ondrop: (ev) => {
          ev.preventDefault();
          if (dragFrom !== null) move(dragFrom, i, null);
          dragFrom = null;
        },
        onkeydown: (ev) => {
          if (!ev.altKey || (ev.key !== 'ArrowUp' && ev.key !== 'ArrowDown')) return;
          ev.preventDefault();
          move(i, ev.key === 'ArrowUp' ? i - 1 : i + 1, 'row');
        },
      },
      h('span.slot', {}, playing ? t('lineup.boardN', { n: i + 1 }) : t('lineup.substitute')),
      h('span.pname', {}, name),
      h('span.moves', {}, up, down));
      return li;
    });
    fill(list, items);
    if (boards < order.length) list.children[boards]?.classList.add('firstsub');
    if (focusIndex !== null && list.children[focusIndex]) {
      const li = list.children[focusIndex];
      const target = focusWhat === 'row' ? li : li.querySelector(`[data-testid=${focusWhat}-${focusIndex}]`);
      (target && !target.disabled ? target : li).focus();
    }
  }

  function move(from, to, focusWhat) {
    if (to < 0 || to >= order.length) return;
    order = moveItem(order, from, to);
    renderList(to, focusWhat);
    const name = order[to];
    say.textContent = to < boards ? t('lineup.movedTo', { name, n: to + 1 }) : t('lineup.movedSub', { name });
    fill(outcome);
  }

  async function send() {
    if (sending || !m) return;
    sending = true;
    tick();
    const players = order.slice(0, boards);
    fill(outcome);
    try {
      await http(leagueApi.lineups(id), { method: 'POST', body: { round: m.round.round, table: m.table.table, team, players } });
      const at = new Date(conn.serverNow()).toLocaleTimeString(lang());
      await reload();
      // Both lineups in: they are revealed at once and can no longer change.
      const revealed = Boolean(m?.table.lineups?.[m.side]?.revealed);
      fill(outcome, h('div.confirm-ok', { 'data-testid': 'lineup-confirm', role: 'status' },
        h('p', {}, t(revealed ? 'lineup.acceptedRevealed' : 'lineup.accepted', { at })),
        h('ol', {}, players.map((p, i) => h('li', {}, `${t('lineup.boardN', { n: i + 1 })}: ${p}`)))));
    } catch (e) {
      const reasons = e.code === 'lineup_refused' ? (e.body?.reasons || [{ code: 'other', message: e.message }]) : null;
      if (reasons) {
        const texts = refusalTexts(reasons, { players, roster, boards, deadline: when(m.table.lineupDeadline) });
        fill(outcome, h('div.refused', { 'data-testid': 'refusals', role: 'alert' },
          h('p', {}, t('lineup.refused')),
          h('ul', {}, texts.map((x) => h('li', { 'data-code': x.code }, x.text)))));
      } else {
        fill(outcome, h('div.refused', { 'data-testid': 'refusals', role: 'alert' }, h('p', { 'data-code': e.code }, errorText(e))));
      }
    } finally {
      sending = false;
      tick();
    }
  }
  submit.addEventListener('click', send);

  async function reload() {
    overview = await http(leagueApi.overview(id));
    if (gone) return;
    team = captainTeam(overview, me.id);
    // The organizer may submit for any team (`?team=N`, 0-based as in the event file).
    const asked = new URLSearchParams(location.search).get('team');
    if (team < 0 && me.role === 'ROLE_ORGANIZER') {
      if (asked !== null && overview.teams[Number(asked)]) {
        team = Number(asked);
      } else {
        fill(info, h('p', {}, t('lineup.pickTeam')), h('ul', { 'data-testid': 'pick-team' },
          overview.teams.map((tm, i) => h('li', {}, h('a', { href: `${location.pathname}?team=${i}` }, tm.name)))));
        return false;
      }
    }
    if (team < 0) {
      fill(info, h('p', { 'data-testid': 'not-captain' }, t('lineup.notCaptain')), h('a', { href: leagueUrl.event(id) }, t('match.event')));
      return false;
    }
    // Once shown, the page stays on its match (its lineups may be revealed meanwhile).
    m = m ? lineupMatch(overview, team, m.round.round, m.table.table) : lineupMatch(overview, team, params.round, params.table);
    if (!m) {
      fill(info, h('p', { 'data-testid': 'no-match' }, t('lineup.noMatch')), h('a', { href: leagueUrl.event(id) }, t('match.event')));
      return false;
    }
    boards = overview.boards;
    deadlineMs = Date.parse(m.table.lineupDeadline);
    delete status.dataset.closed;
    renderStatus();
    return true;
  }

  (async () => {
    try {
      if (!(await reload())) return;
      const tm = overview.teams[team];
      roster = (tm.players || []).map((p) => p.name);
      order = startingOrder(roster, m.table.lineups?.[m.side]?.players || []);
      const opp = m.side === 0 ? m.table.second : m.table.first;
      title.textContent = t('lineup.titleTeam', { team: tm.name });
      fill(deadline, t('lineup.deadline', { at: when(m.table.lineupDeadline) }), ' ', clock);
      fill(info,
        h('p', {}, h('a', { href: leagueUrl.event(id) }, overview.name), ' · ',
          h('a', { href: leagueUrl.match(id, m.round.round, m.table.table) }, t('match.roundTable', { round: m.round.round, table: m.table.table })),
          ' · ', t('lineup.against', { team: opp.name, start: when(m.table.startsAt) })),
        deadline, status,
        help,
        list,
        h('div.row', {}, submit),
        outcome, say);
      renderList();
      tick();
    } catch (e) {
      error.textContent = errorText(e);
    }
  })();

  return () => {
    gone = true;
    clearInterval(ticker);
  };
}
