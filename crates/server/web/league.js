// The league in the browser: reading the league API's JSON (docs: the league routes under
// /api/v1/leagues) for the match, event and lineup pages. Pure: no DOM, no network.

/** The API's paths for a league. */
export const leagueApi = {
  list: () => '/api/v1/leagues',
  overview: (id) => `/api/v1/leagues/${encodeURIComponent(id)}`,
  table: (id, round, table) => `/api/v1/leagues/${encodeURIComponent(id)}/rounds/${round}/tables/${table}`,
  standings: (id, format = 'json', lang = 'zh') => `/api/v1/leagues/${encodeURIComponent(id)}/standings?format=${format}&lang=${lang}`,
  sheet: (id, round, table, format = 'html', lang = 'zh') => `/api/v1/leagues/${encodeURIComponent(id)}/rounds/${round}/tables/${table}/sheet?format=${format}&lang=${lang}`,
  lineups: (id) => `/api/v1/leagues/${encodeURIComponent(id)}/lineups`,
  boards: (id, format = 'html', lang = 'zh') => `/api/v1/leagues/${encodeURIComponent(id)}/boards?format=${format}&lang=${lang}`,
  elo: (id, format = 'html', lang = 'zh') => `/api/v1/leagues/${encodeURIComponent(id)}/elo?format=${format}&lang=${lang}`,
};

/**
 * A reader for a stream's entries: `fn` runs once shortly after a burst of calls (a spread of
 * up to `spreadMs`, so thousands of pages do not all ask the server in the same millisecond).
 */
export function soon(fn, spreadMs = 300, timer = globalThis.setTimeout) {
  let armed = false;
  return () => {
    if (armed) return;
    armed = true;
    timer(() => {
      armed = false;
      fn();
    }, Math.floor(Math.random() * spreadMs));
  };
}

/** The browser client's own URLs for a league. */
export const leagueUrl = {
  event: (id) => `/league/${id}`,
  match: (id, round, table) => `/league/${id}/match/${round}/${table}`,
  lineup: (id, round, table) => (round ? `/league/${id}/lineup/${round}/${table}` : `/league/${id}/lineup`),
};

/** The lang parameter of the printouts for the interface language. */
export function printLang(uiLang) {
  return uiLang === 'en' ? 'en' : 'zh';
}

/** A board's game on screen: the last stage played or being played, or null before any. */
export function currentGame(board) {
  const games = board?.games || [];
  return games.length ? games[games.length - 1] : null;
}

/** A match (table JSON) is live: its lineups are out and a game of it is being played. */
export function isLive(table) {
  if (!table || table.finished) return false;
  return (table.boards || []).some((b) => (b.games || []).some((g) => !g.result));
}

/** The match's state: 'finished', 'live', 'revealed' (lineups out, no game yet) or 'upcoming'. */
export function matchState(table) {
  if (table.finished) return 'finished';
  if (isLive(table)) return 'live';
  if ((table.lineups || []).some((l) => l.revealed)) return 'revealed';
  return 'upcoming';
}

/** Every match of an overview, with its round: `[{ round, table }]` in round and table order. */
export function allMatches(overview) {
  const out = [];
  for (const r of overview?.rounds || []) for (const t of r.tables || []) out.push({ round: r, table: t });
  return out;
}

/** The first live match of an overview (a `{ round, table }`), or null. */
export function liveMatch(overview) {
  return allMatches(overview).find((m) => isLive(m.table)) || null;
}

/**
 * The match the lobby features from an overview: a live one, else the next one not finished,
 * else the last one played; `{ round, table }` or null when the league has no match.
 */
export function featuredMatch(overview) {
  const all = allMatches(overview);
  return all.find((m) => isLive(m.table)) || all.find((m) => !m.table.finished) || all[all.length - 1] || null;
}

/** The demo league's name (`chuhe demo league (season N)`, crates/server/src/demo.rs). */
export const DEMO_LEAGUE = 'chuhe demo league';

/**
 * The order in which the lobby looks for a match to feature: published leagues only, the demo
 * league's seasons first, newest first within each.
 */
export function lobbyOrder(leagues) {
  // The league list marks a demo season (`demo: true`); its name says so too.
  const demo = (l) => (l.demo || String(l.name || '').startsWith(DEMO_LEAGUE) ? 0 : 1);
  return (leagues || []).filter((l) => l.published)
    .sort((a, b) => demo(a) - demo(b) || Number(b.id) - Number(a.id));
}

/**
 * The principal id of the player on `board` for `side` (0: the first team, 1: the second) of a
 * revealed match, from the overview's rosters; null when not known.
 */
export function boardPlayerId(overview, table, side, board) {
  const lineup = table?.lineups?.[side];
  const name = lineup?.revealed ? lineup.players?.[board - 1] : null;
  const team = side === 0 ? table.first?.team : table.second?.team;
  const p = name && (overview?.teams?.[team]?.players || []).find((x) => x.name === name);
  return p ? String(p.id) : null;
}

/** The team a principal captains in an overview (its index), or -1. */
export function captainTeam(overview, principalId) {
  if (!principalId) return -1;
  return (overview?.teams || []).findIndex((t) => (t.captainIds || []).includes(String(principalId)));
}

/**
 * The match a captain's lineup page is about: the one given (`round`, `table`), else the first
 * not yet revealed match of the team. `{ round, table, side }` (side 0: the first team, 1: the
 * second) or null.
 */
export function lineupMatch(overview, team, round = null, table = null) {
  for (const m of allMatches(overview)) {
    const side = (m.table.first?.team === team) ? 0 : (m.table.second?.team === team) ? 1 : -1;
    if (side < 0) continue;
    if (round !== null) {
      if (m.round.round === Number(round) && m.table.table === Number(table)) return { ...m, side };
      continue;
    }
    if (!m.table.lineups?.[side]?.revealed && !m.round.completed) return { ...m, side };
  }
  return null;
}

/**
 * The order a captain starts from: the lineup already submitted, then the rest of the roster in
 * registered order (substitutes last), each name once.
 */
export function startingOrder(roster, submitted = []) {
  const out = [];
  for (const n of submitted || []) if (roster.includes(n) && !out.includes(n)) out.push(n);
  for (const n of roster) if (!out.includes(n)) out.push(n);
  return out;
}

/** `list` with the item at `from` moved to `to` (a new array; out of range: unchanged). */
export function moveItem(list, from, to) {
  if (from < 0 || from >= list.length || to < 0 || to >= list.length || from === to) return list.slice();
  const out = list.slice();
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x);
  return out;
}

/** Milliseconds as a countdown: `2d 03:04:05`, `03:04:05`, `04:05`; '0:00' when past. */
export function countdown(ms) {
  if (!(ms > 0)) return '0:00';
  const s = Math.ceil(ms / 1000);
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  const two = (n) => String(n).padStart(2, '0');
  if (d > 0) return `${d}d ${two(hh)}:${two(mm)}:${two(ss)}`;
  if (hh > 0) return `${hh}:${two(mm)}:${two(ss)}`;
  return `${mm}:${two(ss)}`;
}

/** A point value from the API ("2.5", 2.5) as text with a ½: "2½", "½", "3". */
export function pointsText(p) {
  if (p === null || p === undefined || p === '') return '–';
  const v = Number(p);
  if (!Number.isFinite(v)) return String(p);
  const whole = Math.trunc(v);
  const half = Math.abs(v - whole) >= 0.25;
  if (!half) return String(whole);
  if (whole === 0) return v < 0 ? '-½' : '½';
  return `${whole}½`;
}

/**
 * Details for each reason of a refused lineup (the `reasons` of the API's `lineup_refused`
 * answer, in board order), worked out from what was submitted: `[{ code, vars }]` where `vars`
 * fills the sentence of `lineup.refusal.<code>` (names, boards, counts). A reason whose details
 * cannot be found keeps the server's message as `vars.message`.
 */
export function refusalDetails(reasons, { players = [], roster = [], boards = 0, deadline = '' } = {}) {
  const seen = new Map();
  const duplicates = [];
  const missing = [];
  players.forEach((name, i) => {
    const board = i + 1;
    if (seen.has(name)) duplicates.push({ name, first: seen.get(name), second: board });
    else seen.set(name, board);
    if (!roster.includes(name)) missing.push({ name, board });
  });
  // 12.1: each board its registered player; 12.2: never a player above one registered earlier.
  const fixed = [];
  const reversed = [];
  players.forEach((name, i) => {
    const pos = roster.indexOf(name);
    if (pos >= 0 && roster[i] !== undefined && roster[i] !== name) fixed.push({ board: i + 1, expected: roster[i], got: name });
    if (i > 0) {
      const above = roster.indexOf(players[i - 1]);
      if (pos >= 0 && above >= 0 && pos < above) reversed.push({ board: i + 1, name, above: players[i - 1] });
    }
  });
  const count = { duplicate: 0, not_on_roster: 0, fixed: 0, reversed: 0 };
  return (reasons || []).map((r) => {
    const message = r.message || '';
    const take = (list, key) => list[count[key]++] || null;
    switch (r.code) {
      case 'deadline_passed':
        return { code: r.code, vars: { deadline, message } };
      case 'wrong_count':
        return { code: r.code, vars: { expected: boards, got: players.length, message } };
      case 'duplicate': {
        const d = take(duplicates, 'duplicate');
        return d ? { code: r.code, vars: { ...d, message } } : { code: 'other', vars: { message } };
      }
      case 'not_on_roster': {
        const m = take(missing, 'not_on_roster');
        return m ? { code: r.code, vars: { ...m, message } } : { code: 'other', vars: { message } };
      }
      case 'order': {
        // The server's sentence names the article it applied.
        if (message.includes('12.1')) {
          const f = take(fixed, 'fixed');
          return f ? { code: 'order_fixed', vars: { ...f, message } } : { code: 'order', vars: { message } };
        }
        const v = take(reversed, 'reversed');
        return v ? { code: 'order_reversed', vars: { ...v, message } } : { code: 'order', vars: { message } };
      }
      case 'ineligible':
        return { code: r.code, vars: { message } };
      default:
        return { code: 'other', vars: { message } };
    }
  });
}

/**
 * The crosstable of an overview: `rows[i][j]` lists team i's game points against team j, one
 * entry per match played or being played (`{ points, matchPoints, finished, round, table }`).
 */
export function crosstable(overview) {
  const n = (overview?.teams || []).length;
  const rows = Array.from({ length: n }, () => Array.from({ length: n }, () => []));
  for (const { round, table } of allMatches(overview)) {
    const a = table.first?.team;
    const b = table.second?.team;
    if (a === undefined || b === undefined || a >= n || b >= n) continue;
    const started = table.finished || (table.boards || []).some((x) => (x.games || []).length);
    if (!started) continue;
    const gp = table.gamePoints || [0, 0];
    const mp = table.matchPoints || null;
    const at = { round: round.round, table: table.table, finished: table.finished };
    rows[a][b].push({ ...at, points: gp[0], against: gp[1], matchPoints: mp ? mp[0] : null });
    rows[b][a].push({ ...at, points: gp[1], against: gp[0], matchPoints: mp ? mp[1] : null });
  }
  return rows;
}
