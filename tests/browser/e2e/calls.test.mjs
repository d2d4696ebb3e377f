// Calling the arbiter (请裁判) and the presence lobby, in real headless Chromium against a real
// server: a league player calls from the game page; the event console of two arbiters rings
// (the alert line, the flashing title, the beep once sound is enabled) and lists the call with
// its board, player and time waiting; one takes it (the other sees who), they exchange
// messages, and the arbiter closes it with a decision. Before another league's round, the
// captain's match page and the arbiter's console show a lined-up player arriving (not yet →
// connected) and leaving; a spectator sees no lobby.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, stopAll, openAs, league, tokenOf, startRound } from '../harness.mjs';

let server;
let browser;

before(async () => ({ server, browser } = await startAll()));
after(() => stopAll({ server, browser }));

const arbiterToken = (tokens, name) => {
  const t = tokens.find((x) => x.role === 'arbiter' && x.name === name);
  if (!t) throw new Error(`no arbiter ${name}`);
  return t.token;
};

test('a player calls the arbiter: the console rings and lists it, an arbiter takes it, messages both ways, closed with a decision', async () => {
  const l = await league(server, { name: '请裁判 browser', boards: 1, extra: { arbiters: ['裁判长', '副裁判'] } });
  const a1 = await openAs(browser, server, arbiterToken(l.tokens, '裁判长'), `/arbiter/league/${l.id}`);
  const a2 = await openAs(browser, server, arbiterToken(l.tokens, '副裁判'), `/arbiter/league/${l.id}`, { lang: 'zh-CN' });
  for (const a of [a1, a2]) await a.page.locator('[data-testid=console-match-1-1]').waitFor();
  assert.equal(await a1.page.getByTestId('call-alert').isHidden(), true, 'no alert before any call');
  // Browsers play sound only after a gesture: the arbiter enables it.
  await a1.page.getByTestId('sound-toggle').click();
  assert.equal(await a1.page.getByTestId('sound-toggle').getAttribute('aria-pressed'), 'true');

  // Board 1's Red waits on "my games", which takes it to its game once the round starts.
  const p = await openAs(browser, server, tokenOf(l.tokens, 'player', 0, '红一').token, '/me');
  await startRound(server, l.id, 1, 1500);
  await p.page.waitForURL(/\/game\/\d+$/);
  const gameId = p.page.url().split('/').pop();
  await p.page.locator('[data-testid=clock-red].running, [data-testid=clock-black].running').first().waitFor();
  // The player's page offers the arbiter only: nothing to write to the opponent or spectators.
  await p.page.getByTestId('call-arbiter').waitFor();
  assert.equal(await p.page.getByTestId('call-to').count(), 0);
  assert.equal(await p.page.getByTestId('call-message').count(), 0, 'no message box before a call');

  await p.page.getByTestId('call-reason').fill('对方一直在看手机');
  await p.page.getByTestId('call-arbiter').click();
  await p.page.getByTestId('open-call').filter({ hasText: 'You called the arbiter' }).waitFor();
  await p.page.getByTestId('call-clock').filter({ hasText: 'the clocks are stopped' }).waitFor();
  await p.page.getByTestId('call-taken').filter({ hasText: 'no arbiter has taken it yet' }).waitFor();

  // Both consoles ring: the alert line, the call with board, player, waiting time and reason.
  const call = (a) => a.page.getByTestId(`call-${gameId}`);
  await a1.page.getByTestId('call-alert').filter({ hasText: '1 open call' }).waitFor();
  await a2.page.getByTestId('call-alert').filter({ hasText: '有 1 个待处理的请裁判' }).waitFor();
  await call(a1).waitFor();
  assert.match(await call(a1).locator('h3').innerText(), /Round 1, match 1 · Board 1 · 红一 \(Red\)/);
  assert.match(await call(a1).getByTestId('call-waiting').innerText(), /^waiting \d+ s$/);
  assert.equal(await call(a1).getByTestId('call-reason-text').innerText(), '对方一直在看手机');
  await call(a2).waitFor();
  // The audible path ran (a beep with sound on), and the title flashes.
  assert.ok(await a1.page.evaluate(() => globalThis.chuhe.rings) >= 1, 'the page rang');
  assert.ok(await a1.page.evaluate(() => globalThis.chuhe.beeps) >= 1, 'the beep played');
  assert.equal(await a2.page.evaluate(() => globalThis.chuhe.beeps), 0, 'no beep where sound is off');
  assert.ok(await a2.page.evaluate(() => globalThis.chuhe.rings) >= 1, 'but it rang');
  await a1.page.waitForFunction(() => document.title.includes('🔔'));

  // 裁判长 takes it; 副裁判's console shows who has it, and so does the player's page.
  await call(a1).getByTestId('desk-take').click();
  await call(a1).getByTestId('call-taken').filter({ hasText: 'taken by 裁判长' }).waitFor();
  await call(a2).getByTestId('call-taken').filter({ hasText: '由裁判长受理' }).waitFor();
  assert.equal(await call(a2).getByTestId('desk-take').count(), 0);
  await p.page.getByTestId('call-taken').filter({ hasText: 'taken by 裁判长' }).waitFor();

  // Messages both ways.
  await call(a1).getByTestId('desk-message').fill('请说明情况');
  await call(a1).getByTestId('desk-send').click();
  await p.page.getByTestId('call-channel').filter({ hasText: 'Arbiter 裁判长 → both players: 请说明情况' }).waitFor();
  await p.page.getByTestId('call-message').fill('他每步都看手机');
  await p.page.getByTestId('send-message').click();
  await call(a1).getByTestId('desk-channel').filter({ hasText: 'Red → arbiter: 他每步都看手机' }).waitFor();
  await call(a2).getByTestId('desk-channel').filter({ hasText: '他每步都看手机' }).waitFor();

  // Closed with a decision: the consoles stop ringing, the player reads the decision.
  await call(a1).getByTestId('desk-decision').fill('未发现违规，继续比赛');
  await call(a1).getByTestId('desk-close').click();
  await a1.page.getByTestId('call-alert').waitFor({ state: 'hidden' });
  await a2.page.getByTestId('call-alert').waitFor({ state: 'hidden' });
  await p.page.getByTestId('open-call').waitFor({ state: 'detached' });
  await p.page.getByTestId('call-channel').filter({ hasText: 'Arbiter 裁判长 closed the call: 未发现违规，继续比赛' }).waitFor();
  await a1.page.waitForFunction(() => !document.title.includes('🔔'));

  // The game console of the board shows the conversation too (for the arbiter commands).
  const g = await openAs(browser, server, arbiterToken(l.tokens, '裁判长'), `/arbiter/${gameId}`);
  await g.page.getByTestId('call-channel').filter({ hasText: '他每步都看手机' }).waitFor();

  // The arbiter messages the captains of the first team, then everyone of the event: each
  // message reaches its recipients on whatever page they have open, and the log keeps it.
  const cap = await openAs(browser, server, tokenOf(l.tokens, 'captain', 0).token, '/me', { lang: 'zh-CN' });
  await cap.page.locator('[data-testid=conn-state][data-state=open]').waitFor();
  await a1.page.getByTestId('notice-to').selectOption('0');
  await a1.page.getByTestId('notice-text').fill('请领队到裁判席');
  await a1.page.getByTestId('notice-send').click();
  await cap.page.getByTestId('notice').filter({ hasText: '裁判裁判长致红队领队： 请领队到裁判席' }).waitFor();
  await a1.page.locator('[data-testid=console-log] tr[data-kind=arbiter_message]').filter({ hasText: '红队: 请领队到裁判席' }).waitFor();
  // 副裁判 writes to everyone (one arbiter's messages are two seconds apart at least).
  await a2.page.getByTestId('notice-to').selectOption('');
  await a2.page.getByTestId('notice-text').fill('所有对局继续');
  await a2.page.getByTestId('notice-send').click();
  await a2.page.getByTestId('notice-msg').filter({ hasText: '已发送' }).waitFor();
  await p.page.getByTestId('notice').filter({ hasText: 'Arbiter 副裁判 to everyone of the event: 所有对局继续' }).waitFor();
  await cap.page.getByTestId('notice').filter({ hasText: '所有对局继续' }).waitFor();
  assert.equal(await p.page.getByTestId('notice').filter({ hasText: '请领队到裁判席' }).count(), 0, 'a team\'s captains only');
  for (const x of [a1, a2, p, g, cap]) await x.ctx.close();
});

test('the presence lobby: a player arriving before the round, seen by the captain and the arbiter; a spectator sees nothing', async () => {
  // Accounts are by name: players of their own, so nobody is here from the test before.
  const teams = [{ name: '东队', players: ['东一', '东二', '东三'] }, { name: '西队', players: ['西一', '西二', '西三'] }];
  const l = await league(server, { name: '到场 browser', boards: 2, teams, extra: { arbiters: ['场裁'], presence_before: '1h', lateness: '15m' } });
  // The lineups are due now (the registered order plays) and the round starts in ten minutes.
  await startRound(server, l.id, 1, 600_000);
  const row = (x, team, board) => x.page.getByTestId(`presence-1-${team}-${board}`);

  const arb = await openAs(browser, server, arbiterToken(l.tokens, '场裁'), `/arbiter/league/${l.id}`);
  const cap = await openAs(browser, server, tokenOf(l.tokens, 'captain', 0).token, `/league/${l.id}/match/1/1`, { lang: 'zh-CN' });
  await row(arb, 0, 1).and(arb.page.locator('[data-presence=not_yet]')).waitFor();
  await row(cap, 0, 1).and(cap.page.locator('[data-presence=not_yet]')).waitFor();
  assert.equal(await row(cap, 0, 1).locator('td.presence').innerText(), '未到');
  // The arbiter sees the time left to the lateness limit of the absent.
  assert.match(await row(arb, 1, 2).getByTestId('presence-lateness').innerText(), /^\d+:\d\d to the lateness limit$/);

  // A spectator's match page has no lobby.
  const spec = await openAs(browser, server, null, `/league/${l.id}/match/1/1`);
  const refused = spec.page.waitForResponse((r) => r.url().includes('/rounds/1/presence'));
  await spec.page.reload();
  assert.ok([401, 403].includes((await refused).status()), 'the lobby is refused to a spectator');
  await spec.page.locator('[data-testid=board-1]').waitFor();
  assert.equal(await spec.page.getByTestId('presence').isHidden(), true);
  assert.equal(await spec.page.locator('[data-testid^=presence-1-]').count(), 0);

  // 东一 (board 1 of the first team) connects: both lobbies change to connected.
  const player = await openAs(browser, server, tokenOf(l.tokens, 'player', 0, '东一').token, '/me');
  await row(cap, 0, 1).and(cap.page.locator('[data-presence=connected]')).waitFor();
  await row(arb, 0, 1).and(arb.page.locator('[data-presence=connected]')).waitFor();
  assert.equal(await row(cap, 0, 1).locator('td.presence').innerText(), '已到');
  assert.equal(await row(arb, 0, 1).getByTestId('presence-lateness').innerText(), '');
  // The others are still not here.
  assert.equal(await row(arb, 0, 2).getAttribute('data-presence'), 'not_yet');
  // And leaves again.
  await player.ctx.close();
  await row(arb, 0, 1).and(arb.page.locator('[data-presence=left]')).waitFor();
  await row(cap, 0, 1).and(cap.page.locator('[data-presence=left]')).waitFor();
  for (const x of [arb, cap, spec]) await x.ctx.close();
});
