// The embeddable live board and the public event feed, in real Chromium against a real
// server: a plain HTML page on another origin (another local port) includes chuhe's
// /embed.js, which inserts the board's iframe; a move a player makes appears in it no sooner
// than the event's broadcast delay; a Server-Sent Events client of the event feed receives the
// board's result, the match's result and the new standings.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startAll, stopAll, openAs, league, startRound } from '../harness.mjs';

const DELAY_S = 3;

let server;
let browser;
let host;

before(async () => ({ server, browser } = await startAll()));
after(async () => {
  await new Promise((r) => (host ? host.close(r) : r()));
  await stopAll({ server, browser });
});

/** An SSE client of `url` (fetch's streamed body): `next(kind, pred)` resolves with the next event of that kind. */
function sse(url) {
  const ctrl = new AbortController();
  const events = [];
  const waiters = [];
  const check = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      const e = events.find((x, j) => j >= w.from && x.event === w.kind && w.pred(x));
      if (e) {
        waiters.splice(i, 1);
        w.resolve(e);
      }
    }
  };
  (async () => {
    const res = await fetch(url, { headers: { Accept: 'text/event-stream' }, signal: ctrl.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const dec = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const e = { event: 'message', data: '', id: null, at: Date.now() };
        for (const line of block.split('\n')) {
          const [k, ...rest] = line.split(':');
          const v = rest.join(':').replace(/^ /, '');
          if (k === 'event') e.event = v;
          else if (k === 'data') e.data += v;
          else if (k === 'id') e.id = v;
        }
        if (block.trim() && !block.startsWith(':')) events.push(e);
      }
      check();
    }
  })().catch((e) => { if (e.name !== 'AbortError') throw e; });
  return {
    next(kind, pred = () => true) {
      return new Promise((resolve) => {
        waiters.push({ kind, pred, resolve, from: 0 });
        check();
      });
    },
    close: () => ctrl.abort(),
  };
}

test('a page on another origin embeds a live board behind the delay; the feed brings the result and standings', async () => {
  const l = await league(server, {
    boards: 1,
    teams: [{ name: '红队', players: ['红一', '红二'] }, { name: '黑队', players: ['黑一', '黑二'] }],
    extra: { broadcast_delay: { plies: 0, seconds: DELAY_S } },
  });
  const feed = sse(`${server.base}/api/v1/leagues/${l.id}/feed`);
  await startRound(server, l.id);
  const created = await feed.next('game_created');
  const gameId = String(JSON.parse(created.data).game);

  // The embed page's frame-ancestors policy (the default: any site).
  const res = await fetch(`${server.base}/embed/game/${gameId}`);
  assert.equal(res.headers.get('content-security-policy'), 'frame-ancestors *');

  // A plain page on another origin with the script tag.
  host = createServer((req, out) => {
    out.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    out.end(`<!doctype html><html><head><meta charset="utf-8"><title>News</title></head><body>
<h1>象甲 live</h1>
<script src="${server.base}/embed.js" data-game="${gameId}" data-lang="zh" data-width="420px" data-height="600px"></script>
<script src="${server.base}/embed.js" data-league="${l.id}" data-round="1" data-table="1" data-lang="en" data-width="800px" data-height="700px"></script>
</body></html>`);
  });
  await new Promise((r) => host.listen(0, '127.0.0.1', r));
  const hostUrl = `http://127.0.0.1:${host.address().port}/`;
  assert.notEqual(new URL(hostUrl).origin, new URL(server.base).origin);
  const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
  const news = await ctx.newPage();
  news.on('pageerror', (e) => { throw e; });
  await news.goto(hostUrl);
  const frame = news.frameLocator('iframe').first();
  const matchFrame = news.frameLocator('iframe').nth(1);
  await matchFrame.locator('[data-testid=board-1] .gameview').waitFor();
  assert.match(await matchFrame.getByTestId('match-title').innerText(), /Round 1, match 1/, 'English by data-lang=en');
  await frame.locator('[data-testid=board] g.piece[data-square="h2"]').waitFor();
  assert.equal(await frame.locator('a').filter({ hasText: '在楚河打开' }).count(), 1, 'zh by ?lang=zh');
  assert.equal(await frame.getByTestId('embed-ply').getAttribute('data-moves'), '0');
  const size = await news.locator('iframe').first().boundingBox();
  assert.equal(Math.round(size.width), 420, 'sized by its host');

  // Red plays 炮二平五; the player sees it at once, the embed only after the delay.
  const table = await server.api('GET', `/api/v1/leagues/${l.id}/rounds/1/tables/1`);
  const g = table.boards[0].games[0];
  const byId = new Map(l.tokens.map((x) => [x.principalId, x]));
  const red = await openAs(browser, server, byId.get(g.redId).token, `/game/${gameId}`);
  await red.page.locator('[data-testid=clock-red].running').waitFor();
  const t0 = Date.now();
  await red.page.evaluate((id) => globalThis.chuhe.conn.move(id, 1, 'h2e2'), gameId);
  await red.page.locator('[data-testid=board] g.piece[data-square="e2"]').waitFor();
  assert.equal(await frame.getByTestId('embed-ply').getAttribute('data-moves'), '0', 'not yet in the embed');
  await frame.locator('[data-testid=embed-ply][data-moves="1"]').waitFor({ timeout: 30_000 });
  const shownAfter = Date.now() - t0;
  assert.ok(shownAfter >= DELAY_S * 1000, `the move reached the embed after ${shownAfter} ms, before the ${DELAY_S} s delay`);
  assert.ok(await frame.locator('[data-testid=board] g.piece[data-square="e2"]').count(), 'the embed shows the move');
  // Review: back to the start and live again.
  await frame.locator('button', { hasText: '◀' }).click();
  assert.equal(await frame.getByTestId('embed-ply').innerText(), '0 / 1');

  // Red resigns: the feed brings the board's result, then the standings with it.
  await red.page.evaluate((id) => globalThis.chuhe.conn.request({ resign: { gameId: id } }), gameId);
  const finished = await feed.next('game_finished', (e) => String(JSON.parse(e.data).game) === gameId);
  assert.equal(JSON.parse(finished.data).reason, 'resign');
  const decided = JSON.parse((await feed.next('match_result')).data);
  assert.deepEqual([decided.round, decided.table], [1, 1]);
  assert.equal(decided.second.name, '黑队');
  assert.ok(decided.matchPoints, 'the match points');
  const standings = await feed.next('standings', (e) => e.at >= finished.at);
  const st = JSON.parse(standings.data);
  assert.match(JSON.stringify(st), /黑队/);
  feed.close();
  await red.ctx.close();
  await ctx.close();
});
