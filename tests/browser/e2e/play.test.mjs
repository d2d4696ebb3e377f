// Browser tests: real `chuhe serve`, real headless Chromium, several browser contexts.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startAll, stopAll, openAs, clickSquare, dragSquare, pieceAt } from '../harness.mjs';

let server;
let browser;

before(async () => ({ server, browser } = await startAll()));
after(() => stopAll({ server, browser }));

const text = (page, id) => page.getByTestId(id).innerText();

// Red mates in two: Ra1-a8, then Ri2-i9 (the king on e9 has nowhere to go).
const MATE_FEN = '4k4/9/9/2p6/9/9/9/8R/R8/3K5 w - - 0 1';

test('two players play a game to mate: click-click, drag and keyboard moves', async () => {
  const red = await server.principal('Red Player');
  const black = await server.principal('Black Player');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', initialFen: MATE_FEN });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`, { lang: 'zh-CN' });
  const spectator = await openAs(browser, server, null, `/game/${id}`);

  // Red: click the rook, see its legal targets, click the target.
  await r.page.locator('[data-testid=board][role=application]').waitFor();
  await clickSquare(r.page, 'a1');
  await r.page.locator('[data-hint="a8"]').waitFor();
  assert.equal(await r.page.locator('[data-hint="b2"]').count(), 0, 'no hint where the rook cannot go');
  await clickSquare(r.page, 'a8');
  await b.page.locator('[data-testid=board] g.piece[data-square="a8"]').waitFor();
  // Black sees its board flipped: its own side at the bottom, and the move announced.
  assert.equal(await b.page.locator('.gameview .player').last().getAttribute('data-side'), 'black');
  await b.page.getByTestId('announce').filter({ hasText: '红方' }).waitFor();

  // Black: drag the pawn one step.
  await b.page.locator('[data-testid=board][role=application]').waitFor();
  await dragSquare(b.page, 'c6', 'c5');
  await r.page.locator('[data-testid=board] g.piece[data-square="c5"]').waitFor();
  assert.equal(await pieceAt(r.page, 'c5'), 'p');

  // Red: the keyboard — the cursor starts on e0: four right, two up, Enter; seven up, Enter.
  const board = r.page.locator('[data-testid=board][role=application]');
  await board.waitFor();
  await board.focus();
  for (const k of ['ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowUp', 'ArrowUp', 'Enter']) await r.page.keyboard.press(k);
  await r.page.locator('g.piece.selected[data-square="i2"]').waitFor();
  for (let i = 0; i < 7; i++) await r.page.keyboard.press('ArrowUp');
  await r.page.keyboard.press('Enter');

  for (const p of [r.page, spectator.page]) {
    await p.getByTestId('result').filter({ hasText: 'Red wins' }).waitFor();
    assert.match(await text(p, 'result'), /checkmate/);
  }
  await b.page.getByTestId('result').filter({ hasText: '红胜' }).waitFor();
  assert.match(await text(b.page, 'result'), /将死/);
  // The check on the mated king, the last move marked, the moves in pairs.
  assert.equal(await r.page.locator('[data-check="e9"]').count(), 1);
  assert.equal(await r.page.locator('[data-last]').count(), 2);
  const rows = await r.page.locator('[data-testid=moves] tr').allInnerTexts();
  assert.equal(rows.length, 2);
  assert.match(rows[0], /^1\.\s+车九进七\s+卒3进1$/);
  assert.match(rows[1], /^2\.\s+车一进七/);
  // Notation switch: WXF.
  await r.page.locator('[data-notation=wxf]').click();
  assert.match((await r.page.locator('[data-testid=moves] tr').first().innerText()), /R9\+7/);
  for (const x of [r, b, spectator]) await x.ctx.close();
});

test('a spectator page updates live and catches up after a network drop', async () => {
  const red = await server.principal('Alice');
  const black = await server.principal('Bo');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s' });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`);
  const s = await openAs(browser, server, null, `/game/${id}`);
  await s.page.getByTestId('status').filter({ hasText: 'Red to move' }).waitFor();

  // Red types a move in Chinese notation; the spectator's board and list follow.
  await r.page.getByTestId('move-input').fill('炮二平五');
  await r.page.getByTestId('move-input').press('Enter');
  await s.page.locator('[data-testid=board] g.piece[data-square="e2"]').waitFor();
  assert.equal(await pieceAt(s.page, 'e2'), 'C');
  await s.page.locator('[data-testid=moves] button[data-ply="1"]').filter({ hasText: '炮二平五' }).waitFor();

  // The spectator's network goes down; Black moves meanwhile; the network comes back.
  await s.ctx.setOffline(true);
  await s.page.evaluate(() => globalThis.chuhe.conn.drop());
  await s.page.getByTestId('conn-state').filter({ hasText: 'reconnecting' }).waitFor();
  await b.page.getByTestId('move-input').fill('h9g7');
  await b.page.getByTestId('move-input').press('Enter');
  await r.page.locator('[data-testid=board] g.piece[data-square="g7"]').waitFor();
  await s.ctx.setOffline(false);
  await s.page.locator('[data-testid=moves] button[data-ply="2"]').filter({ hasText: '马8进7' }).waitFor();
  assert.equal(await s.page.locator('[data-testid=moves] button.mv').count(), 2, 'nothing lost, nothing twice');
  assert.ok(await s.page.evaluate(() => globalThis.chuhe.conn.connects) >= 2);
  // Resumed by seq: the missed move came as an event, not as a second snapshot.
  assert.equal(await s.page.evaluate((gid) => globalThis.chuhe.conn.games.get(gid).model.snapshots, id), 1);
  assert.equal(await s.page.getByTestId('controls').innerText(), '', 'a spectator gets no player controls');
  for (const x of [r, b, s]) await x.ctx.close();
});

test('a page notices a frozen server by its silence and resumes once it answers again', async () => {
  const red = await server.principal('Frozen Red');
  const black = await server.principal('Frozen Black');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s' });
  const s = await openAs(browser, server, null, `/game/${id}`);
  await s.page.getByTestId('conn-state').filter({ hasText: 'Connected' }).waitFor();
  assert.equal(await s.page.evaluate(() => globalThis.chuhe.conn.heartbeatMs), 1000, 'the welcome announces the heartbeat');
  // Frozen: no answer, no close. Only the liveness rule (nothing heard for three heartbeats)
  // tells the page its connection is dead.
  process.kill(server.pid, 'SIGSTOP');
  const frozen = Date.now();
  try {
    await s.page.getByTestId('conn-state').filter({ hasText: 'reconnecting' }).waitFor({ timeout: 10000 });
    const noticed = Date.now() - frozen;
    assert.ok(noticed >= 2000, `noticed after ${noticed} ms: a healthy silence is not death`);
    assert.ok(noticed < 5000, `noticed after ${noticed} ms`);
  } finally {
    process.kill(server.pid, 'SIGCONT');
  }
  await s.page.getByTestId('conn-state').filter({ hasText: 'Connected' }).waitFor();
  assert.ok(await s.page.evaluate(() => globalThis.chuhe.conn.connects) >= 2);
  // The game goes on and the page follows it, resumed by seq.
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  await r.page.getByTestId('move-input').fill('h2e2');
  await r.page.getByTestId('move-input').press('Enter');
  await s.page.locator('[data-testid=moves] button[data-ply="1"]').waitFor();
  for (const x of [r, s]) await x.ctx.close();
});

test('spectators see the broadcast delay; the players see live', async () => {
  const red = await server.principal('Delayed Red');
  const black = await server.principal('Delayed Black');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', delay: { plies: 1 } });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`);
  const s = await openAs(browser, server, null, `/game/${id}`);
  // The game's description reaches spectators at once (the server releases it undelayed), with
  // the delay said; its moves come one ply behind.
  await s.page.getByTestId('delay').filter({ hasText: 'Broadcast delay for spectators: 1 plies' }).waitFor();
  await r.page.getByTestId('move-input').fill('h2e2');
  await r.page.getByTestId('move-input').press('Enter');
  await b.page.locator('[data-testid=moves] button[data-ply="1"]').waitFor();
  await b.page.getByTestId('move-input').fill('h9g7');
  await b.page.getByTestId('move-input').press('Enter');
  await r.page.locator('[data-testid=moves] button[data-ply="2"]').waitFor();
  // One ply behind: the spectator has Red's move, not yet Black's.
  await s.page.locator('[data-testid=moves] button[data-ply="1"]').waitFor();
  await s.page.getByTestId('delay').filter({ hasText: 'Broadcast delay for spectators: 1 plies' }).waitFor();
  assert.equal(await s.page.locator('[data-testid=moves] button.mv').count(), 1);
  assert.equal(await pieceAt(s.page, 'g7'), '');
  assert.equal(await r.page.getByTestId('delay').innerText(), '', 'players see live, with no delay notice');
  for (const x of [r, b, s]) await x.ctx.close();
});

test('the demo opens on a live game, not an idle one, and on the demo league\'s live team match', async () => {
  const demo = await startServer({ args: ['--demo'] });
  try {
    // The demo prints the page addresses and the sign-in link of the captain it leaves to a
    // person, who submits that team's lineup for round 1 (its bot stands in only at the deadline).
    const printed = async () => {
      for (;;) {
        const m = /(http:\/\/\S+\/signin#token=\S+&next=(\/league\/(\d+)\/lineup))/.exec(demo.stdout());
        if (m) return m;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const [, signinLink, lineupPath, leagueId] = await printed();
    assert.match(demo.stdout(), new RegExp(`/league/${leagueId}/round/1\\b`));
    assert.match(demo.stdout(), new RegExp(`/league/${leagueId}/match/1/1\\b`));
    assert.doesNotMatch(demo.stdout(), /\/api\/v1\/leagues/, 'page addresses, not JSON ones');
    const cap = await browser.newContext();
    const cp = await cap.newPage();
    await cp.goto(signinLink);
    await cp.waitForURL(`${demo.base}${lineupPath}`);
    await cp.locator('[data-testid=roster] li').nth(3).waitFor();
    await cp.getByTestId('submit-lineup').click();
    await cp.getByTestId('lineup-confirm').waitFor();
    await cap.close();

    const { ctx, page } = await openAs(browser, demo, null, '/');
    // The featured board is a game with moves (a bot game), updating live.
    const featured = page.locator('.featured');
    await featured.locator('[data-last]').first().waitFor();
    const id = await page.getByTestId('featured-link').getAttribute('href');
    const plies = async () => page.evaluate((gid) => globalThis.chuhe.conn.games.get(gid).model.moves.length, id.split('/').pop());
    const before = await plies();
    assert.ok(before > 0);
    await page.waitForFunction(([gid, n]) => globalThis.chuhe.conn.games.get(gid).model.moves.length > n, [id.split('/').pop(), before]);
    // Above it, the demo league's team match: its first round starts 90 s after the server
    // (its games 15 s before), and the lobby shows it live with all its boards.
    const link = page.getByTestId('live-match-link');
    await link.waitFor();
    assert.match(await link.getAttribute('href'), /^\/league\/\d+\/match\/1\/\d+$/);
    await page.locator('[data-testid=live-match] .matchview[data-state=live]').waitFor({ timeout: 150000 });
    await page.locator('[data-testid=live-match] [data-testid=board-3] .gameview [data-testid=board]').waitFor();
    assert.match(await page.locator('[data-testid=live-match] > h2').innerText(), /Team match live now/);
    await ctx.close();
  } finally {
    await demo.stop();
  }
});

test('a move made while the network is down is played once it is back', async () => {
  const red = await server.principal('Offline Red');
  const black = await server.principal('Online Black');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s' });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`);
  await r.page.locator('[data-testid=board][role=application]').waitFor();
  await r.ctx.setOffline(true);
  await r.page.evaluate(() => globalThis.chuhe.conn.drop());
  await r.page.getByTestId('conn-state').filter({ hasText: 'reconnecting' }).waitFor();
  await clickSquare(r.page, 'b2');
  await clickSquare(r.page, 'e2');
  await r.ctx.setOffline(false);
  await b.page.locator('[data-testid=moves] button[data-ply="1"]').filter({ hasText: '炮八平五' }).waitFor();
  await r.page.locator('[data-testid=moves] button[data-ply="1"]').waitFor();
  assert.equal(await r.page.getByTestId('error').innerText(), '');
  assert.equal(await b.page.locator('[data-testid=moves] button.mv').count(), 1);
  for (const x of [r, b]) await x.ctx.close();
});

test('sign-in refuses an unknown token in words, and remembers a good one', async () => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${server.base}/signin`);
  await page.getByTestId('token').fill('chuhe_not_a_real_token');
  await page.getByTestId('token').press('Enter');
  await page.getByTestId('signin-msg').filter({ hasText: 'unknown or has been revoked' }).waitFor();
  const p = await server.principal('Remembered');
  await page.getByTestId('token').fill(p.token);
  await page.getByTestId('token').press('Enter');
  // A player lands on "my games".
  await page.waitForURL(`${server.base}/me`);
  await page.getByTestId('who').filter({ hasText: 'Remembered' }).waitFor();
  await page.reload();
  await page.getByTestId('who').filter({ hasText: 'Remembered' }).waitFor();
  assert.equal(await page.evaluate(() => globalThis.chuhe.conn.token !== null), true);
  await ctx.close();
});

/** Plays `moves` from the pages of the side to move, starting at ply `from`. */
async function playFrom(pages, gameId, moves, from = 1) {
  for (let i = 0; i < moves.length; i++) {
    const page = pages[(from + i - 1) % 2];
    await page.evaluate(([gid, ply, mv]) => globalThis.chuhe.conn.move(gid, ply, mv), [gameId, from + i, moves[i]]);
  }
}

test('a perpetual check loses, with the ruling in words', async () => {
  const red = await server.principal('Checking Red');
  const black = await server.principal('Shuffling Black');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', initialFen: '3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1' });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`, { lang: 'zh-CN' });
  await r.page.locator('[data-testid=board][role=application]').waitFor();
  await b.page.getByTestId('status').waitFor();
  await playFrom([r.page, b.page], id, ['a0a9', 'd9d8', 'a9a8', 'd8d9', 'a8a9', 'd9d8', 'a9a8', 'd8d9', 'a8a9']);
  await r.page.getByTestId('result').filter({ hasText: 'Black wins' }).waitFor();
  assert.match(await r.page.getByTestId('result').innerText(), /perpetual check/);
  assert.match(await r.page.getByTestId('result').innerText(), /长将/, "the server's explanation");
  await b.page.getByTestId('result').filter({ hasText: '黑胜' }).waitFor();
  assert.match(await b.page.getByTestId('result').innerText(), /长将/);

  for (const x of [r, b]) await x.ctx.close();
});


test('a player asks for a ruling; the arbiter overrides it (its seq from the log) with a result', async () => {
  const red = await server.principal('Asking Red');
  const black = await server.principal('Asking Black');
  const arb = await server.principal('Ruling Arbiter', 'ROLE_ARBITER');
  const id = await server.game({ redId: red.id, blackId: black.id });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const a = await openAs(browser, server, arb.token, `/arbiter/${id}`);
  await r.page.getByTestId('request-ruling').click();
  await r.page.getByTestId('banners').filter({ hasText: 'nothing to rule on' }).waitFor();
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=ruling]').waitFor();
  const rulingSeq = await a.page.locator('[data-testid=arbiter-log] tr[data-kind=ruling] td').first().innerText();
  assert.equal(await a.page.getByTestId('ruling-seq').inputValue(), rulingSeq);
  await a.page.getByTestId('reason').fill('both players agreed the position is drawn');
  await a.page.getByTestId('override-result').selectOption('RESULT_DRAW');
  await a.page.getByTestId('override').click();
  await r.page.getByTestId('result').filter({ hasText: "Draw — arbiter's decision" }).waitFor();
  await r.page.getByTestId('banners').filter({ hasText: `overrode the ruling of event ${rulingSeq}: both players agreed` }).waitFor();
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=rulingOverridden]').waitFor();
  for (const x of [r, a]) await x.ctx.close();
});

test('an arbiter records a foul and sets a result; the players see both in words', async () => {
  const red = await server.principal('Foul Red');
  const black = await server.principal('Foul Black');
  const arb = await server.principal('Board Arbiter', 'ROLE_ARBITER');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s' });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const a = await openAs(browser, server, arb.token, `/arbiter/${id}`);
  await a.page.getByTestId('status').waitFor();
  await a.page.getByTestId('reason').fill('phone rang');
  await a.page.getByTestId('foul-side').selectOption('SIDE_RED');
  await a.page.getByTestId('record-foul').click();
  await r.page.getByTestId('banners').filter({ hasText: 'Foul by Red (1 of 3)' }).waitFor();
  await r.page.locator('.player[data-side=red] .fouls').filter({ hasText: '1' }).waitFor();
  await a.page.getByTestId('reason').fill('agreed at the board');
  await a.page.getByTestId('set-result').selectOption('RESULT_DRAW');
  // Setting a result asks to confirm it first.
  await a.page.getByTestId('set-result-go').click();
  assert.equal(await r.page.getByTestId('result').innerText(), '', 'not before the confirmation');
  await a.page.getByTestId('set-result-go-confirm').click();
  await r.page.getByTestId('result').filter({ hasText: 'Draw' }).waitFor();
  assert.match(await r.page.getByTestId('result').innerText(), /arbiter's decision/);
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=ended]').filter({ hasText: 'agreed at the board' }).waitFor();
  assert.equal(await r.page.getByTestId('controls').innerText(), '', 'no player controls after the end');
  for (const x of [r, a]) await x.ctx.close();
});

test("the client's HTTP routes answer with their codes", async () => {
  const red = await server.principal('Route Red');
  const black = await server.principal('Route Black');
  const arb = await server.principal('Route Arbiter', 'ROLE_ARBITER');
  const id = await server.game({ redId: red.id, blackId: black.id });
  const get = async (path, token) => {
    const res = await fetch(server.base + path, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    const type = res.headers.get('content-type') || '';
    return { status: res.status, type, body: type.includes('json') ? await res.json() : await res.text() };
  };
  let x = await get('/api/v1/me', red.token);
  assert.deepEqual([x.status, x.body.displayName, x.body.role], [200, 'Route Red', 'ROLE_PLAYER']);
  x = await get('/api/v1/me');
  assert.deepEqual([x.status, x.body.code], [401, 'unauthenticated']);
  x = await get('/api/v1/me', 'chuhe_nope');
  assert.deepEqual([x.status, x.body.code], [401, 'unauthenticated']);
  x = await get(`/api/v1/legal?fen=${encodeURIComponent('rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1')}`);
  assert.deepEqual([x.status, x.body.moves.length, x.body.toMove], [200, 44, 'SIDE_RED']);
  x = await get('/api/v1/legal?fen=xyz');
  assert.deepEqual([x.status, x.body.code], [400, 'invalid_argument']);
  x = await get(`/api/v1/games/${id}/events`, red.token);
  assert.deepEqual([x.status, x.body.code], [403, 'permission_denied']);
  x = await get(`/api/v1/games/${id}/events`);
  assert.equal(x.status, 403);
  x = await get('/api/v1/games/999999/events', arb.token);
  assert.deepEqual([x.status, x.body.code], [404, 'game_not_found']);
  x = await get(`/api/v1/games/${id}/events`, arb.token);
  assert.equal(x.status, 200);
  assert.equal(x.body.events[0].seq, '1');
  assert.ok(x.body.events[0].created);
  x = await get(`/game/${id}`);
  assert.deepEqual([x.status, x.type.startsWith('text/html'), x.body.includes('/assets/app.js')], [200, true, true]);
  x = await get('/assets/pages/game.js');
  assert.deepEqual([x.status, x.type.startsWith('text/javascript')], [200, true]);
  x = await get('/assets/nope.js');
  assert.equal(x.status, 404);
});

test('a revoked token is forgotten: the page says so and goes on as a spectator', async () => {
  const red = await server.principal('Revoked Red');
  const black = await server.principal('Other Black');
  const id = await server.game({ redId: red.id, blackId: black.id });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  await r.page.locator('[data-testid=board][role=application]').waitFor();
  await server.api('POST', '/api/v1/tokens/revoke', { tokenId: red.tokenId });
  await r.page.reload();
  await r.page.getByTestId('conn-state').filter({ hasText: 'refused' }).waitFor();
  await r.page.getByTestId('status').filter({ hasText: 'Red to move' }).waitFor();
  assert.equal(await r.page.evaluate(() => localStorage.getItem('chuhe.token')), null);
  assert.equal(await r.page.locator('[data-testid=board][role=application]').count(), 0);
  await r.ctx.close();
});

test('a draw offered after a move and accepted; a resignation needs a confirmation', async () => {
  const red = await server.principal('Drawing Red');
  const black = await server.principal('Drawing Black');
  const id = await server.game({ redId: red.id, blackId: black.id });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`);
  await r.page.locator('[data-testid=board][role=application]').waitFor();
  await clickSquare(r.page, 'h2');
  await clickSquare(r.page, 'e2');
  await r.page.getByTestId('offer-draw').click();
  await r.page.getByTestId('controls').filter({ hasText: 'waiting for the answer' }).waitFor();
  await b.page.getByTestId('accept-draw').click();
  for (const p of [r.page, b.page]) await p.getByTestId('result').filter({ hasText: 'Draw — draw agreed' }).waitFor();

  const id2 = await server.game({ redId: red.id, blackId: black.id });
  await b.page.goto(`${server.base}/game/${id2}`);
  await b.page.getByTestId('resign').click();
  await b.page.getByTestId('resign-confirm').click();
  await b.page.getByTestId('result').filter({ hasText: 'Red wins — resignation' }).waitFor();
  for (const x of [r, b]) await x.ctx.close();
});

test('a flag falls on screen, after the 读秒 periods', async () => {
  const red = await server.principal('Slow Red');
  const black = await server.principal('Quick Black');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '3s|2x2s' });
  const s = await openAs(browser, server, null, `/game/${id}`, { lang: 'zh-CN' });
  const clock = s.page.getByTestId('clock-red');
  await clock.filter({ hasText: '读秒 ×1' }).waitFor();
  await s.page.getByTestId('result').filter({ hasText: '黑胜' }).waitFor();
  assert.match(await text(s.page, 'result'), /超时/);
  assert.match(await clock.innerText(), /0:00\.0/);
  assert.match(await clock.getAttribute('class'), /\bout\b/);
  await s.ctx.close();
});

test('an arbiter pauses a clock and the players see it; the log keeps who and why', async () => {
  const red = await server.principal('Paused Red');
  const black = await server.principal('Paused Black');
  const arb = await server.principal('Chief Arbiter', 'ROLE_ARBITER');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '10m' });
  const r = await openAs(browser, server, red.token, `/game/${id}`);
  const b = await openAs(browser, server, black.token, `/game/${id}`, { lang: 'zh-CN' });
  const a = await openAs(browser, server, arb.token, `/arbiter/${id}`);
  await a.page.getByTestId('status').filter({ hasText: 'Red to move' }).waitFor();

  // No reason, no action.
  await a.page.getByTestId('pause').click();
  await a.page.getByTestId('arbiter-msg').filter({ hasText: 'reason' }).waitFor();
  await a.page.getByTestId('reason').fill('Red lost the connection');
  await a.page.getByTestId('pause').click();
  await a.page.getByTestId('arbiter-msg').filter({ hasText: 'Done' }).waitFor();

  await r.page.getByTestId('banners').filter({ hasText: 'paused by the arbiter: Red lost the connection' }).waitFor();
  await b.page.getByTestId('banners').filter({ hasText: '裁判暂停了对局' }).waitFor();
  await r.page.getByTestId('clock-red').filter({ hasText: 'paused' }).waitFor();
  const before = await r.page.getByTestId('clock-red').innerText();
  assert.match(await r.page.getByTestId('clock-red').getAttribute('class'), /\bpaused\b/);
  assert.doesNotMatch(await r.page.getByTestId('clock-red').getAttribute('class'), /\brunning\b/);
  assert.equal(await r.page.locator('[data-testid=board][role=application]').count(), 0, 'no moves while paused');
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=paused]').filter({ hasText: 'Red lost the connection' }).waitFor();

  // A minute added to Black, then resume: the players see both. Each decision gives its own
  // reason (the field is cleared after each).
  assert.equal(await a.page.getByTestId('reason').inputValue(), '');
  await a.page.getByTestId('reason').fill('time lost to the disconnection');
  await a.page.getByTestId('add-side').selectOption('SIDE_BLACK');
  await a.page.getByTestId('add-seconds').fill('60');
  await a.page.getByTestId('add-time').click();
  await r.page.getByTestId('banners').filter({ hasText: "Black's clock +60 s" }).waitFor();
  await b.page.getByTestId('clock-black').filter({ hasText: '11:00' }).waitFor();
  assert.equal(await r.page.getByTestId('clock-red').innerText(), before, 'the paused clock does not tick');
  await a.page.getByTestId('reason').fill('connection back');
  await a.page.getByTestId('pause').click();
  await r.page.getByTestId('banners').filter({ hasText: 'resumed the game: connection back' }).waitFor();
  await r.page.locator('[data-testid=board][role=application]').waitFor();
  await a.page.locator('[data-testid=arbiter-log] tr[data-kind=resumed]').waitFor();
  for (const x of [r, b, a]) await x.ctx.close();
});
