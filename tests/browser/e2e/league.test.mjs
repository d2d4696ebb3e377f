// The league pages in real Chromium against a real server: a captain's lineup (refused with
// its reason in words, then accepted and sealed), a team match updating live (a move on a
// board, the score when a board ends, also across a network drop; a board's chain going on to
// its fast game), the lobby featuring the live match, and the event page's standings with the
// deciding criterion. The demo's lobby and its league match: play.test.mjs.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, stopAll, openAs, league, tokenOf, startRound } from '../harness.mjs';

let server;
let browser;

before(async () => ({ server, browser } = await startAll()));
after(() => stopAll({ server, browser }));

const names = (page) => page.locator('[data-testid=roster] li .pname').allInnerTexts();

test('a captain submits a lineup, sees the refusal reason in words, then a valid one sealed', async () => {
  const l = await league(server);
  const cap = tokenOf(l.tokens, 'captain', 0);
  const { page, ctx } = await openAs(browser, server, cap.token, `/league/${l.id}/lineup`);
  await page.locator('[data-testid=roster] li').nth(2).waitFor();
  assert.deepEqual(await names(page), ['红一', '红二', '红三'], 'the roster in registered order');
  assert.match(await page.getByTestId('countdown').innerText(), /^1[12]:\d\d:\d\d$/, 'the deadline 12 h before a start a day away');
  assert.equal(await page.getByTestId('lineup-status').getAttribute('data-state'), 'missing');

  // 红二 above 红一: the registered order reversed (12.2) — refused, in words.
  await page.getByTestId('up-1').click();
  assert.deepEqual(await names(page), ['红二', '红一', '红三']);
  await page.getByTestId('submit-lineup').click();
  const refusal = page.locator('[data-testid=refusals] li[data-code=order_reversed]');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /Board 2: 红一 is registered before 红二 .*rule 12\.2/);
  assert.equal(await page.getByTestId('lineup-status').getAttribute('data-state'), 'missing', 'nothing was submitted');

  // The keyboard: Alt+↑ on 红一 puts it back on board 1; then drag 红三 onto board 2.
  const row = page.locator('[data-testid=roster] li[data-name="红一"]');
  await row.focus();
  await page.keyboard.press('Alt+ArrowUp');
  assert.deepEqual(await names(page), ['红一', '红二', '红三']);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset?.name), '红一', 'the focus stays on the moved player');
  await page.locator('[data-testid=roster] li[data-name="红三"]').dragTo(page.locator('[data-testid=roster] li[data-name="红二"]'));
  assert.deepEqual(await names(page), ['红一', '红三', '红二']);
  await page.getByTestId('submit-lineup').click();
  const ok = page.getByTestId('lineup-confirm');
  await ok.waitFor();
  assert.match(await ok.innerText(), /accepted and sealed/);
  assert.match(await ok.innerText(), /Board 2: 红三/);
  await page.locator('[data-testid=lineup-status][data-state=sealed]').waitFor();

  // Someone who captains no team is told so; the organizer picks a team first.
  const player = await openAs(browser, server, tokenOf(l.tokens, 'player', 0, '红一').token, `/league/${l.id}/lineup`);
  await player.page.getByTestId('not-captain').waitFor();
  const org = await openAs(browser, server, server.orgToken, `/league/${l.id}/lineup`);
  await org.page.locator('[data-testid=pick-team] a').filter({ hasText: '黑队' }).click();
  await org.page.locator('[data-testid=roster] li[data-name="黑一"]').waitFor();
  await org.ctx.close();
  await player.ctx.close();

  // A spectator's match page shows the lineup sealed, without telling whether it was submitted;
  // the captain's own page says it is in.
  const spec = await openAs(browser, server, null, `/league/${l.id}/match/1/1`);
  await spec.page.getByTestId('sealed-0').waitFor();
  assert.doesNotMatch(await spec.page.getByTestId('sealed-0').innerText(), /submitted/);
  await page.goto(`${server.base}/league/${l.id}/match/1/1`);
  await page.getByTestId('sealed-0').filter({ hasText: 'yours: submitted' }).waitFor();

  // The other captain, in Chinese: the order reversed again, then put right.
  const cap2 = tokenOf(l.tokens, 'captain', 1);
  const zh = await openAs(browser, server, cap2.token, `/league/${l.id}/lineup`, { lang: 'zh-CN' });
  await zh.page.locator('[data-testid=roster] li').nth(2).waitFor();
  await zh.page.getByTestId('down-0').click();
  await zh.page.getByTestId('submit-lineup').click();
  const zhRefusal = zh.page.locator('[data-testid=refusals] li[data-code=order_reversed]');
  await zhRefusal.waitFor();
  assert.match(await zhRefusal.innerText(), /第2台：黑一 报名顺序在 黑二 之前.*报名顺序不得颠倒/);
  await zh.page.getByTestId('up-1').click();
  await zh.page.getByTestId('submit-lineup').click();
  await zh.page.getByTestId('lineup-confirm').filter({ hasText: '名单已接受' }).waitFor();
  // Both lineups in: they are revealed at once, and the spectator's page shows them live.
  await spec.page.locator('[data-testid=lineup-0-2]').filter({ hasText: '红三' }).waitFor();
  assert.equal(await spec.page.getByTestId('lineup-1-1').innerText(), '黑一');
  await zh.page.locator('[data-testid=lineup-status][data-state=revealed]').waitFor();
  for (const c of [ctx, zh.ctx, spec.ctx]) await c.close();
});

test('the match page follows the boards live and the score when a board ends, across a drop; the event page ranks', async () => {
  const l = await league(server, { name: '象甲 live' });
  const m = await openAs(browser, server, null, `/league/${l.id}/match/1/1`);
  await m.page.getByTestId('sealed-1').waitFor();
  const lobby = await openAs(browser, server, null, '/');
  await lobby.page.locator(`[data-testid=league-list] a[data-league="${l.id}"]`).waitFor();

  // The lineups, the reveal and the games arrive on the league's stream: no reload.
  for (const team of [0, 1]) {
    const names_ = team === 0 ? ['红一', '红二'] : ['黑一', '黑二'];
    await server.api('POST', `/api/v1/leagues/${l.id}/lineups`, { round: 1, table: 1, team, players: names_ }, tokenOf(l.tokens, 'captain', team).token);
  }
  await m.page.locator('[data-testid=lineup-0-1]').filter({ hasText: '红一' }).waitFor();
  await m.page.locator('[data-testid=lineup-1-2]').filter({ hasText: '黑二' }).waitFor();
  await startRound(server, l.id);
  await m.page.locator('[data-testid=board-1][data-game]:not([data-game=""])').waitFor();
  await m.page.locator('[data-testid=board-2][data-game]:not([data-game=""])').waitFor();
  const table = await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`);
  const g1 = table.boards[0].games[0];
  const g2 = table.boards[1].games[0];
  assert.equal(await m.page.getByTestId('board-link-1').getAttribute('href'), `/game/${g1.gameId}`);
  assert.equal(await m.page.getByTestId('game-points').innerText(), '0 : 0');

  // The lobby now features the live team match with its boards.
  await lobby.page.getByTestId('live-match-link').waitFor();
  assert.equal(await lobby.page.getByTestId('live-match-link').getAttribute('href'), `/league/${l.id}/match/1/1`);
  await lobby.page.locator('[data-testid=live-match] [data-testid=board-2] .gameview').waitFor();

  // Board 1's Red plays 炮二平五 from the game page; the match page's small board shows it.
  const byId = new Map(l.tokens.map((x) => [x.principalId, x]));
  const red1 = byId.get(g1.redId);
  const p = await openAs(browser, server, red1.token, `/game/${g1.gameId}`);
  // The clocks start at the round's start: Red's runs.
  await p.page.locator('[data-testid=clock-red].running').waitFor();
  await p.page.evaluate((id) => globalThis.chuhe.conn.move(id, 1, 'h2e2'), g1.gameId);
  await m.page.locator('[data-testid=board-1] [data-testid=board] g.piece[data-square="e2"]').waitFor();

  // The match page's network goes down; meanwhile board 1's Red resigns. Back online, the page
  // catches up by seq: the board's result and the 局分.
  await m.ctx.setOffline(true);
  await m.page.evaluate(() => globalThis.chuhe.conn.drop());
  await m.page.getByTestId('conn-state').filter({ hasText: 'reconnecting' }).waitFor();
  await p.page.evaluate((id) => globalThis.chuhe.conn.request({ resign: { gameId: id } }), g1.gameId);
  await p.page.getByTestId('result').filter({ hasText: 'resignation' }).waitFor();
  const winner = red1.team === 0 ? '黑队' : '红队';
  assert.equal(await m.page.getByTestId('board-result-1').innerText(), '', 'offline: not seen yet');
  await m.ctx.setOffline(false);
  await m.page.getByTestId('board-result-1').filter({ hasText: winner }).waitFor();
  const gp1 = await m.page.getByTestId('game-points').innerText();
  assert.notEqual(gp1, '0 : 0');
  assert.match(gp1, /^(0 : 2|2 : 0)$/);
  assert.equal(await m.page.getByTestId('match-points').count(), 0, 'no 场分 before the match ends');
  // Resumed from the last seq seen: the page has every public entry of the league.
  const seqNow = (await server.api('GET', `/api/v1/leagues/${l.id}`)).publicSeq;
  await m.page.waitForFunction(([id, seq]) => globalThis.chuhe.conn.leagues.get(String(id))?.seq === seq, [l.id, seqNow]);
  assert.ok(await m.page.evaluate(() => globalThis.chuhe.conn.connects) >= 2);

  // Board 2 ends too, won by the same team (its other player resigns): the match is over,
  // with its 场分.
  const loser2 = [g2.redId, g2.blackId].map((x) => byId.get(x)).find((x) => x.team === red1.team);
  const p2 = await openAs(browser, server, loser2.token, `/game/${g2.gameId}`);
  await p2.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  await p2.page.evaluate((id) => globalThis.chuhe.conn.request({ resign: { gameId: id } }), g2.gameId);
  await m.page.locator('.matchview[data-state=finished]').waitFor();
  const mp = await m.page.getByTestId('match-points').innerText();
  assert.match(mp, red1.team === 0 ? /0 : 2$/ : /2 : 0$/);

  // The event page: the standings, who won and what decided each rank; the crosstable; links.
  const ev = await openAs(browser, server, null, `/league/${l.id}`);
  await ev.page.locator('[data-testid=standings] tbody tr').nth(1).waitFor();
  const rows = await ev.page.locator('[data-testid=standings] tbody tr').allInnerTexts();
  assert.equal(rows.length, 2);
  assert.match(rows[0], new RegExp(`^1\\s+${winner}`));
  assert.match(rows[1], /^2\s/);
  assert.notEqual(await ev.page.getByTestId('decided-2').innerText(), '—', 'rank 2 says which criterion decided it');
  assert.equal(await ev.page.locator('[data-testid=crosstable] td a').count(), 2);
  assert.equal(await ev.page.getByTestId('match-link-1-1').getAttribute('href'), `/league/${l.id}/match/1/1`);
  // The printouts the page links to answer (score sheet, board tables, Elo list).
  for (const href of [
    `/api/v1/leagues/${l.id}/rounds/1/tables/1/sheet?format=html&lang=en`,
    await ev.page.getByTestId('boards-html').getAttribute('href'),
    await ev.page.getByTestId('elo-html').getAttribute('href'),
    await ev.page.getByTestId('standings-html').getAttribute('href'),
  ]) {
    const res = await ev.page.request.get(server.base + href);
    assert.equal(res.status(), 200, href);
    assert.match(res.headers()['content-type'], /text\/html/);
  }
  for (const c of [m, lobby, p, p2, ev]) await c.ctx.close();
});

test('a board\'s chain on the match page: slow drawn, fast drawn, the chooser picks the armageddon colour from its buttons', async () => {
  const l = await league(server, {
    name: '象甲 chain',
    boards: 1,
    chain: { preset: 'slow-fast-armageddon', time_controls: ['10m+5s', '3m+2s', 'red:2m;black:90s'] },
    extra: { break_between_games: '1s' },
  });
  const m = await openAs(browser, server, null, `/league/${l.id}/match/1/1`);
  await m.page.getByTestId('sealed-0').waitFor();
  for (const team of [0, 1]) {
    await server.api('POST', `/api/v1/leagues/${l.id}/lineups`, { round: 1, table: 1, team, players: [team === 0 ? '红一' : '黑一'] }, tokenOf(l.tokens, 'captain', team).token);
  }
  await startRound(server, l.id);
  await m.page.locator('[data-testid=board-1][data-game]:not([data-game=""])').waitFor();
  const byId = new Map(l.tokens.map((x) => [x.principalId, x]));
  // The board's game of `stage`, drawn by its players from their game pages: Red moves with a
  // draw offer, Black accepts.
  const pages = [];
  const drawStage = async (stage) => {
    const g = (await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`)).boards[0].games[stage];
    const r = await openAs(browser, server, byId.get(g.redId).token, `/game/${g.gameId}`);
    const b = await openAs(browser, server, byId.get(g.blackId).token, `/game/${g.gameId}`);
    pages.push(r, b);
    await r.page.locator('[data-testid=clock-red].running').waitFor();
    await b.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
    await r.page.evaluate((id) => globalThis.chuhe.conn.move(id, 1, 'h2e2', { offerDraw: true }), g.gameId);
    await b.page.getByTestId('accept-draw').click();
    return g;
  };
  const slow = await drawStage(0);
  // The board's next game replaces the drawn one on the match page; the draw stays written.
  await m.page.locator(`[data-testid=board-1][data-game]:not([data-game=""]):not([data-game="${slow.gameId}"])`).waitFor();
  assert.match(await m.page.getByTestId('board-history-1').innerText(), /: Draw$/);
  assert.equal(await m.page.getByTestId('game-points').innerText(), '0 : 0', 'a board still being decided scores nothing yet');

  // The fast game is drawn too: the armageddon's colour is the chooser's. The chooser sees the
  // buttons on the match page (a spectator does not) and picks Red.
  const fast = await drawStage(1);
  await m.page.getByTestId('board-history-1').filter({ hasText: /chooses its colour/ }).waitFor();
  assert.equal(await m.page.getByTestId('choice-1').count(), 0, 'only the chooser gets the buttons');
  const t2 = await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`);
  const side = t2.boards[0].choice.chooser === 'first' ? 0 : 1;
  const chooser = tokenOf(l.tokens, 'player', side === 0 ? t2.first.team : t2.second.team, t2.lineups[side].players[0]);
  const c = await openAs(browser, server, chooser.token, `/league/${l.id}/match/1/1`);
  await c.page.getByTestId('choose-red-1').click();
  await m.page.locator(`[data-testid=board-1][data-game]:not([data-game=""]):not([data-game="${slow.gameId}"]):not([data-game="${fast.gameId}"])`).waitFor();
  const arm = (await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`)).boards[0].games[2];
  assert.equal(arm.redId, chooser.principalId, 'the chooser plays Red');
  await c.page.getByTestId('choice-1').waitFor({ state: 'detached' });
  for (const x of [m, c, ...pages]) await x.ctx.close();
});
