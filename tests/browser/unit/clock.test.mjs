// The clock display between server readings (crates/server/web/clock.js), against what
// chuhe-clock's `view` computes for the same instants.
import test from 'node:test';
import assert from 'node:assert/strict';
import { parseControls, parseDuration, showSide, stageOf, formatMs } from '../../../crates/server/web/clock.js';

test('durations and controls parse as the server writes them', () => {
  assert.equal(parseDuration('90m'), 5400000);
  assert.equal(parseDuration('1h30m'), 5400000);
  assert.equal(parseDuration('2s500ms'), 2500);
  assert.equal(parseDuration('0'), 0);
  assert.ok(Number.isNaN(parseDuration('90')));
  assert.ok(Number.isNaN(parseDuration('m')));
  const f = parseControls('90m+30s');
  assert.deepEqual(f.red, { stages: [{ moves: null, ms: 5400000 }], incMs: 30000, byo: null });
  assert.equal(f.black, f.red);
  const b = parseControls('30m|3x30s').red;
  assert.deepEqual(b.byo, { periods: 3, ms: 30000 });
  assert.deepEqual(parseControls('30m|60s').red.byo, { periods: 1, ms: 60000 });
  const p = parseControls('40/90m,10/15m').red;
  assert.deepEqual(p.stages, [{ moves: 40, ms: 5400000 }, { moves: 10, ms: 900000 }]);
  const a = parseControls('red:5m;black:4m');
  assert.equal(a.red.stages[0].ms, 300000);
  assert.equal(a.black.stages[0].ms, 240000);
  assert.equal(parseControls('nonsense'), null);
  assert.equal(parseControls(''), null);
  assert.equal(parseControls('red:5m'), null);
});

test('move-count stages: moves to go, the last counted stage repeating', () => {
  const c = parseControls('40/90m,10/15m').red;
  assert.deepEqual(stageOf(c, 0), { stage: 0, movesToGo: 40 });
  assert.deepEqual(stageOf(c, 39), { stage: 0, movesToGo: 1 });
  assert.deepEqual(stageOf(c, 40), { stage: 1, movesToGo: 10 });
  assert.deepEqual(stageOf(c, 57), { stage: 1, movesToGo: 3 });
  const sd = parseControls('40/90m,30m|60s').red;
  assert.deepEqual(stageOf(sd, 45), { stage: 1, movesToGo: null });
  assert.deepEqual(stageOf(parseControls('15m+10s').red, 3), { stage: 0, movesToGo: null });
});

test('a running clock counts down; a stopped one shows its reading', () => {
  const c = parseControls('15m+10s').red;
  const side = { remainingMs: '900000' };
  assert.equal(showSide(side, 1500, true, c, 0).ms, 898500);
  assert.equal(showSide(side, 1500, false, c, 0).ms, 900000);
  const out = showSide(side, 901000, true, c, 0);
  assert.equal(out.ms, 0);
  assert.ok(out.out);
});

test('读秒: main time runs into the periods, each period run past is used up', () => {
  const c = parseControls('30m|3x30s').red;
  // 10 s of main time left, three periods.
  const side = { remainingMs: '10000', periodsLeft: 3 };
  let v = showSide(side, 4000, true, c, 20);
  assert.deepEqual([v.ms, v.inByoyomi, v.periodsLeft], [6000, false, 3]);
  v = showSide(side, 15000, true, c, 20); // 5 s into the first period
  assert.deepEqual([v.ms, v.inByoyomi, v.periodsLeft], [25000, true, 3]);
  v = showSide(side, 45000, true, c, 20); // 35 s past the main time: the second period
  assert.deepEqual([v.ms, v.inByoyomi, v.periodsLeft], [25000, true, 2]);
  v = showSide(side, 100000, true, c, 20); // past all three
  assert.deepEqual([v.ms, v.periodsLeft, v.out], [0, 0, true]);
  // Already in 读秒: 12 s left of the current period, two periods.
  const inByo = { remainingMs: '12000', periodsLeft: 2, inByoyomi: true };
  v = showSide(inByo, 2000, true, c, 20);
  assert.deepEqual([v.ms, v.periodsLeft], [10000, 2]);
  v = showSide(inByo, 13000, true, c, 20); // the current one is gone: 1 s into the last
  assert.deepEqual([v.ms, v.periodsLeft, v.inByoyomi], [29000, 1, true]);
  v = showSide(inByo, 42000, true, c, 20);
  assert.deepEqual([v.ms, v.out], [0, true]);
});

test('读秒 comes only after the last stage; a counted stage just runs out', () => {
  const c = parseControls('40/90m,30m|60s').red;
  const side = { remainingMs: '5000', periodsLeft: 1 };
  // Move 30 of the first stage: no 读秒 yet, the flag (move count) is the server's.
  let v = showSide(side, 6000, true, c, 30);
  assert.deepEqual([v.ms, v.inByoyomi, v.movesToGo], [0, false, 10]);
  // In the sudden-death stage: 读秒 follows.
  v = showSide(side, 6000, true, c, 45);
  assert.deepEqual([v.ms, v.inByoyomi, v.periodsLeft], [59000, true, 1]);
});

test('a move limit per move only (0|60s)', () => {
  const c = parseControls('0|60s').red;
  const v = showSide({ remainingMs: '0', periodsLeft: 1 }, 15000, true, c, 0);
  assert.deepEqual([v.ms, v.inByoyomi], [45000, true]);
});

test('times are formatted for people', () => {
  assert.equal(formatMs(3723000), '1:02:03');
  assert.equal(formatMs(307000), '5:07');
  assert.equal(formatMs(9400), '0:09.4');
  assert.equal(formatMs(-5), '0:00.0');
});
