// Takes the screenshots in docs/screenshots/ (shown in the README): every page of the browser
// client, on a real `chuhe serve` with games set up through the organiser API and moves
// played through the pages. Run: `npm run screenshots` (after `cargo build -p chuhe`).
// Then every page of `PAGES` (pages.mjs) at desktop size in English and phone size in Chinese:
// docs/screenshots/pages/{name}-desktop.png and {name}-phone-zh.png.

import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser, openAs, clickSquare, league, tokenOf, startRound } from './harness.mjs';
import { PAGES, scene, visit } from './pages.mjs';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots');
mkdirSync(OUT, { recursive: true });

const OPENING = ['h2e2', 'h9g7', 'h0g2', 'i9h9', 'i0h0', 'b9c7', 'c3c4', 'h7i7', 'b0c2', 'c6c5', 'h0h6', 'g6g5', 'b2a2', 'a9b9'];

async function play(page, gameId, moves, from = 1) {
  for (let i = 0; i < moves.length; i++) {
    await page.evaluate(([id, ply, mv]) => globalThis.chuhe.conn.move(id, ply, mv), [gameId, from + i, moves[i]]);
  }
}

const server = await startServer();
const browser = await launchBrowser();
try {
  const red = await server.principal('王天一');
  const black = await server.principal('郑惟桐');
  const arb = await server.principal('Chief Arbiter', 'ROLE_ARBITER');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '90m+30s', event: '象甲联赛', round: '3', board: '1' });
  const other = await server.game({ redId: black.id, blackId: red.id, timeControl: '30m|3x30s', event: '象甲联赛', round: '3', board: '2' });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`);
  await r.page.getByTestId('status').waitFor();
  await b.page.getByTestId('status').waitFor();
  // Alternate the sides' pages so each move is played by its player.
  for (let i = 0; i < OPENING.length; i++) {
    await play(i % 2 === 0 ? r.page : b.page, id, [OPENING[i]], i + 1);
  }
  await r.page.locator(`[data-testid=moves] button[data-ply="${OPENING.length}"]`).waitFor();
  // Red to move: pick up the cannon to show its legal moves.
  await clickSquare(r.page, 'e2');
  await r.page.locator('[data-hint]').first().waitFor();
  await r.page.screenshot({ path: join(OUT, 'game-player.png') });

  const lobby = await openAs(browser, server, null, '/');
  await lobby.page.getByTestId('featured-link').waitFor();
  await lobby.page.locator('[data-testid=game-list] a').nth(1).waitFor();
  await lobby.page.screenshot({ path: join(OUT, 'lobby.png') });

  const zh = await openAs(browser, server, null, `/game/${id}`, { lang: 'zh-CN' });
  await zh.page.locator(`[data-testid=moves] button[data-ply="${OPENING.length}"]`).waitFor();
  await zh.page.screenshot({ path: join(OUT, 'game-spectator-zh.png') });

  const phone = await openAs(browser, server, null, `/game/${id}`, { viewport: { width: 390, height: 844 } });
  await phone.page.locator(`[data-testid=moves] button[data-ply="${OPENING.length}"]`).waitFor();
  await phone.page.screenshot({ path: join(OUT, 'game-phone.png'), fullPage: true });

  const a = await openAs(browser, server, arb.token, `/arbiter/${id}`);
  await a.page.getByTestId('status').waitFor();
  await a.page.getByTestId('reason').fill('Red reports a connection failure');
  await a.page.getByTestId('pause').click();
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=paused]').waitFor();
  await a.page.getByTestId('reason').fill('phone rang at the board');
  await a.page.getByTestId('foul-side').selectOption('SIDE_BLACK');
  await a.page.getByTestId('record-foul').click();
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=foul]').waitFor();
  await a.page.screenshot({ path: join(OUT, 'arbiter.png'), fullPage: true });
  await r.page.getByTestId('banners').filter({ hasText: 'paused' }).waitFor();
  await r.page.screenshot({ path: join(OUT, 'game-paused.png') });

  const s = await openAs(browser, server, null, '/signin');
  await s.page.screenshot({ path: join(OUT, 'signin.png') });

  // A finished game: the result in words.
  const mate = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', initialFen: '4k4/9/9/2p6/9/9/9/8R/R8/3K5 w - - 0 1' });
  const m1 = await openAs(browser, server, red.token, `/game/${mate}`);
  const m2 = await openAs(browser, server, black.token, `/game/${mate}`);
  await m1.page.getByTestId('status').waitFor();
  await m2.page.getByTestId('status').waitFor();
  await play(m1.page, mate, ['a1a8']);
  await play(m2.page, mate, ['c6c5'], 2);
  await play(m1.page, mate, ['i2i9'], 3);
  await m2.page.getByTestId('result').filter({ hasText: 'Red wins' }).waitFor();
  await m2.page.screenshot({ path: join(OUT, 'game-over.png') });
  void other;
  await leagueShots();
  await everyPage();
  console.log(`screenshots written to ${OUT}`);
} finally {
  await browser.close();
  await server.stop();
}

/** The league pages: a captain's lineup, a live team match, the event page, on a phone too. */
async function leagueShots() {
  const teams = [
    { name: '北京威凯建设', players: ['蒋川', '王天一', '唐丹', '金波', '刘欢'] },
    { name: '杭州环境集团', players: ['郑惟桐', '赵鑫鑫', '王宇航', '申鹏', '陈幸琳'] },
    { name: '上海金外滩', players: ['孙勇征', '谢靖', '赵玮', '万春林', '董嘉琦'] },
    { name: '广东碧桂园', players: ['许银川', '吕钦', '黄海林', '时凤兰', '陈丽淳'] },
  ];
  const l = await league(server, { name: '2026 象甲联赛（演示）', boards: 4, teams,
    chain: { preset: 'slow-fast-armageddon', time_controls: ['90m+30s', '10m+5s', 'red:5m;black:4m'] } });
  const captains = [0, 1, 2, 3].map((i) => tokenOf(l.tokens, 'captain', i));
  // Round 1: table 1 a captain's page with a refusal; then every lineup in and the round live.
  const cap = await openAs(browser, server, captains[0].token, `/league/${l.id}/lineup`, { lang: 'zh-CN' });
  await cap.page.locator('[data-testid=roster] li').nth(4).waitFor();
  await cap.page.getByTestId('up-1').click();
  await cap.page.getByTestId('submit-lineup').click();
  await cap.page.locator('[data-testid=refusals] li').first().waitFor();
  await cap.page.screenshot({ path: join(OUT, 'league-lineup-refused-zh.png'), fullPage: true });
  await cap.page.getByTestId('up-1').click();
  await cap.page.locator('[data-testid=roster] li[data-name="刘欢"]').dragTo(cap.page.locator('[data-testid=roster] li[data-name="金波"]'));
  await cap.page.getByTestId('submit-lineup').click();
  await cap.page.getByTestId('lineup-confirm').waitFor();
  await cap.page.screenshot({ path: join(OUT, 'league-lineup-zh.png'), fullPage: true });
  const overview = await server.api('GET', `/api/v1/leagues/${l.id}`);
  const r1 = overview.rounds[0];
  for (const tb of r1.tables) {
    for (const side of [tb.first, tb.second]) {
      if (side.team === 0) continue;
      await server.api('POST', `/api/v1/leagues/${l.id}/lineups`, { round: 1, table: tb.table, team: side.team,
        players: teams[side.team].players.slice(0, 4) }, captains[side.team].token);
    }
  }
  await startRound(server, l.id);
  const m = await openAs(browser, server, null, `/league/${l.id}/match/1/1`, { viewport: { width: 1280, height: 1000 } });
  await m.page.locator('[data-testid=board-4][data-game]:not([data-game=""])').waitFor();
  // Every game of round 1: a few moves by its players, board 1 of each match decided.
  const t1 = await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`);
  const byId = new Map(l.tokens.map((x) => [x.principalId, x]));
  const pages = [];
  for (const [bi, b] of t1.boards.entries()) {
    const g = b.games[0];
    const red = await openAs(browser, server, byId.get(g.redId).token, `/game/${g.gameId}`);
    const black = await openAs(browser, server, byId.get(g.blackId).token, `/game/${g.gameId}`);
    pages.push(red, black);
    await red.page.locator('[data-testid=clock-red].running').waitFor();
    const n = 4 + bi * 3;
    for (let i = 0; i < n; i++) {
      await play(i % 2 === 0 ? red.page : black.page, g.gameId, [OPENING[i]], i + 1);
    }
    if (bi === 0) await black.page.evaluate((id) => globalThis.chuhe.conn.request({ resign: { gameId: id } }), g.gameId);
  }
  await m.page.getByTestId('board-result-1').filter({ hasText: /./ }).waitFor();
  await m.page.locator('[data-testid=board-4] g.piece[data-square="b2"]').waitFor().catch(() => {});
  await m.page.screenshot({ path: join(OUT, 'league-match.png'), fullPage: true });
  const phone = await openAs(browser, server, null, `/league/${l.id}/match/1/1`, { lang: 'zh-CN', viewport: { width: 390, height: 844 } });
  await phone.page.locator('[data-testid=board-4] .gameview .player').first().waitFor();
  await phone.page.screenshot({ path: join(OUT, 'league-match-phone-zh.png'), fullPage: true });
  const lobby = await openAs(browser, server, null, '/');
  await lobby.page.locator('[data-testid=live-match] [data-testid=board-4] .gameview').waitFor();
  await lobby.page.screenshot({ path: join(OUT, 'lobby-league.png') });
  // Table 2 decided by the arbiter's results, so the event page has standings to show.
  const t2 = await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/2`);
  const arb = await openAs(browser, server, server.orgToken, '/arbiter');
  await arb.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  for (const [bi, b] of t2.boards.entries()) {
    const result = ['RESULT_RED_WINS', 'RESULT_BLACK_WINS', 'RESULT_BLACK_WINS', 'RESULT_RED_WINS'][bi]; // no draw: a drawn board would go on to its fast game
    await arb.page.evaluate(([id, r]) => globalThis.chuhe.conn.arbiter(id, 'screenshot: result from the score sheet', { setResult: { result: r } })
      .catch((e) => { throw new Error(JSON.stringify(e)); }), [b.games[0].gameId, result]);
  }
  const ev = await openAs(browser, server, null, `/league/${l.id}`);
  await ev.page.locator('[data-testid=standings] tbody tr').nth(3).waitFor();
  await ev.page.locator('[data-testid=fixtures] tr[data-state=finished]').first().waitFor();
  await ev.page.screenshot({ path: join(OUT, 'league-event.png'), fullPage: true });
  for (const x of [cap, m, phone, lobby, arb, ev, ...pages]) await x.ctx.close();
}

/** Every page of pages.mjs at desktop size (English) and phone size (Chinese). */
async function everyPage() {
  const dir = join(OUT, 'pages');
  mkdirSync(dir, { recursive: true });
  // A server of its own: the scene's names are its own.
  const srv = await startServer();
  const s = await scene(srv, browser);
  try {
    for (const p of PAGES) {
      const desk = await visit(browser, srv, s, p, { lang: 'en', viewport: { width: 1280, height: 900 } });
      await desk.page.screenshot({ path: join(dir, `${p.name}-desktop.png`) });
      await desk.ctx.close();
      const phone = await visit(browser, srv, s, p, { lang: 'zh-CN', viewport: { width: 390, height: 844 } });
      await phone.page.screenshot({ path: join(dir, `${p.name}-phone-zh.png`) });
      await phone.ctx.close();
    }
  } finally {
    await s.close();
    await srv.stop();
  }
}
