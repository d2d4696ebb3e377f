// `/`: the live games, and the liveliest of them on a board (the one with the most moves: the
// demo's bot games rather than an idle one), updating live; above them the leagues and a team
// match with all its boards: a live one (the demo league's first), else the next one.

import { h, fill } from '../dom.js';
import { t } from '../i18n.js';
import { GameView } from '../gameview.js';
import { MatchView } from '../matchview.js';
import { http } from '../api.js';
import { leagueApi, leagueUrl, liveMatch, featuredMatch, lobbyOrder, matchState } from '../league.js';

/** How many leagues the lobby looks into for a match to feature. */
const MAX_LEAGUES = 10;

/**
 * The match to feature: a live one of the first league (demo league first, newest first) that
 * has one, else that first league's next (or last) match. `{ league, round, table }` or null.
 */
export async function findFeaturedMatch(leagues, fetchOverview) {
  let fallback = null;
  for (const l of lobbyOrder(leagues).slice(0, MAX_LEAGUES)) {
    try {
      const o = await fetchOverview(l.id);
      const live = liveMatch(o);
      if (live) return { league: l, round: live.round.round, table: live.table.table };
      const m = fallback ? null : featuredMatch(o);
      if (m) fallback = { league: l, round: m.round.round, table: m.table.table };
    } catch {
      // A league that cannot be read now is skipped.
    }
  }
  return fallback;
}

export function match(path) {
  return path === '/' ? {} : null;
}

/** The game to feature: an unfinished game with the most plies, or null. */
export function liveliest(games) {
  let best = null;
  for (const g of games) {
    if (g.finished) continue;
    if (!best || (g.plies || 0) > (best.plies || 0)) best = g;
  }
  return best;
}

export function mount(root, _params, { conn }) {
  const list = h('ul.games', { 'data-testid': 'game-list' });
  const featured = h('div.featured');
  const goto = h('input', { type: 'text', inputmode: 'numeric', 'aria-label': t('lobby.goto'), placeholder: t('lobby.goto'), size: 8 });
  const form = h('form.goto', {
    onsubmit: (ev) => {
      ev.preventDefault();
      const id = goto.value.trim();
      if (/^\d+$/.test(id)) location.href = `/game/${id}`;
    },
  }, goto, h('button', { type: 'submit' }, t('lobby.go')));
  const leagueList = h('ul.leagues', { 'data-testid': 'league-list' });
  const liveTeam = h('div.livematch', { 'data-testid': 'live-match' });
  const leagues = h('section.leaguebox', { hidden: true }, h('h1', {}, t('lobby.leagues')), leagueList, liveTeam);
  fill(root,
    leagues,
    h('div.lobby', {},
      h('section.list', {},
        h('h1', {}, t('lobby.title')),
        list,
        h('div.row', {}, h('button', { type: 'button', onclick: () => conn.listGames() }, t('lobby.refresh')), form)),
      featured));
  let view = null;
  let shownId = null;
  const off = conn.onGameList((games) => {
    fill(list, games.length ? games.map((g) => h('li', {},
      h('a', { href: `/game/${g.gameId}`, 'data-game': g.gameId },
        h('span.gid', {}, `#${g.gameId}`), ' ',
        h('span.red', {}, g.redName || '?'), ' – ', h('span.black', {}, g.blackName || '?'),
        h('span.meta', {}, ` ${g.timeControl || ''} · ${t('lobby.plies', { n: g.plies || 0 })}`))))
      : h('li.none', {}, t('lobby.none')));
    // Feature the liveliest game; keep it while it lasts and moves (an idle one gives way to
    // one with moves, a finished one to the next).
    const shown = games.find((g) => g.gameId === shownId && !g.finished);
    const best = liveliest(games);
    if (shown && view && !view.model.finished && ((shown.plies || 0) > 0 || !(best?.plies > 0))) return;
    if (!best || best.gameId === shownId) return;
    view?.destroy();
    shownId = best.gameId;
    view = new GameView(conn, best.gameId, {});
    fill(featured,
      h('h2', {}, t('lobby.featured'), ' ', h('a', { href: `/game/${best.gameId}`, 'data-testid': 'featured-link' }, t('lobby.open'))),
      view.el);
  });
  let matchView = null;
  let matchKey = null;
  let gone = false;
  async function refreshLeagues() {
    let list;
    try {
      list = (await http(leagueApi.list(), { token: null }))?.leagues || [];
    } catch {
      return;
    }
    if (gone) return;
    leagues.hidden = list.length === 0;
    fill(leagueList, list.map((l) => h('li', {}, h('a', { href: leagueUrl.event(l.id), 'data-league': l.id }, l.name),
      h('span.meta', {}, ` ${t('lobby.leagueMeta', { teams: l.teams, done: l.completedRounds, rounds: l.rounds })}`))));
    // Keep the match shown while it is live; otherwise look for one.
    if (matchView && matchView.el.dataset.state === 'live') return;
    const found = await findFeaturedMatch(list, (id) => http(leagueApi.overview(id), { token: null }));
    if (gone) return;
    const key = found ? `${found.league.id}/${found.round}/${found.table}` : null;
    if (key === matchKey) return;
    matchView?.destroy();
    matchView = null;
    matchKey = key;
    if (!found) {
      fill(liveTeam);
      return;
    }
    const heading = h('span', {}, t('lobby.liveMatch'));
    matchView = new MatchView(conn, found.league.id, found.round, found.table, {
      withLinks: false,
      // The heading follows the match: live, coming, or over.
      onLoad: (tb) => { heading.textContent = t(`lobby.match.${matchState(tb)}`); },
    });
    fill(liveTeam,
      h('h2', {}, heading, ' ', h('a', { href: leagueUrl.match(found.league.id, found.round, found.table), 'data-testid': 'live-match-link' }, t('lobby.openMatch'))),
      matchView.el);
  }
  const offState = conn.onState((s) => {
    if (s === 'open') conn.listGames();
  });
  refreshLeagues();
  const timer = setInterval(() => conn.listGames(), 10000);
  // The leagues change slowly, and a shown match follows its league's stream by itself.
  const leagueTimer = setInterval(refreshLeagues, 15000);
  return () => {
    gone = true;
    off();
    offState();
    clearInterval(timer);
    clearInterval(leagueTimer);
    view?.destroy();
    matchView?.destroy();
  };
}
