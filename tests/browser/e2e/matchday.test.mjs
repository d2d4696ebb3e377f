// A match day run by people in the browser only (real headless Chromium against a real
// server): the organiser uploads the event file (its checks shown inline first), publishes it
// and prints the tokens sheet; both captains sign in from their links and submit lineups; the
// organiser moves the round to now; board 1's players sign in, are taken to their game, and
// play it through slow draw → fast draw → armageddon (the colour chosen on the game page),
// each page moving to the next game by itself with a banner; the arbiter forfeits board 2 with
// a reason in the event console; the standings show the final table. The one bootstrap is
// the organiser's token from `chuhe admin` (startServer), as a person would be given one;
// everything else goes through the pages.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, stopAll, clickSquare } from '../harness.mjs';

let server;
let browser;

before(async () => ({ server, browser } = await startAll()));
after(() => stopAll({ server, browser }));

function eventFile(playersOfSecond) {
  const first = new Date(Date.now() + 86_400_000).toISOString();
  return `name = "象甲 match day"
system = "round_robin"
legs = 1
boards = 2
break_between_games = "1s"
result_chain = { preset = "slow-fast-armageddon", time_controls = ["5m+2s", "3m+2s", "red:2m;black:90s"] }
arbiters = ["裁判长 高明"]

[lineup]
deadline_before = "5s"

[[teams]]
name = "红队"
players = ["红一", "红二"]
captains = ["红队 领队"]

[[teams]]
name = "黑队"
players = [${playersOfSecond}]
captains = ["黑队 领队"]

[schedule]
first_round = "${first}"
every = "1d"
`;
}

/** A new browser context signed in through a sign-in link; its page ends at the link's `next`. */
async function signIn(link, next, lang = 'en') {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: lang === 'zh-CN' ? 'zh-CN' : 'en-US' });
  await ctx.addInitScript((l) => localStorage.setItem('chuhe.lang', l), lang);
  const page = await ctx.newPage();
  page.on('pageerror', (e) => { throw e; });
  await page.goto(link);
  await page.waitForURL(`${server.base}${next}`);
  return { ctx, page };
}

/** The side ('red'/'black') the signed-in player has on its game page (its own row is at the bottom). */
async function mySide(page) {
  await page.locator('.gamepage .gameview .player').nth(1).locator('.name', { hasText: '(you)' }).waitFor();
  return page.locator('.gamepage .gameview .player').nth(1).getAttribute('data-side');
}

/** Red moves 炮二平五 offering a draw, Black accepts: all by clicks on the two game pages. */
async function drawByAgreement(a, b) {
  const sa = await mySide(a.page);
  const [red, black] = sa === 'red' ? [a, b] : [b, a];
  await red.page.locator('[data-testid=clock-red].running').waitFor();
  await black.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  await red.page.getByTestId('offer-with-move').check();
  await clickSquare(red.page, 'h2');
  await clickSquare(red.page, 'e2');
  await black.page.getByTestId('accept-draw').click();
  // Either page may be the Chinese one (colours swap between the chain's games).
  await red.page.getByTestId('result').filter({ hasText: /^(Draw|和棋)/ }).waitFor();
  return { red, black };
}

const gameIdOf = (page) => new URL(page.url()).pathname.split('/').pop();

test('a match day in the browser: upload, publish, tokens, lineups, a board chain to armageddon, a forfeit, standings', async () => {
  // The organiser: a file the checks refuse (a team short of players), then the right one.
  const org = await signIn(`${server.base}/signin#token=${encodeURIComponent(server.orgToken)}&next=/organize`, '/organize');
  const op = org.page;
  await op.getByTestId('event-file').setInputFiles({ name: 'event.toml', mimeType: 'application/toml', buffer: Buffer.from(eventFile('"黑一"')) });
  const refused = op.getByTestId('event-error');
  await refused.waitFor();
  assert.equal(await refused.getAttribute('data-line'), '19', 'the second team\'s players line');
  assert.match(await refused.innerText(), /line 19, column 1: teams\[1\]\.players/);
  await op.getByTestId('event-file').setInputFiles({ name: 'event.toml', mimeType: 'application/toml', buffer: Buffer.from(eventFile('"黑一", "黑二"')) });
  await op.getByTestId('event-ok').filter({ hasText: '2 teams, 2 boards, 1 rounds' }).waitFor();
  await op.getByTestId('event-create').click();
  await op.waitForURL(/\/organize\/\d+$/);
  const id = op.url().split('/').pop();
  await op.getByTestId('publish').click();
  await op.getByTestId('org-msg').filter({ hasText: 'Published' }).waitFor();

  // The tokens sheet: every captain, player and arbiter with a sign-in link.
  await op.getByTestId('issue-tokens').click();
  await op.getByTestId('token-row').nth(6).waitFor();
  const sheet = await op.getByTestId('token-row').evaluateAll((rows) => rows.map((r) => ({
    role: r.dataset.role, name: r.dataset.name, link: r.querySelector('[data-testid=token-link]').href,
  })));
  assert.deepEqual(sheet.map((x) => `${x.role}:${x.name}`).sort(), [
    'arbiter:裁判长 高明', 'captain:红队 领队', 'captain:黑队 领队',
    'player:红一', 'player:红二', 'player:黑一', 'player:黑二'].sort());
  const linkOf = (name) => sheet.find((x) => x.name === name).link;
  // Each with a QR code of its link.
  await op.locator('[data-testid=token-qr] img').nth(6).waitFor();
  assert.equal(await op.locator('[data-testid=token-qr] img').count(), 7);

  // Both captains sign in from their links onto the lineup page and submit (registered order).
  for (const captain of ['红队 领队', '黑队 领队']) {
    const c = await signIn(linkOf(captain), `/league/${id}/lineup`, captain === '黑队 领队' ? 'zh-CN' : 'en');
    await c.page.locator('[data-testid=roster] li').nth(1).waitFor();
    await c.page.getByTestId('submit-lineup').click();
    await c.page.getByTestId('lineup-confirm').waitFor();
    await c.ctx.close();
  }

  // Board 1's players sign in: "my games" shows the board, colour and opponent, and the
  // start once the organiser moves the round; then takes them to the game by itself.
  const p1 = await signIn(linkOf('红一'), '/me');
  const p2 = await signIn(linkOf('黑一'), '/me', 'zh-CN');
  await p1.page.getByTestId('my-board').filter({ hasText: 'Board 1 · you play Red · against 黑一 (黑队)' }).waitFor();
  await p2.page.getByTestId('my-board').filter({ hasText: '第1台' }).waitFor();

  // The organiser moves round 1 to start in a few seconds.
  await op.goto(`${server.base}/organize/${id}`);
  const start = new Date(Date.now() + 8000);
  const pad = (n) => String(n).padStart(2, '0');
  const local = `${start.getFullYear()}-${pad(start.getMonth() + 1)}-${pad(start.getDate())}T${pad(start.getHours())}:${pad(start.getMinutes())}:${pad(start.getSeconds())}`;
  await op.getByTestId('resched-start-1').fill(local);
  await op.getByTestId('resched-1').click();
  await op.getByTestId('org-msg').filter({ hasText: 'Round 1 moved' }).waitFor();

  // Each player's "my games" goes to the slow game by itself, which waits for its start.
  await p1.page.waitForURL(/\/game\/\d+$/);
  await p2.page.waitForURL(/\/game\/\d+$/);
  const slow = gameIdOf(p1.page);
  assert.equal(gameIdOf(p2.page), slow);
  await p1.page.getByTestId('chain').filter({ hasText: 'Board 1' }).waitFor();
  // A player signing in while its game is on goes straight to it from the sign-in link.
  const late = await browser.newContext();
  const lp = await late.newPage();
  await lp.goto(linkOf('红二'));
  await lp.waitForURL(/\/game\/\d+$/);
  await lp.getByTestId('chain').filter({ hasText: 'Board 2' }).waitFor();
  await late.close();

  // Slow game drawn: both pages move to the fast game, with the banner saying why.
  await drawByAgreement(p1, p2);
  await p1.page.waitForURL((u) => /\/game\/\d+$/.test(u.pathname) && !u.pathname.endsWith(`/${slow}`));
  await p2.page.waitForURL((u) => /\/game\/\d+$/.test(u.pathname) && !u.pathname.endsWith(`/${slow}`));
  const fast = gameIdOf(p1.page);
  assert.equal(gameIdOf(p2.page), fast);
  await p1.page.getByTestId('banners').filter({ hasText: 'Slow game drawn: fast game next' }).waitFor();
  await p2.page.getByTestId('banners').filter({ hasText: '慢棋和棋，进入快棋' }).waitFor();
  assert.equal(await mySide(p1.page), 'black', 'colours swap in the fast game');

  // Fast game drawn: the chooser picks the armageddon colour on its game page.
  await drawByAgreement(p1, p2);
  await p1.page.getByTestId('chain-waiting').filter({ hasText: 'Fast game drawn: armageddon next.' }).waitFor();
  const chooser = await Promise.race([
    p1.page.getByTestId('chain-choose-red').waitFor().then(() => p1),
    p2.page.getByTestId('chain-choose-red').waitFor().then(() => p2),
  ]);
  assert.equal(chooser, p1, 'the fast game\'s Black chooses');
  const other = p2;
  assert.equal(await other.page.getByTestId('chain-choose-red').count(), 0, 'only the chooser gets the buttons');
  // Black: a drawn armageddon is Black's (the chain's rule), so the chooser's team takes the board.
  await chooser.page.getByTestId('chain-choose-black').click();
  await p1.page.waitForURL((u) => ![`/game/${slow}`, `/game/${fast}`].includes(u.pathname));
  await p2.page.waitForURL((u) => ![`/game/${slow}`, `/game/${fast}`].includes(u.pathname));
  assert.equal(await mySide(chooser.page), 'black', 'the chooser plays the colour it chose');

  // The armageddon drawn: Black wins the board; the game page shows the board's result and
  // links the match.
  const { black } = await drawByAgreement(p1, p2);
  await p1.page.getByTestId('chain-board-result').waitFor();
  await p2.page.getByTestId('chain-board-result').waitFor();
  assert.equal(await p1.page.getByTestId('chain-match-link').getAttribute('href'), `/league/${id}/match/1/1`);
  assert.equal(black, chooser);
  assert.match(await p1.page.getByTestId('chain-board-result').innerText(), /红队 2 : 1 黑队 · 红队 wins the board/);
  // "My games" lists the board as played, with its result.
  await p1.page.getByTestId('nav-me').click();
  await p1.page.locator('[data-testid=my-done] [data-testid=my-result]').filter({ hasText: '2 : 1' }).waitFor();
  assert.match(await p1.page.getByTestId('my-done').innerText(), /slow game: drawn, you had Red[\s\S]*fast game: drawn, you had Black[\s\S]*armageddon: drawn, you had Black/);

  // The arbiter forfeits board 2 in the event console, with a reason and a confirmation.
  const a = await signIn(linkOf('裁判长 高明'), `/arbiter/league/${id}`);
  await a.page.getByTestId('forfeit-board-by-1-1-2').selectOption('second');
  await a.page.getByTestId('forfeit-board-1-1-2').click();
  assert.match(await a.page.getByTestId('decide-effect').innerText(), /Board 2: forfeited by 黑队 — 红队 wins the board/);
  await a.page.getByTestId('decide-confirm').click();
  await a.page.getByTestId('decide-msg').filter({ hasText: 'reason' }).waitFor();
  await a.page.getByTestId('decide-reason').fill('黑二 did not connect');
  await a.page.getByTestId('decide-confirm').click();
  await a.page.getByTestId('console-msg').filter({ hasText: 'Done' }).waitFor();
  await a.page.locator('[data-testid=console-log] tr[data-kind=board_set]').filter({ hasText: '裁判长 高明' }).filter({ hasText: '黑二 did not connect' }).waitFor();

  // The round page (linked from the event page): its one match, finished, with both boards.
  const rp = await signIn(`${server.base}/league/${id}`, `/league/${id}`);
  await rp.page.getByTestId('round-link-1').click();
  await rp.page.waitForURL(`${server.base}/league/${id}/round/1`);
  await rp.page.locator('[data-testid=round-match-1] .matchview[data-state=finished]').waitFor();
  assert.equal(await rp.page.locator('[data-testid=round-match-1] [data-testid=game-points]').innerText(), '4 : 1');
  assert.equal(await rp.page.locator('[data-testid=round-match-1] .boardcard').count(), 2);
  await rp.ctx.close();

  // The standings: the final table.
  const ev = await signIn(`${server.base}/league/${id}`, `/league/${id}`);
  await ev.page.locator('[data-testid=standings] tbody tr').nth(1).waitFor();
  const rows = await ev.page.locator('[data-testid=standings] tbody tr').allInnerTexts();
  assert.equal(rows.length, 2);
  // 红队 took both boards (board 1 on the armageddon, board 2 by forfeit): it won the match.
  assert.match(rows[0], /^1\s+红队\s+1\s+1-0-0\s+2\s/);
  assert.match(rows[1], /^2\s+黑队\s+1\s+0-0-1\s+0\s/);
  for (const x of [org, p1, p2, a, ev]) await x.ctx.close();
});

test('the organiser writes the event file from the form; the server checks it where it is written', async () => {
  const org = await signIn(`${server.base}/signin#token=${encodeURIComponent(server.orgToken)}&next=/organize`, '/organize', 'zh-CN');
  const p = org.page;
  await p.locator('details.form summary').click();
  await p.getByTestId('form-name').fill('城市联赛');
  await p.getByTestId('form-tcs').fill('60m+30s, 10m+5s, soon');
  await p.getByTestId('form-teams').fill('东城：甲一，甲二\n西城: 乙一, 乙二');
  await p.getByTestId('form-arbiters').fill('高明');
  await p.getByTestId('form-write').click();
  // A time control the server cannot read: refused at the line that gives it.
  const refused = p.getByTestId('event-error');
  await refused.waitFor();
  assert.equal(await refused.getAttribute('data-line'), '5');
  assert.match(await refused.innerText(), /^第5行第\d+列: result_chain\.time_controls\[2\]: "soon"/);
  assert.match(await p.getByTestId('event-text').inputValue(), /\[\[teams\]\]\nname = "西城"\nplayers = \["乙一", "乙二"\]/);
  await p.getByTestId('form-tcs').fill('60m+30s, 10m+5s, red:5m;black:4m');
  await p.getByTestId('form-write').click();
  await p.getByTestId('event-ok').filter({ hasText: '城市联赛，2 队，2 台，1 轮' }).waitFor();
  await p.getByTestId('event-create').click();
  await p.waitForURL(/\/organize\/\d+$/);
  await p.getByTestId('org-name').filter({ hasText: '城市联赛' }).waitFor();
  // The events list has it.
  await p.goto(`${server.base}/organize`);
  await p.locator('[data-testid=events] a', { hasText: '城市联赛' }).waitFor();
  await org.ctx.close();
});

test('the event console: move a round, set a board, replay it, forfeit a match, withdraw a team — each with a reason', async () => {
  // Set up through the organiser API (this test is about the console's decisions).
  const { league } = await import('../harness.mjs');
  const l = await league(server, { name: '象甲 console' });
  const c = await signIn(`${server.base}/signin#token=${encodeURIComponent(server.orgToken)}&next=/arbiter/league/${l.id}`, `/arbiter/league/${l.id}`);
  const p = c.page;
  const decide = async (button, effect, reason) => {
    await p.getByTestId(button).click();
    assert.match(await p.getByTestId('decide-effect').innerText(), effect);
    await p.getByTestId('decide-reason').fill(reason);
    await p.getByTestId('decide-confirm').click();
    await p.getByTestId('console-msg').filter({ hasText: 'Done' }).waitFor();
    await p.getByTestId('decide').waitFor({ state: 'hidden' });
  };

  // Move round 1 a day later: the confirmation names the new start.
  const start = await p.getByTestId('move-start-1').inputValue();
  const later = new Date(Date.parse(start) + 86_400_000);
  const pad = (n) => String(n).padStart(2, '0');
  const local = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  await p.getByTestId('move-start-1').fill(local(later));
  await p.getByTestId('move-deadline-1').fill(local(new Date(later.getTime() - 3_600_000)));
  await decide('move-round-1', /^Round 1 moves to /, 'the hall is booked that day');
  await p.locator('[data-testid=console-log] tr[data-kind=round_rescheduled]').filter({ hasText: 'the hall is booked that day' }).waitFor();

  // Set board 1: one game won by the first team.
  await p.getByTestId('set-board-1-1-1').click();
  await p.getByTestId('set-result-0').selectOption('first');
  assert.match(await p.getByTestId('decide-effect').innerText(), /Board 1: the result below replaces what the games say/);
  await p.getByTestId('decide-reason').fill('recorded from the paper sheet');
  await p.getByTestId('decide-confirm').click();
  await p.getByTestId('console-board-result-1-1-1').filter({ hasText: '2 : 0' }).waitFor();
  assert.match(await p.getByTestId('console-board-result-1-1-1').innerText(), /set by an arbiter/);

  // Replayed: the result goes.
  await decide('replay-board-1-1-1', /Board 1: the board is played again/, 'wrong player seated');
  await p.getByTestId('console-board-result-1-1-1').filter({ hasText: /^$/ }).waitFor();

  // The whole match forfeited by 黑队.
  await p.getByTestId('forfeit-match-by-1-1').selectOption('second');
  await decide('forfeit-match-1-1', /the whole match is forfeited by 黑队/, '黑队 did not come');
  await p.locator('[data-testid=console-match-1-1] h4').filter({ hasText: 'finished' }).waitFor();

  // 黑队 withdraws after round 1.
  await p.getByTestId('withdraw-team').selectOption('1');
  await decide('withdraw', /黑队 withdraws after round 1/, 'the club folded');
  await p.getByTestId('console-teams').filter({ hasText: 'withdrawn after round 1' }).waitFor();
  // The log names the organiser for each decision, with its reason.
  const by = await p.locator('[data-testid=console-log] tr.by-arbiter [data-testid=log-by]').allInnerTexts();
  assert.ok(by.length >= 5 && by.every((x) => x === 'Organiser'), by.join(','));
  await c.ctx.close();
});
