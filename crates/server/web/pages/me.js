// `/me`: my games. After sign-in a player finds here its league games: the live one (a link to
// play it), the next ones (event, round, board, colour, opponent, a countdown to the start; or
// the match whose lineups are not out yet) and the finished ones with the board's result and a
// link to the match. A captain finds its lineup pages, an arbiter its event consoles, an
// organiser the events. The page follows the leagues' public streams: when a game of the
// player's is set up while the page is open, it goes to that game by itself; reached from a
// sign-in link (`/me?play=1`) while a game of the player's is being played, it goes there at once.

import { h, fill } from '../dom.js';
import { t, lang, errorText } from '../i18n.js';
import { http, session } from '../api.js';
import { leagueApi, leagueUrl, soon, pointsText } from '../league.js';
import { matchdayApi, matchdayUrl, sortBoards, stageLabel, untilText } from '../matchday.js';

export function match(path) {
  return path === '/me' || path === '/me/' || path === '/my' ? {} : null;
}

function when(iso) {
  return new Date(iso).toLocaleString(lang(), { dateStyle: 'medium', timeStyle: 'short' });
}

export function mount(root, _params, { conn }) {
  const who = session();
  const title = h('h1', {}, t('md.me.title'));
  if (!who) {
    fill(root, h('section.mepage', {}, title, h('p', {}, t('md.me.needSignin')),
      h('a', { href: `/signin#next=${encodeURIComponent('/me')}` }, t('nav.signin'))));
    return () => {};
  }
  const error = h('p.error', { role: 'alert' });
  const live = h('div.mylive', { 'data-testid': 'my-live' });
  const next = h('div.mynext', { 'data-testid': 'my-next' });
  const done = h('div.mydone', { 'data-testid': 'my-done' });
  const roles = h('div.myroles', { 'data-testid': 'my-roles' });
  fill(root, h('section.mepage', {}, title, error, roles,
    h('h2', {}, t('md.me.live')), live,
    h('h2', {}, t('md.me.next')), next,
    h('h2', {}, t('md.me.done')), done));

  let stopped = false;
  const play = new URLSearchParams(location.search).get('play') === '1';
  if (play) history.replaceState(null, '', '/me');
  const follows = new Map(); // leagueId → stop
  let seenGames = null; // game ids known at the first read: a new one takes the player to it
  let data = null;
  let pending = false;
  let again = false;
  const ticker = setInterval(tick, 1000);

  async function load() {
    if (stopped) return;
    if (pending) {
      again = true;
      return;
    }
    pending = true;
    try {
      data = await http(matchdayApi.mine());
      if (stopped) return;
      error.textContent = '';
      await followAll();
      const current = data.boards.filter((b) => b.current).map((b) => b.current);
      if (seenGames === null) {
        seenGames = new Set(current);
        // Arriving from a sign-in link (`/me?play=1`): straight to the game being played.
        if (play && current.length === 1) {
          location.replace(`/game/${current[0]}`);
          return;
        }
      } else {
        const fresh = current.find((g) => !seenGames.has(g));
        for (const g of current) seenGames.add(g);
        if (fresh) {
          location.assign(`/game/${fresh}`);
          return;
        }
      }
      render();
    } catch (e) {
      error.textContent = errorText(e);
    } finally {
      pending = false;
      if (again) {
        again = false;
        load();
      }
    }
  }
  const reload = soon(load);

  async function followAll() {
    const ids = new Set([...data.boards.map((b) => b.leagueId), ...data.captainOf.map((c) => c.leagueId)]);
    for (const id of ids) {
      if (follows.has(id)) continue;
      follows.set(id, null);
      try {
        const o = await http(leagueApi.overview(id));
        if (stopped) return;
        follows.set(id, conn.followLeague(id, o.publicSeq || 0, reload));
      } catch {
        follows.delete(id);
      }
    }
  }

  function head(b) {
    return h('div.myhead', {},
      h('a', { href: leagueUrl.event(b.leagueId) }, b.league), ' · ',
      h('a', { href: leagueUrl.match(b.leagueId, b.round, b.table), 'data-testid': 'my-match-link' }, t('match.roundTable', { round: b.round, table: b.table })));
  }

  function colourText(c) {
    return c ? t(`side.${c}`) : '';
  }

  function boardLine(b, kind) {
    const bits = [t('match.boardN', { n: b.board })];
    const g = b.games?.length ? b.games[b.games.length - 1] : null;
    const colour = g ? g.colour : b.colour;
    if (colour && kind !== 'done') bits.push(t('md.me.colour', { colour: colourText(colour) }));
    if (b.opponent) bits.push(t('md.me.against', { name: b.opponent.name, team: b.opponentTeamName }));
    if (g?.stageName && kind !== 'done') bits.push(stageLabel(g.stageName));
    return bits.join(' · ');
  }

  function card(b, kind) {
    const items = [head(b)];
    if (!b.revealed) {
      items.push(h('p', {}, t('md.me.sealed', { team: b.teamName, opp: b.opponentTeamName })));
      items.push(h('p', {}, t('md.me.startsAt', { at: when(b.startsAt) }), ' ', h('span.countdown', { 'data-until': b.startsAt })));
      return h('article.mycard', { 'data-testid': 'my-card', 'data-kind': kind }, items);
    }
    items.push(h('p.myboard', { 'data-testid': 'my-board' }, boardLine(b, kind)));
    if (kind === 'live') {
      items.push(h('p', {}, h('a.button.primary', { href: `/game/${b.current}`, 'data-testid': 'play-now' }, t('md.me.play'))));
    } else if (kind === 'next') {
      if (b.choice?.mine) items.push(h('p.choice', {}, t('md.me.choose'), ' ', h('a', { href: leagueUrl.match(b.leagueId, b.round, b.table) }, t('md.me.openMatch'))));
      items.push(h('p', {}, t('md.me.startsAt', { at: when(b.startsAt) }), ' ', h('span.countdown', { 'data-until': b.startsAt })));
    } else {
      const pts = b.points ? `${pointsText(b.points[0])} : ${pointsText(b.points[1])}` : '–';
      items.push(h('p.myresult', { 'data-testid': 'my-result' }, t('md.me.result', { score: pts })));
    }
    const earlier = (b.games || []).filter((g) => g.result);
    if (earlier.length) {
      items.push(h('ul.mygames', {}, earlier.map((g) => h('li', {},
        h('a', { href: `/game/${g.gameId}` }, stageLabel(g.stageName) || g.gameId), ': ',
        t('md.me.playedAs', { result: t(`md.me.game.${g.result}`), colour: colourText(g.colour) })))));
    }
    return h('article.mycard', { 'data-testid': 'my-card', 'data-kind': kind }, items);
  }

  function render() {
    const s = sortBoards(data.boards);
    fill(live, s.live.length ? s.live.map((b) => card(b, 'live')) : h('p.none', {}, t('md.me.noLive')));
    fill(next, s.next.length ? s.next.map((b) => card(b, 'next')) : h('p.none', {}, t('md.me.noNext')));
    fill(done, s.done.length ? s.done.map((b) => card(b, 'done')) : h('p.none', {}, t('md.me.noDone')));
    const links = [];
    for (const c of data.captainOf) {
      links.push(h('li', {}, h('a', { href: leagueUrl.lineup(c.leagueId), 'data-testid': 'my-lineup-link' }, t('md.me.lineup', { team: c.teamName, league: c.league }))));
    }
    for (const a of data.arbiterOf) {
      links.push(h('li', {}, h('a', { href: matchdayUrl.console(a.leagueId), 'data-testid': 'my-console-link' }, t('md.me.console', { league: a.league }))));
    }
    if (who.role === 'ROLE_ORGANIZER') links.push(h('li', {}, h('a', { href: matchdayUrl.organize(), 'data-testid': 'my-organize-link' }, t('md.org.title'))));
    if (who.role === 'ROLE_ARBITER' || who.role === 'ROLE_ORGANIZER') links.push(h('li', {}, h('a', { href: '/arbiter' }, t('arbiter.title'))));
    fill(roles, links.length ? h('ul', {}, links) : null);
    tick();
  }

  function tick() {
    for (const el of root.querySelectorAll('.countdown[data-until]')) el.textContent = untilText(conn, el.dataset.until);
  }

  load();
  return () => {
    stopped = true;
    clearInterval(ticker);
    for (const stop of follows.values()) stop?.();
  };
}
