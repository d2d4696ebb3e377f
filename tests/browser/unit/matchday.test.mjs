// The match day's pure helpers (crates/server/web/matchday.js): what follows a game on its
// board and why, "my games" sorted, the waiting state of a game, the event file a form writes;
// and every match-day key has both languages.
import test from 'node:test';
import assert from 'node:assert/strict';
import { afterGame, sortBoards, waitingText, eventToml, stageLabel } from '../../../crates/server/web/matchday.js';
import { LANGS } from '../../../crates/server/web/i18n.js';

const games = [
  { gameId: '7', stageName: 'slow', result: { outcome: 'draw' } },
  { gameId: '9', stageName: 'fast', result: null },
];

test('the game after a drawn slow game is the fast one, and the banner says why', () => {
  const a = afterGame(games, '7');
  assert.equal(a.next, '9');
  assert.equal(a.why.key, 'md.chain.drawn');
  assert.deepEqual(a.why.vars, { prev: 'slow game', Prev: 'Slow game', next: 'fast game' });
  // Drawn, the next game not set up yet: its name from the chain.
  const b = afterGame([{ gameId: '9', stage: 1, stageName: 'fast', result: { outcome: 'draw' } }], '9', [{ name: 'slow' }, { name: 'fast' }, { name: 'armageddon' }]);
  assert.deepEqual([b.next, b.why.vars.next], [null, 'armageddon']);
  assert.deepEqual(afterGame(games, '9'), { next: null, why: null }, 'the last game: nothing yet');
  assert.deepEqual(afterGame(games, '99'), { next: null, why: null }, 'not on this board');
  // "My games" gives results as words from the player's side; a draw is a draw.
  assert.equal(afterGame([{ gameId: '1', stageName: 'slow', result: 'draw' }, { gameId: '2', stageName: 'fast' }], '1').why.key, 'md.chain.drawn');
  assert.equal(afterGame([{ gameId: '1', stageName: 'last', result: 'draw' }], '1').why, null, 'the chain ends: nothing next');
  // A replayed board goes on without a draw: a plain "next".
  assert.equal(afterGame([{ gameId: '1', result: { outcome: 'first' } }, { gameId: '2', stageName: 'slow' }], '1').why.key, 'md.chain.next');
});

test('my games: live, next (soonest first) and played (latest first)', () => {
  const b = (x) => ({ revealed: true, finished: false, matchFinished: false, forfeit: false, current: null, ...x });
  const s = sortBoards([
    b({ startsAt: '2027-03-08T06:00:00Z', finished: true }),
    b({ startsAt: '2027-03-09T06:00:00Z' }),
    b({ startsAt: '2027-03-07T06:00:00Z', current: '5' }),
    { revealed: false, startsAt: '2027-03-08T06:00:00Z', matchFinished: false },
    b({ startsAt: '2027-03-10T06:00:00Z', forfeit: true }),
  ]);
  assert.deepEqual(s.live.map((x) => x.current), ['5']);
  assert.deepEqual(s.next.map((x) => x.startsAt), ['2027-03-08T06:00:00Z', '2027-03-09T06:00:00Z']);
  assert.deepEqual(s.done.map((x) => x.startsAt), ['2027-03-10T06:00:00Z', '2027-03-08T06:00:00Z']);
});

test('a game waiting: the countdown to a scheduled start, the opponent, or nothing once going', () => {
  const base = {
    loaded: true, finished: false, paused: false, moves: [], log: [], toMove: 'red',
    clock: { running: 'SIDE_NONE' },
    info: { startMode: 'START_MODE_SCHEDULED', scheduledStartMs: '65000', redName: 'R', blackName: 'B' },
  };
  assert.match(waitingText(base, 'red', 0), /1:05/);
  assert.equal(waitingText({ ...base, info: { ...base.info, startMode: 'START_MODE_PLAYERS_PRESENT' } }, 'red', 0), LANGS.en['md.wait.opponent'].replace('{name}', 'B'));
  const running = { ...base, clock: { running: 'SIDE_RED' } };
  assert.equal(waitingText(running, 'red', 70000), LANGS.en['md.wait.yourMove']);
  assert.equal(waitingText(running, 'black', 70000), LANGS.en['md.wait.opponentFirst'].replace('{name}', 'R'));
  assert.equal(waitingText({ ...running, log: [{ kind: 'joined', side: 'red' }] }, 'black', 70000), LANGS.en['md.wait.opponentThinking'].replace('{name}', 'R'));
  assert.equal(waitingText({ ...running, moves: [{}] }, 'black', 70000), '', 'going: nothing to wait for');
  assert.equal(waitingText({ ...running, finished: true }, 'red', 70000), '');
});

test('the form writes an event file the server reads (TOML)', () => {
  const text = eventToml({
    name: '城市 "联赛"', boards: 2, legs: 1, chain: 'slow-fast-armageddon', timeControls: ['60m+30s', ' 10m+5s', 'red:5m;black:4m'],
    teams: '东城: 甲一, 甲二\n西城：乙一，乙二\n', arbiters: '高明\n', firstRound: '2027-03-06T06:00:00.000Z', every: '7d',
  });
  assert.match(text, /^name = "城市 \\"联赛\\""$/m);
  assert.match(text, /time_controls = \["60m\+30s", "10m\+5s", "red:5m;black:4m"\]/);
  assert.match(text, /\[\[teams\]\]\nname = "西城"\nplayers = \["乙一", "乙二"\]/);
  assert.match(text, /arbiters = \["高明"\]/);
  assert.match(text, /\[schedule\]\nfirst_round = "2027-03-06T06:00:00.000Z"\nevery = "7d"/);
  assert.match(eventToml({ name: 'x', chain: 'single', timeControls: ['10m'] }), /preset = "single", time_control = "10m"/);
});

test('every match-day text is in both languages', () => {
  const en = Object.keys(LANGS.en).filter((k) => k.startsWith('md.'));
  const zh = Object.keys(LANGS['zh-CN']).filter((k) => k.startsWith('md.'));
  assert.ok(en.length > 100);
  assert.deepEqual(en.filter((k) => !zh.includes(k)), []);
  assert.deepEqual(zh.filter((k) => !en.includes(k)), []);
  assert.equal(stageLabel('slow'), 'slow game');
  assert.equal(stageLabel('决赛局'), '决赛局', "the event's own name stays");
});
