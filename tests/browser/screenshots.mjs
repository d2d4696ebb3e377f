// Takes the screenshots in docs/screenshots/ (shown in the README): every page of the browser
// client, on a real `chuhe serve` with games set up through the organiser API and moves
// played through the pages. Run: `npm run screenshots` (after `cargo build -p chuhe`).

import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser, openAs, clickSquare } from './harness.mjs';

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
  console.log(`screenshots written to ${OUT}`);
} finally {
  await browser.close();
  await server.stop();
}
