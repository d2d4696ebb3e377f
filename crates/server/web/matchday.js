// A match day's people in the browser: the signed-in principal's league games ("my games"),
// the chain of a board (slow → fast → armageddon) as its players live it, the names of
// principals for logs, and the event file an organiser uploads. The pure part (paths, which
// game comes next and why, the file a form describes) is unit-tested under Node; `followBoard`
// is the game page's part.

import { h, fill } from './dom.js';
import { t, lang, errorText } from './i18n.js';
import { http, session } from './api.js';
import { leagueApi, leagueUrl, soon, pointsText, countdown } from './league.js';

/** The routes of crates/server/src/league/pages_api.rs. */
export const matchdayApi = {
  mine: () => '/api/v1/me/leagues',
  upload: (check = false) => `/api/v1/leagues/upload${check ? '?check=true' : ''}`,
  names: (ids) => `/api/v1/names?ids=${ids.map(encodeURIComponent).join(',')}`,
  log: (id) => `/api/v1/leagues/${encodeURIComponent(id)}/log`,
  commands: (id) => `/api/v1/leagues/${encodeURIComponent(id)}/commands`,
  publish: (id) => `/api/v1/leagues/${encodeURIComponent(id)}/publish`,
  tokens: (id) => `/api/v1/leagues/${encodeURIComponent(id)}/tokens`,
  qr: () => '/api/v1/qr',
  reschedule: (id, round) => `/api/v1/leagues/${encodeURIComponent(id)}/rounds/${round}/reschedule`,
};

/** The pages of a match day. */
export const matchdayUrl = {
  me: () => '/me',
  round: (id, n) => `/league/${id}/round/${n}`,
  console: (id) => `/arbiter/league/${id}`,
  organize: (id = null) => (id ? `/organize/${id}` : '/organize'),
  signin: (token, next = null) => `/signin#token=${encodeURIComponent(token)}${next ? `&next=${encodeURIComponent(next)}` : ''}`,
};

/** A chain stage's name in the interface language (the event's own name when not a known one). */
export function stageLabel(name) {
  if (!name) return '';
  const key = `md.stage.${String(name).toLowerCase()}`;
  const s = t(key);
  return s === key ? name : s;
}

/**
 * What follows game `gameId` on a board (`games`: the board's games in order, as the match
 * view or "my games" lists them; `chain`: the event's stages, `[{ name }]`, for the name of a
 * game not yet set up): `{ next, why }` — `next` the id of the game after it (null while there
 * is none), `why` the banner's key and words (null when the chain has not gone on).
 */
export function afterGame(games, gameId, chain = []) {
  const list = games || [];
  const i = list.findIndex((g) => String(g.gameId) === String(gameId));
  if (i < 0) return { next: null, why: null };
  const done = list[i];
  const following = list[i + 1] || null;
  const res = done.result ? (typeof done.result === 'string' ? done.result : done.result.outcome) : null;
  const nextName = following?.stageName || chain?.[Number(done.stage) + 1]?.name || '';
  let why = null;
  if (res === 'draw' && nextName) {
    const prev = stageLabel(done.stageName);
    const cap = (x) => x.charAt(0).toUpperCase() + x.slice(1);
    why = { key: 'md.chain.drawn', vars: { prev, Prev: cap(prev), next: stageLabel(nextName) } };
  } else if (following) {
    why = { key: 'md.chain.next', vars: { next: stageLabel(following.stageName) } };
  }
  return { next: following ? String(following.gameId) : null, why };
}

/** The boards of "my games" split: live (a game being played), next (to come), finished. */
export function sortBoards(boards) {
  const live = [];
  const next = [];
  const done = [];
  for (const b of boards || []) {
    if (b.revealed && b.current) live.push(b);
    else if (b.revealed ? !b.finished && !b.forfeit && !b.matchFinished : !b.matchFinished) next.push(b);
    else done.push(b);
  }
  const at = (b) => Date.parse(b.startsAt) || 0;
  next.sort((a, b) => at(a) - at(b));
  done.sort((a, b) => at(b) - at(a));
  return { live, next, done };
}

/** TOML text of a string. */
function tomlString(s) {
  return `"${String(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The event file (TOML) a small form describes: `{ name, boards, teams: "name: p1, p2" lines,
 * arbiters: lines, chain: 'single'|'slow-fast-armageddon', timeControls: [..], firstRound (ISO),
 * every, legs }`.
 */
export function eventToml(f) {
  const lines = [];
  lines.push(`name = ${tomlString(f.name || '')}`);
  lines.push('system = "round_robin"');
  lines.push(`legs = ${Number(f.legs) || 1}`);
  lines.push(`boards = ${Number(f.boards) || 1}`);
  const tcs = (f.timeControls || []).map((x) => String(x).trim()).filter(Boolean);
  if (f.chain === 'slow-fast-armageddon') {
    lines.push(`result_chain = { preset = "slow-fast-armageddon", time_controls = [${tcs.map(tomlString).join(', ')}] }`);
  } else {
    lines.push(`result_chain = { preset = "single", time_control = ${tomlString(tcs[0] || '')} }`);
  }
  const arbiters = String(f.arbiters || '').split('\n').map((x) => x.trim()).filter(Boolean);
  if (arbiters.length) lines.push(`arbiters = [${arbiters.map(tomlString).join(', ')}]`);
  for (const row of String(f.teams || '').split('\n')) {
    if (!row.trim()) continue;
    const [name, rest = ''] = row.split(/[:：]/, 2);
    const players = rest.split(/[,，、]/).map((x) => x.trim()).filter(Boolean);
    lines.push('', '[[teams]]', `name = ${tomlString(name.trim())}`, `players = [${players.map(tomlString).join(', ')}]`);
  }
  lines.push('', '[schedule]', `first_round = ${tomlString(f.firstRound || '')}`, `every = ${tomlString(f.every || '7d')}`);
  return `${lines.join('\n')}\n`;
}

/** Display names of principal ids (`{ id: name }`), cached for the page. */
const nameCache = new Map();
export async function namesOf(ids) {
  const want = [...new Set((ids || []).filter(Boolean).map(String))].filter((i) => !nameCache.has(i));
  for (let k = 0; k < want.length; k += 200) {
    const part = want.slice(k, k + 200);
    try {
      const r = await http(matchdayApi.names(part), { token: null });
      for (const i of part) nameCache.set(i, r.names?.[i] || null);
    } catch {
      // Ids stay ids.
    }
  }
  const out = {};
  for (const i of ids || []) out[i] = nameCache.get(String(i)) || null;
  return out;
}

const BANNER = 'chuhe.chainBanner';

/** Keeps a banner for the next game's page (shown once there). */
export function leaveBanner(gameId, why) {
  try {
    sessionStorage.setItem(BANNER, JSON.stringify({ gameId: String(gameId), why }));
  } catch {
    // No storage: no banner.
  }
}

/** The banner left for `gameId` by the page of the game before it, once. */
export function takeBanner(gameId) {
  try {
    const raw = sessionStorage.getItem(BANNER);
    if (!raw) return null;
    const b = JSON.parse(raw);
    if (String(b.gameId) !== String(gameId)) return null;
    sessionStorage.removeItem(BANNER);
    return b.why;
  } catch {
    return null;
  }
}

/**
 * The league part of a league game's page: `el` shows where the board's chain stands (the
 * game's stage, a pending colour choice with the chooser's buttons, the board's result and a
 * link to the match at the end); when the next game of the board is set up, the page moves to
 * it by itself, leaving a banner saying why. Follows the league's public stream on `conn`.
 * Returns a stop function.
 */
export function followBoard(conn, gameId, league, el, { navigate = (url) => location.assign(url) } = {}) {
  const id = String(league.leagueId);
  const round = Number(league.round);
  const table = Number(league.table);
  const boardNo = Number(league.board);
  let stopped = false;
  let stopFollow = null;
  let overview = null;
  let moved = false;
  const msg = h('span.msg', { role: 'alert' });

  async function load() {
    if (stopped || moved) return;
    try {
      if (!overview) {
        overview = await http(leagueApi.overview(id));
        stopFollow = conn.followLeague(id, overview.publicSeq || 0, soon(load));
      }
      const tj = await http(leagueApi.table(id, round, table));
      if (stopped) return;
      render(tj);
    } catch (e) {
      msg.textContent = errorText(e);
    }
  }

  function teamName(tj, side) {
    return (side === 'first' ? tj.first : tj.second)?.name || '?';
  }

  function render(tj) {
    const b = (tj.boards || []).find((x) => Number(x.board) === boardNo);
    if (!b) return;
    const games = b.games || [];
    const mine = games.find((g) => String(g.gameId) === String(gameId));
    const { next, why } = afterGame(games, gameId, overview?.chain || []);
    const me = conn.principalId || session()?.id;
    const playing = mine && me && (String(mine.redId) === String(me) || String(mine.blackId) === String(me));
    if (next && playing) {
      moved = true;
      leaveBanner(next, why);
      navigate(`/game/${next}`);
      return;
    }
    const parts = [];
    const stage = mine?.stageName ? stageLabel(mine.stageName) : '';
    parts.push(h('p', {},
      h('a', { href: leagueUrl.match(id, round, table), 'data-testid': 'chain-match-link' },
        `${overview?.name || ''} · ${t('match.roundTable', { round, table })} · ${t('match.boardN', { n: boardNo })}`),
      stage ? ` · ${stage}` : ''));
    if (b.points) {
      const who = b.winner ? teamName(tj, b.winner) : null;
      parts.push(h('p.boardresult', { 'data-testid': 'chain-board-result' },
        t('md.chain.boardResult', { first: teamName(tj, 'first'), second: teamName(tj, 'second'), score: `${pointsText(b.points[0])} : ${pointsText(b.points[1])}` }),
        who ? ` · ${t('match.boardWon', { team: who })}` : ''));
    } else if (next) {
      parts.push(h('p', {}, why ? t(why.key, why.vars) : '', ' ', h('a', { href: `/game/${next}`, 'data-testid': 'chain-next-link' }, t('md.chain.openNext'))));
    } else if (mine?.result) {
      const c = b.choice;
      if (c && !c.chooserColour) {
        const chooserTeam = teamName(tj, c.chooser);
        const chooserId = chooserOf(tj, c.chooser);
        parts.push(h('p', { 'data-testid': 'chain-waiting' }, why ? `${t(why.key, why.vars)} ` : '',
          t('md.chain.choice', { team: chooserTeam, at: new Date(c.deadline).toLocaleTimeString(lang()) })));
        if (me && chooserId === String(me)) parts.push(choiceButtons(tj, b));
      } else {
        parts.push(h('p', { 'data-testid': 'chain-waiting' }, why ? `${t(why.key, why.vars)} ` : '', t('md.chain.waitNext')));
      }
    }
    parts.push(msg);
    fill(el, parts);
    el.hidden = false;
  }

  /** The player id of the choosing side on this board (from the revealed lineups). */
  function chooserOf(tj, side) {
    const s = side === 'first' ? 0 : 1;
    const lineup = tj.lineups?.[s];
    const name = lineup?.revealed ? lineup.players?.[boardNo - 1] : null;
    const team = s === 0 ? tj.first?.team : tj.second?.team;
    const p = name && (overview?.teams?.[team]?.players || []).find((x) => x.name === name);
    return p ? String(p.id) : null;
  }

  function choiceButtons(tj, b) {
    const choose = (colour) => {
      msg.textContent = '';
      conn.request({ leagueChooseColour: { leagueId: id, round, table, board: b.board, colour } })
        .then(() => load(), (e) => { msg.textContent = errorText(e); });
    };
    return h('div.choice', { 'data-testid': 'chain-choice' },
      h('span', {}, t('md.chain.youChoose')), ' ',
      h('button.primary', { type: 'button', 'data-testid': 'chain-choose-red', onclick: () => choose('SIDE_RED') }, t('side.red')),
      h('button', { type: 'button', 'data-testid': 'chain-choose-black', onclick: () => choose('SIDE_BLACK') }, t('side.black')));
  }

  load();
  return () => {
    stopped = true;
    stopFollow?.();
  };
}

/** The countdown text to an ISO instant, on the connection's clock. */
export function untilText(conn, iso) {
  const left = Date.parse(iso) - conn.serverNow();
  return left > 0 ? countdown(left) : '';
}

/**
 * The waiting state of a game before it gets going, for the player on `side` ('red'/'black', or
 * null for a spectator): the countdown to a scheduled start, the wait for the opponent, or ''.
 */
export function waitingText(m, side, nowMs) {
  if (!m?.loaded || m.finished || m.paused) return '';
  const info = m.info || {};
  const running = m.clock?.running === 'SIDE_RED' || m.clock?.running === 'SIDE_BLACK';
  const opp = side === 'red' ? 'black' : side === 'black' ? 'red' : null;
  const oppName = opp === 'red' ? info.redName : opp === 'black' ? info.blackName : null;
  const joined = (s) => (m.log || []).some((e) => e.kind === 'joined' && e.side === s);
  if (!running && !m.moves.length) {
    if (info.startMode === 'START_MODE_SCHEDULED') {
      const left = Number(info.scheduledStartMs || 0) - nowMs;
      return left > 0 ? t('md.wait.startsIn', { left: countdown(left) }) : t('md.wait.starting');
    }
    if (info.startMode === 'START_MODE_PLAYERS_PRESENT') {
      return opp ? t('md.wait.opponent', { name: oppName || '?' }) : t('md.wait.players');
    }
    return '';
  }
  if (m.moves.length || !opp) return '';
  if (m.toMove === side) return t('md.wait.yourMove');
  return joined(opp) ? t('md.wait.opponentThinking', { name: oppName || '?' }) : t('md.wait.opponentFirst', { name: oppName || '?' });
}
