// The client's game model (crates/server/web/model.js): snapshot + events, duplicates after a
// reconnect, gaps, and the notation helpers.
import test from 'node:test';
import assert from 'node:assert/strict';
import { GameModel } from '../../../crates/server/web/model.js';
import { movePairs, moveText } from '../../../crates/server/web/notation.js';
import { parseFen, kingSquare, splitMove } from '../../../crates/server/web/fen.js';

const START = 'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1';
const AFTER = 'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1';
const clock = (running) => ({ red: { remainingMs: '900000' }, black: { remainingMs: '900000' }, running });

function created() {
  return { event: { gameId: '5', seq: '1', atMs: '1000', created: { info: { gameId: '5', redId: '1', blackId: '2', redName: 'A', blackName: 'B', timeControl: '15m+10s', initialFen: START }, clock: clock('SIDE_RED') } } };
}
function moved(seq) {
  return { event: { gameId: '5', seq: String(seq), atMs: '3000', move: { side: 'SIDE_RED', move: { ply: 1, iccs: 'h2e2', chinese: '炮二平五', wxf: 'C2=5', fen: AFTER }, clock: clock('SIDE_BLACK') } } };
}

test('events build the game; a replayed event is a duplicate; a skipped seq is a gap', () => {
  const m = new GameModel('5');
  assert.equal(m.apply(moved(2)), 'gap', 'an event before the game is known');
  assert.equal(m.apply(created(), 10), 'applied');
  assert.equal(m.toMove, 'red');
  assert.equal(m.apply(moved(2), 20), 'applied');
  assert.equal(m.apply(moved(2), 30), 'duplicate');
  assert.equal(m.moves.length, 1);
  assert.equal(m.toMove, 'black');
  assert.equal(m.clock.running, 'SIDE_BLACK');
  assert.equal(m.clockAtMs, 3000);
  assert.equal(m.clockLocalMs, 20);
  assert.equal(m.movesBy('red'), 1);
  assert.equal(m.movesBy('black'), 0);
  const paused = { event: { gameId: '5', seq: '4', atMs: '4000', paused: { clock: { ...clock('SIDE_UNSPECIFIED'), paused: true }, arbiter: { arbiterId: '9', reason: 'net' } } } };
  assert.equal(m.apply(paused), 'gap');
  paused.event.seq = '3';
  assert.equal(m.apply(paused), 'applied');
  assert.ok(m.paused);
  assert.equal(m.log.at(-1).arbiter.reason, 'net');
  const ended = { event: { gameId: '5', seq: '4', atMs: '5000', ended: { result: 'RESULT_BLACK_WINS', reason: 'flag', explanation: 'Red ran out of time', clock: clock('SIDE_UNSPECIFIED') } } };
  assert.equal(m.apply(ended), 'applied');
  assert.ok(m.finished);
  assert.equal(m.endReason, 'flag');
});

test('a snapshot replaces everything; events continue from its seq', () => {
  const m = new GameModel('5');
  m.apply({ snapshot: { gameId: '5', seq: '7', atMs: '9000', info: created().event.created.info, moves: [moved(2).event.move.move], fen: AFTER, toMove: 'SIDE_BLACK', clock: clock('SIDE_BLACK'), drawOffer: 'SIDE_RED', redFouls: 1, delayed: true } }, 50);
  assert.equal(m.seq, 7);
  assert.equal(m.drawOffer, 'red');
  assert.equal(m.fouls.red, 1);
  assert.ok(m.delayed);
  assert.equal(m.apply(moved(7)), 'duplicate');
  assert.equal(m.apply(moved(9)), 'gap');
});

test('a delayed snapshot may come before the game is released: not loaded until created', () => {
  const m = new GameModel('5');
  assert.equal(m.apply({ snapshot: { gameId: '5', info: {}, toMove: 'SIDE_RED', clock: {}, delayed: true } }), 'applied');
  assert.equal(m.loaded, false);
  assert.equal(m.apply(moved(2)), 'gap');
  assert.equal(m.apply(created()), 'applied');
  assert.ok(m.loaded);
  assert.equal(m.apply(moved(2)), 'applied');
});

test('moves in pairs, in each notation; Black first in a set-up position', () => {
  const a = { ply: 1, iccs: 'h2e2', chinese: '炮二平五', wxf: 'C2=5' };
  const b = { ply: 2, iccs: 'h9g7', chinese: '马8进7', wxf: 'H8+7' };
  const c = { ply: 3, iccs: 'h0g2', chinese: '马二进三', wxf: 'H2+3' };
  assert.deepEqual(movePairs([a, b, c]), [{ no: 1, red: a, black: b }, { no: 2, red: c, black: null }]);
  assert.deepEqual(movePairs([b, c], 'black'), [{ no: 1, red: null, black: b }, { no: 2, red: c, black: null }]);
  assert.equal(moveText(a, 'chinese'), '炮二平五');
  assert.equal(moveText(a, 'wxf'), 'C2=5');
  assert.equal(moveText(a, 'iccs'), 'h2e2');
});

test('FEN placement, kings and move squares', () => {
  const p = parseFen(START);
  assert.equal(p.pieces.size, 32);
  assert.equal(p.pieces.get('e0'), 'K');
  assert.equal(p.pieces.get('h7'), 'c');
  assert.equal(kingSquare(p.pieces, 'black'), 'e9');
  assert.equal(parseFen(AFTER).toMove, 'black');
  assert.throws(() => parseFen('9/9 w'));
  assert.throws(() => parseFen('rnbakabnrr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w'));
  assert.deepEqual(splitMove('h2e2'), { from: 'h2', to: 'e2' });
  assert.equal(splitMove('z2e2'), null);
});

test('a scheduled game: the clocks start with the started event, as of its scheduled instant', () => {
  const m = new GameModel('5');
  const c = created();
  c.event.created.clock = clock(undefined);
  assert.equal(m.apply(c, 10), 'applied');
  assert.equal(m.clock.running, undefined);
  assert.equal(m.apply({ event: { gameId: '5', seq: '2', atMs: '2000', joined: { side: 'SIDE_BLACK' } } }, 20), 'applied');
  assert.equal(m.log.at(-1).kind, 'joined');
  assert.equal(m.apply({ event: { gameId: '5', seq: '3', atMs: '5200', started: { clock: clock('SIDE_RED'), startedAtMs: '5000' } } }, 30), 'applied');
  assert.equal(m.clock.running, 'SIDE_RED', 'without handling the event the clock stayed stopped');
  assert.equal(m.clockAtMs, 5000);
  assert.equal(m.log.at(-1).kind, 'started');
});

test('the arbiter channel: a call stops the clocks, is taken and closed; messages are kept; a private stand-in moves only the clocks', () => {
  const m = new GameModel('5');
  m.apply(created(), 0);
  m.apply(moved(2), 0);
  const stopped = { ...clock('SIDE_UNSPECIFIED'), paused: true };
  const ev = (seq, body) => ({ event: { gameId: '5', seq: String(seq), atMs: String(4000 + seq), ...body } });
  assert.equal(m.apply(ev(3, { arbiterCalled: { side: 'SIDE_BLACK', reason: 'phone', clock: stopped, clockStopped: true, count: 1 } })), 'applied');
  assert.deepEqual(m.openCall, { seq: 3, side: 'black', atMs: 4003, reason: 'phone', takenBy: null, clockStopped: true });
  assert.ok(m.paused, 'the call stopped the clocks');
  m.apply(ev(4, { callTaken: { callSeq: '3', arbiter: { arbiterId: '9', reason: '' } } }));
  assert.equal(m.openCall.takenBy, '9');
  m.apply(ev(5, { message: { fromId: '9', fromRole: 'ROLE_ARBITER', fromSide: 'SIDE_UNSPECIFIED', to: 'SIDE_BLACK', text: 'go on', callSeq: '3' } }));
  m.apply(ev(6, { message: { fromId: '2', fromRole: 'ROLE_PLAYER', fromSide: 'SIDE_BLACK', to: 'SIDE_UNSPECIFIED', text: 'ok', callSeq: '3' } }));
  m.apply(ev(7, { callClosed: { callSeq: '3', arbiter: { arbiterId: '9', reason: 'no foul' } } }));
  assert.equal(m.openCall, null);
  assert.deepEqual(m.channel.map((e) => e.kind), ['arbiterCalled', 'callTaken', 'message', 'message', 'callClosed']);
  assert.deepEqual(m.channel.slice(2, 4).map((e) => [e.fromArbiter, e.side, e.to, e.text]), [[true, null, 'black', 'go on'], [false, 'black', null, 'ok']]);
  // What a spectator gets instead: the seq and the clocks only.
  assert.equal(m.apply(ev(8, { private: { clock: clock('SIDE_BLACK') } })), 'applied');
  assert.equal(m.paused, false);
  assert.equal(m.channel.length, 5);
  // A snapshot carries the open call (without its reason).
  const s = new GameModel('5');
  s.apply({ snapshot: { gameId: '5', seq: '3', info: created().event.created.info, fen: AFTER, openCall: { callSeq: '3', side: 'SIDE_BLACK', atMs: '4003', takenBy: '9', clockStopped: true } } });
  assert.deepEqual(s.openCall, { seq: 3, side: 'black', atMs: 4003, reason: '', takenBy: '9', clockStopped: true });
});
