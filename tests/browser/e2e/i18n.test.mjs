// Every page (pages.mjs) in real Chromium: in zh-CN no visible English, in English no visible
// Chinese — beyond names, notation, units and the glossed terms of an allow-list — and at
// 360 px wide no horizontal scroll of the page (wide tables scroll inside their own box).
// Then the server's explanations in one language: a perpetual check ruled in Chinese with its
// article once; the lineup page once both lineups are in.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, stopAll, openAs, league, tokenOf } from '../harness.mjs';
import { PAGES, NAMES, scene, visit } from '../pages.mjs';

let server;
let browser;
let s;

before(async () => {
  ({ server, browser } = await startAll());
  s = await scene(server, browser);
});
after(async () => {
  await s?.close();
  await stopAll({ server, browser });
});

// What a page shows, without the parts that are notation or names by nature: the board (its
// pieces are characters), the move list (Chinese notation is the default in both languages),
// the notation and language switches, the brand, time-control texts.
const SKIP = ['svg', 'code.path', '[data-testid=moves]', 'tr[data-kind=move]', '.notation', '[data-testid=lang]', '.brand', '.tc', '.presets', 'noscript', '.sr-only',
  // The tokens sheet's sign-in links: addresses, not words.
  '[data-testid=token-link]'];

async function visibleText(page) {
  return page.evaluate((skip) => {
    const body = document.body.cloneNode(true);
    for (const el of body.querySelectorAll(skip.join(','))) el.remove();
    const extra = [...document.querySelectorAll('input[placeholder]')].map((i) => i.placeholder);
    // innerText of a detached clone is its textContent; keep hidden elements out.
    const hidden = [...document.querySelectorAll('[hidden]')].map((e) => e.textContent);
    let text = body.textContent;
    for (const x of hidden) if (x) text = text.replace(x, ' ');
    return `${text}\n${extra.join('\n')}`;
  }, SKIP);
}

/** The text around the first `word`, to say where it is. */
function around(text, word) {
  const i = text.indexOf(word);
  return i < 0 ? '' : text.slice(Math.max(0, i - 60), i + 60).replace(/\s+/g, ' ');
}

// zh-CN: Latin words allowed (abbreviations, units, notation and file-format names, the
// product's name, the harness's organiser's name).
const LATIN_OK = new Set(['Alt', 'chuhe', 'CSV', 'WXF', 'ICCS', 'Elo', 'PGN', 'XQF', 'DhtmlXQ', 'FEN', 'English', 'min', 'TOML', 'JSON', 'Organiser']);
// English: Chinese allowed for names, the glossed terms and the notation example.
const CJK_OK = ['炮二平五', '读秒', '局分', '场分', '长将', '长捉', '长杀', '一将一捉', '困毙', '楚河', '本页需要'];

for (const p of PAGES) {
  test(`${p.name}: zh-CN shows no English`, async () => {
    const x = await visit(browser, server, s, p, { lang: 'zh-CN' });
    const text = await visibleText(x.page);
    const words = [...text.matchAll(/[A-Za-z][A-Za-z']+/g)].map((m) => m[0]).filter((w) => !LATIN_OK.has(w));
    // Squares (c6) and time controls (15m+10s) are single letters: not words.
    assert.deepEqual(words, [], `${p.name} (zh-CN) shows English: ${words.join(', ')} — in “${around(text, words[0])}”`);
    await x.ctx.close();
  });

  test(`${p.name}: English shows no Chinese beyond names and terms`, async () => {
    const x = await visit(browser, server, s, p, { lang: 'en' });
    let text = await visibleText(x.page);
    for (const n of [...NAMES].sort((a, b) => b.length - a.length)) text = text.split(n).join(' ');
    for (const n of CJK_OK) text = text.split(n).join(' ');
    const cjk = [...text.matchAll(/[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]+/g)].map((m) => m[0]);
    assert.deepEqual(cjk, [], `${p.name} (en) shows Chinese: ${cjk.join(' ')} — in “${around(text, cjk[0])}”`);
    await x.ctx.close();
  });

  test(`${p.name}: fits 360 px without horizontal scroll`, async () => {
    for (const lang of ['zh-CN', 'en']) {
      const x = await visit(browser, server, s, p, { lang, viewport: { width: 360, height: 740 } });
      const { scroll, inner, widest } = await x.page.evaluate(() => {
        const w = innerWidth;
        // The element sticking out furthest, to say what to fix.
        let far = null;
        for (const el of document.querySelectorAll('body *')) {
          const r = el.getBoundingClientRect();
          if (r.right > w + 0.5 && (!far || r.right > far.r)) far = { r: r.right, what: `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}` };
        }
        return { scroll: document.documentElement.scrollWidth, inner: w, widest: far };
      });
      assert.ok(scroll <= inner, `${p.name} (${lang}) is ${scroll} px wide at ${inner} px: ${JSON.stringify(widest)}`);
      await x.ctx.close();
    }
  });
}

test('a perpetual check is ruled in the page language, the article cited once', async () => {
  const red = await server.principal('长将红');
  const black = await server.principal('长将黑');
  const id = await server.game({ redId: red.id, blackId: black.id, timeControl: '15m+10s', initialFen: '3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1' });
  const r = await openAs(browser, server, red.token, `/game/${id}`, { lang: 'zh-CN' });
  const b = await openAs(browser, server, black.token, `/game/${id}`, { lang: 'en' });
  await r.page.locator('[data-testid=clock-red].running').waitFor();
  await b.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  const moves = ['a0a9', 'd9d8', 'a9a8', 'd8d9', 'a8a9', 'd9d8', 'a9a8', 'd8d9', 'a8a9'];
  for (let i = 0; i < moves.length; i++) {
    const p = i % 2 === 0 ? r.page : b.page;
    await p.evaluate(([g, ply, mv]) => globalThis.chuhe.conn.move(g, ply, mv), [id, i + 1, moves[i]]);
  }
  const zh = await r.page.getByTestId('explain').innerText();
  assert.match(zh, /^红方长将，黑方闲着：一方长将，红方判负（第24\.1条）。$/);
  const en = await b.page.getByTestId('explain').innerText();
  assert.match(en, /^Red: perpetual check \(长将\); Black: idle moves\. One-sided perpetual check: Red loses \(art\. 24\.1\)\.$/);
  // The banner of the ruling too: one language, the article once.
  const banner = await r.page.getByTestId('banners').innerText();
  assert.equal(banner.split('24.1').length - 1, 1, banner);
  assert.doesNotMatch(banner, /Red|perpetual/);
  for (const x of [r, b]) await x.ctx.close();
});

test('once both lineups are in, the lineup page no longer says it can change', async () => {
  const l = await league(server, { name: '名单测试' });
  const cap = tokenOf(l.tokens, 'captain', 0);
  const p = await openAs(browser, server, cap.token, `/league/${l.id}/lineup`);
  await p.page.locator('[data-testid=roster] li').nth(2).waitFor();
  assert.match(await p.page.getByTestId('lineup-help').innerText(), /As soon as both lineups are in/);
  await server.api('POST', `/api/v1/leagues/${l.id}/lineups`, { round: 1, table: 1, team: 1, players: ['黑一', '黑二'] }, tokenOf(l.tokens, 'captain', 1).token);
  await p.page.getByTestId('submit-lineup').click();
  const ok = p.page.getByTestId('lineup-confirm');
  await ok.waitFor();
  assert.match(await ok.innerText(), /Both lineups are in and have been revealed: no more changes/);
  assert.doesNotMatch(await ok.innerText(), /You can change it/);
  await p.page.locator('[data-testid=lineup-status][data-state=revealed]').waitFor();
  assert.match(await p.page.getByTestId('lineup-help').innerText(), /no more changes/);
  assert.ok(await p.page.getByTestId('submit-lineup').isDisabled());
  await p.ctx.close();
});

test('errors as pages: 404 with the not-found page, JSON under /api/, no live controls over nothing', async () => {
  const x = await openAs(browser, server, null, '/');
  const res = await x.page.goto(`${server.base}/no/such/page`);
  assert.equal(res.status(), 404);
  await x.page.getByTestId('not-found').waitFor();
  for (const [method, path, status, code] of [['GET', '/api/v1/nowhere', 404, 'not_found'], ['DELETE', '/api/v1/games', 405, 'method_not_allowed']]) {
    const r = await fetch(server.base + path, { method });
    assert.equal(r.status, status, path);
    assert.equal((await r.json()).code, code, path);
  }
  await x.ctx.close();
  const a = await openAs(browser, server, s.arbiter.token, '/arbiter/99999');
  await a.page.getByTestId('not-found').filter({ hasText: '99999' }).waitFor();
  for (const id of ['pause', 'reason', 'set-result-go', 'board']) assert.equal(await a.page.getByTestId(id).count(), 0, id);
  await a.ctx.close();
  const g = await openAs(browser, server, null, '/game/99999', { lang: 'zh-CN' });
  await g.page.getByTestId('not-found').filter({ hasText: '没有第 99999 局' }).waitFor();
  assert.equal(await g.page.getByTestId('board').count(), 0);
  await g.ctx.close();
  const l = await openAs(browser, server, null, '/league/99');
  await l.page.getByTestId('not-found').filter({ hasText: 'There is no event 99' }).waitFor();
  assert.doesNotMatch(await l.page.locator('main').innerText(), /Loading/);
  await l.ctx.close();
  const m = await openAs(browser, server, null, `/league/${s.league}/match/9/9`);
  await m.page.getByTestId('not-found').waitFor();
  await m.ctx.close();
});
