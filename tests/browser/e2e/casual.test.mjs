// Casual games in the browser: a player offers a game (a 读秒 time control, Black) on /play,
// gets the link to share, another player finds it in the open list and accepts, and both
// pages are in the game — the creator's by itself — with the colours as offered; a bad time
// control and a second challenge are refused in words; a withdrawn challenge's link says it
// is gone; a spectator is asked to sign in. No HTTP call except through the pages.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, stopAll, openAs } from '../harness.mjs';

let server;
let browser;

before(async () => ({ server, browser } = await startAll()));
after(() => stopAll({ server, browser }));

test('a challenge offered on /play, shared, accepted: both players are in the game', async () => {
  const alice = await server.principal('Alice');
  const bo = await server.principal('波波');
  const a = await openAs(browser, server, alice.token, '/play');
  await a.page.getByTestId('tc').waitFor();

  // A time control the clocks do not take: refused in words, nothing created.
  await a.page.getByTestId('tc').fill('soon');
  await a.page.getByTestId('create-challenge').click();
  await a.page.getByTestId('challenge-error').filter({ hasText: /not valid.*soon/ }).waitFor();

  // 读秒: 30 minutes then three periods of 30 s; Alice takes Black.
  await a.page.locator('button[data-tc="30m|3x30s"]').click();
  assert.equal(await a.page.getByTestId('tc').inputValue(), '30m|3x30s');
  await a.page.getByTestId('colour-black').check();
  await a.page.getByTestId('create-challenge').click();
  await a.page.waitForURL(/\/challenge\/\d+$/);
  const link = await a.page.getByTestId('share-link').inputValue();
  assert.equal(link, a.page.url(), 'the link to share is the page itself');
  await a.page.getByTestId('challenge-waiting').waitFor();

  // A second challenge while this one is open: refused in words.
  const a2 = await openAs(browser, server, alice.token, '/play');
  await a2.page.getByTestId('create-challenge').click();
  await a2.page.getByTestId('challenge-error').filter({ hasText: /already have an open challenge/ }).waitFor();
  await a2.ctx.close();

  // A spectator following the link is asked to sign in.
  const spec = await openAs(browser, server, null, new URL(link).pathname);
  await spec.page.getByTestId('play-signin').waitFor();
  await spec.ctx.close();

  // 波波 (in Chinese) finds it in the open list and accepts: Red, as Alice took Black.
  const b = await openAs(browser, server, bo.token, '/play', { lang: 'zh-CN' });
  const row = b.page.locator('[data-testid=open-challenges] li', { hasText: 'Alice' });
  await row.waitFor();
  assert.match(await row.innerText(), /30m\|3x30s[\s\S]*你执红方/);
  await row.locator('button').click();
  await b.page.waitForURL(/\/game\/\d+$/);
  const gameUrl = b.page.url();
  // Alice's page goes to the same game by itself.
  await a.page.waitForURL(gameUrl);
  const meta = a.page.getByTestId('game-meta');
  await meta.filter({ hasText: '波波 (Red) – Alice (Black)' }).waitFor();
  assert.match(await meta.innerText(), /30m\|3x30s/);
  // Both are at the board: the clocks start, Red (波波) to move, and the board is 波波's to play.
  await b.page.locator('[data-testid=board][role=application]').waitFor();
  await a.page.getByTestId('status').filter({ hasText: 'Red to move' }).waitFor();
  // The challenge is no longer in the open list.
  const c = await openAs(browser, server, null, '/play');
  await c.page.getByTestId('open-challenges').filter({ hasText: /No open challenge/ }).waitFor();
  for (const x of [a, b, c]) await x.ctx.close();
});

test('a withdrawn challenge: its link says it is gone', async () => {
  const carol = await server.principal('Carol');
  const p = await openAs(browser, server, carol.token, '/play');
  await p.page.getByTestId('colour-red').check();
  await p.page.getByTestId('create-challenge').click();
  await p.page.waitForURL(/\/challenge\/\d+$/);
  const path = new URL(p.page.url()).pathname;
  await p.page.getByTestId('cancel-challenge').click();
  await p.page.waitForURL(/\/play$/);
  const later = await openAs(browser, server, null, path, { lang: 'zh-CN' });
  await later.page.getByTestId('not-found').filter({ hasText: '已不再开放' }).waitFor();
  for (const x of [p, later]) await x.ctx.close();
});
