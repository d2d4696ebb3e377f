// Every page of the browser client, once, for the runs that visit them all: the language
// checks (e2e/i18n.test.mjs: zh-CN shows no English, English no Chinese beyond names and
// notation), the phone-width check (no horizontal scroll at 360 px) and the screenshots
// (screenshots.mjs → docs/screenshots/pages/). `scene` sets up what the pages show on a real
// server; `PAGES` lists the pages — append a page here and every run covers it.
//
// A page: `{ name, path(s), token?(s), ready, act?(page) }` where `s` is the scene, `token` the
// principal it is seen as (none: a spectator), `ready` a selector that is there once it has
// loaded and `act` what a person does on it first (e.g. print the tokens sheet).

import { openAs, league, tokenOf, startRound } from './harness.mjs';

/** Names in the scene (people and teams): the English run allows them. */
// (and the arbiter's reason, free text).
export const NAMES = ['手机响', '领队', '王天一', '郑惟桐', '许银川', '吕钦', '红一', '红二', '红三', '黑一', '黑二', '黑三', '红队', '黑队', '象甲联赛', '裁判长', '赵鑫鑫', '演示联赛'];

export const PAGES = [
  { name: 'lobby', path: () => '/', ready: '[data-testid=game-list] a' },
  { name: 'game-spectator', path: (s) => `/game/${s.live}`, ready: '[data-testid=moves] button.mv' },
  { name: 'game-player', path: (s) => `/game/${s.live}`, token: (s) => s.red.token, ready: '[data-testid=controls] button' },
  { name: 'game-over', path: (s) => `/game/${s.over}`, ready: '[data-testid=explain]' },
  { name: 'signin', path: () => '/signin', ready: 'input' },
  { name: 'arbiter', path: (s) => `/arbiter/${s.live}`, token: (s) => s.arbiter.token, ready: '[data-testid=arbiter-log] tr' },
  { name: 'arbiter-pick', path: () => '/arbiter', token: (s) => s.arbiter.token, ready: '[data-testid=arbiter-games] a' },
  { name: 'league-event', path: (s) => `/league/${s.league}`, ready: '[data-testid=fixtures] tr' },
  { name: 'league-match', path: (s) => `/league/${s.league}/match/1/1`, ready: '[data-testid=board-history-1]:not(:empty)' },
  { name: 'league-lineup', path: (s) => `/league/${s.league2}/lineup`, token: (s) => s.captain.token, ready: '[data-testid=roster] li' },
  { name: 'play', path: () => '/play', token: (s) => s.black.token, ready: '[data-testid=open-challenges] li[data-challenge]' },
  { name: 'challenge', path: (s) => `/challenge/${s.challenge}`, token: (s) => s.red.token, ready: '[data-testid=share-link]' },
  { name: 'arbiter-ruling', path: (s) => `/arbiter/${s.ruled}`, token: (s) => s.arbiter.token, ready: '[data-testid=arbiter-log] tr[data-kind=ruling]' },
  // The match day: my games (a player, a captain), a round, the event console, the organiser.
  { name: 'me-player', path: () => '/me', token: (s) => s.player.token, ready: '[data-testid=my-done] [data-testid=my-result]' },
  { name: 'me-captain', path: () => '/me', token: (s) => s.captain.token, ready: '[data-testid=my-lineup-link]' },
  { name: 'league-round', path: (s) => `/league/${s.league}/round/1`, ready: '[data-testid=round-match-1] .boardcard' },
  // The presence lobby of a live round, as the match's captain sees it.
  { name: 'league-presence', path: (s) => `/league/${s.league}/match/1/1`, token: (s) => s.captainLive.token, ready: '[data-testid=presence] tr[data-presence]' },
  { name: 'event-console', path: (s) => `/arbiter/league/${s.league}`, token: (s) => s.org, ready: '[data-testid=console-match-1-1]' },
  { name: 'organize', path: () => '/organize', token: (s) => s.org, ready: '[data-testid=events] a' },
  {
    name: 'organize-tokens', path: (s) => `/organize/${s.league2}`, token: (s) => s.org, ready: '[data-testid=issue-tokens]',
    act: async (page) => {
      await page.getByTestId('issue-tokens').click();
      await page.locator('[data-testid=token-qr] img').nth(7).waitFor();
    },
  },
  { name: 'not-found', path: () => '/no/such/page', ready: '[data-testid=not-found]' },
  { name: 'game-not-found', path: () => '/game/99999', ready: '[data-testid=not-found]' },
  { name: 'league-not-found', path: () => '/league/99', ready: '[data-testid=not-found]' },
  { name: 'arbiter-not-found', path: () => '/arbiter/99999', token: (s) => s.arbiter.token, ready: '[data-testid=not-found]' },
];

const OPENING = ['h2e2', 'h9g7', 'h0g2', 'i9h9', 'i0h0', 'b9c7', 'c3c4', 'h7i7', 'b0c2', 'c6c5'];
const MATE_FEN = '4k4/9/9/2p6/9/9/9/8R/R8/3K5 w - - 0 1';

const move = (page, id, ply, mv, opts = {}) => page.evaluate(([g, p, m, o]) => globalThis.chuhe.conn.move(g, p, m, o), [id, ply, mv, opts]);

/**
 * What the pages show: a live game with moves and a foul, a game won by mate, a league whose
 * first match is live (one board's slow game drawn, so its fast game is on; the other board
 * resigned), a second league waiting for its captain's lineup, and an open challenge.
 * Returns the scene and a `close()` for the browser pages it used.
 */
export async function scene(server, browser) {
  const open = [];
  const as = async (token, path) => {
    const x = await openAs(browser, server, token, path);
    open.push(x);
    return x;
  };
  const red = await server.principal('王天一');
  const black = await server.principal('郑惟桐');
  const arbiter = await server.principal('裁判长', 'ROLE_ARBITER');
  // With an arbiter channel: Red calls the arbiter below (请裁判).
  const live = await server.game({ redId: red.id, blackId: black.id, timeControl: '30m|3x30s', event: '象甲联赛', round: '3', board: '1', calls: {} });
  const r = await as(red.token, `/game/${live}`);
  const b = await as(black.token, `/game/${live}`);
  await r.page.locator('[data-testid=clock-red].running').waitFor();
  await b.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  for (let i = 0; i < OPENING.length; i++) await move(i % 2 === 0 ? r.page : b.page, live, i + 1, OPENING[i]);
  const a = await as(arbiter.token, `/arbiter/${live}`);
  await a.page.getByTestId('status').waitFor();
  // The console can show before its socket is welcomed; a request sent then is refused as
  // `disconnected` (the client retries only moves).
  await a.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  await a.page.evaluate((id) => globalThis.chuhe.conn.arbiter(id, '手机响', { recordFoul: { side: 'SIDE_BLACK' } }), live);
  await r.page.evaluate((id) => globalThis.chuhe.conn.callArbiter(id, '手机响'), live);
  await a.page.getByTestId('open-call').waitFor();

  const over = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', initialFen: MATE_FEN });
  const m1 = await as(red.token, `/game/${over}`);
  const m2 = await as(black.token, `/game/${over}`);
  await m1.page.locator('[data-testid=clock-red].running').waitFor();
  await m2.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  await move(m1.page, over, 1, 'a1a8');
  await move(m2.page, over, 2, 'c6c5');
  await move(m1.page, over, 3, 'i2i9');
  await m1.page.getByTestId('explain').waitFor();

  // A live team match: board 2 resigned, board 1's slow game drawn and its fast game on.
  const l = await league(server, {
    name: '演示联赛', boards: 2,
    chain: { preset: 'slow-fast-armageddon', time_controls: ['10m+5s', '3m+2s', 'red:2m;black:90s'] },
    extra: { break_between_games: '1s' },
  });
  for (const team of [0, 1]) {
    const players = team === 0 ? ['红一', '红二'] : ['黑一', '黑二'];
    await server.api('POST', `/api/v1/leagues/${l.id}/lineups`, { round: 1, table: 1, team, players }, tokenOf(l.tokens, 'captain', team).token);
  }
  await startRound(server, l.id);
  const byId = new Map(l.tokens.map((x) => [x.principalId, x]));
  // The match page shows each board's game once the round has set them up.
  const mp = await as(null, `/league/${l.id}/match/1/1`);
  for (const n of [1, 2]) await mp.page.locator(`[data-testid=board-${n}][data-game]:not([data-game=""])`).waitFor();
  const table = await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`);
  const pair = async (g) => {
    const pr = await as(byId.get(g.redId).token, `/game/${g.gameId}`);
    const pb = await as(byId.get(g.blackId).token, `/game/${g.gameId}`);
    await pr.page.locator('[data-testid=clock-red].running').waitFor();
    await pb.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
    return [pr, pb];
  };
  const [s1r, s1b] = await pair(table.boards[0].games[0]);
  await move(s1r.page, table.boards[0].games[0].gameId, 1, 'h2e2', { offerDraw: true });
  await s1b.page.getByTestId('accept-draw').click();
  const [, s2b] = await pair(table.boards[1].games[0]);
  await s2b.page.evaluate((id) => globalThis.chuhe.conn.request({ resign: { gameId: id } }), table.boards[1].games[0].gameId);

  // A second league whose captain has a lineup to submit.
  const l2 = await league(server, { name: '象甲联赛' });
  const captain = tokenOf(l2.tokens, 'captain', 0);
  // Board 2's Red: its board done (my games shows the result).
  const player = tokenOf(l.tokens, 'player', 0, '红二');

  // A game ended by a ruling: Red's perpetual check against idle moves.
  const ruled = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', initialFen: '3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1' });
  const p1 = await as(red.token, `/game/${ruled}`);
  const p2 = await as(black.token, `/game/${ruled}`);
  await p1.page.locator('[data-testid=clock-red].running').waitFor();
  await p2.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  const checks = ['a0a9', 'd9d8', 'a9a8', 'd8d9', 'a8a9', 'd9d8', 'a9a8', 'd8d9', 'a8a9'];
  for (let i = 0; i < checks.length; i++) await move(i % 2 === 0 ? p1.page : p2.page, ruled, i + 1, checks[i]);
  await p1.page.getByTestId('explain').waitFor();

  // An open challenge by 王天一.
  const c = await as(red.token, '/play');
  await c.page.getByTestId('create-challenge').click();
  await c.page.waitForURL(/\/challenge\/\d+$/);
  const challenge = c.page.url().split('/').pop();

  return {
    red, black, arbiter, live, over, ruled, league: l.id, league2: l2.id, captain, player, challenge, org: server.orgToken,
    captainLive: tokenOf(l.tokens, 'captain', 0),
    async close() {
      for (const x of open) await x.ctx.close();
    },
  };
}

/** Opens page `p` of the scene `s` in `lang` at `viewport`, waiting until it is ready. */
export async function visit(browser, server, s, p, { lang = 'en', viewport } = {}) {
  const x = await openAs(browser, server, p.token ? p.token(s) : null, p.path(s), { lang, viewport });
  await x.page.locator(p.ready).first().waitFor();
  if (p.act) await p.act(x.page);
  return x;
}
