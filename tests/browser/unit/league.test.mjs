// The league pages' pure helpers (crates/server/web/league.js): refusal details from what was
// submitted, the captain's starting order, reordering, the countdown, points, live matches,
// the crosstable; and every refusal code has a sentence in both languages.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  refusalDetails, startingOrder, moveItem, countdown, pointsText, isLive, matchState, liveMatch,
  lineupMatch, captainTeam, crosstable, featuredMatch, lobbyOrder, soon,
} from '../../../crates/server/web/league.js';
import { LANGS } from '../../../crates/server/web/i18n.js';

const ROSTER = ['甲', '乙', '丙', '丁'];

test('each refusal reason gets its details from the lineup submitted, in board order', () => {
  const reasons = [
    { code: 'wrong_count', message: '2 players are required, 3 were given' },
    { code: 'duplicate', message: '甲 appears on boards 1 and 3' },
    { code: 'not_on_roster', message: '某人 (board 2) is not on the roster' },
  ];
  const d = refusalDetails(reasons, { players: ['甲', '某人', '甲'], roster: ROSTER, boards: 2 });
  assert.deepEqual(d.map((x) => x.code), ['wrong_count', 'duplicate', 'not_on_roster']);
  assert.equal(d[0].vars.expected, 2);
  assert.equal(d[0].vars.got, 3);
  assert.deepEqual([d[1].vars.name, d[1].vars.first, d[1].vars.second], ['甲', 1, 3]);
  assert.deepEqual([d[2].vars.name, d[2].vars.board], ['某人', 2]);
});

test('an order refusal names the boards: 12.2 reversed, 12.1 fixed', () => {
  const rev = refusalDetails([{ code: 'order', message: 'board 2: 甲 is registered before 乙 (board 1) — the registered order may not be reversed (12.2)' }],
    { players: ['乙', '甲'], roster: ROSTER, boards: 2 });
  assert.equal(rev[0].code, 'order_reversed');
  assert.deepEqual([rev[0].vars.board, rev[0].vars.name, rev[0].vars.above], [2, '甲', '乙']);
  const fixed = refusalDetails([
    { code: 'order', message: 'board 1 must be 甲 (fixed registered order, 12.1), not 丙' },
    { code: 'order', message: 'board 2 must be 乙 (fixed registered order, 12.1), not 甲' },
  ], { players: ['丙', '甲'], roster: ROSTER, boards: 2 });
  assert.deepEqual(fixed.map((x) => [x.code, x.vars.board, x.vars.expected, x.vars.got]),
    [['order_fixed', 1, '甲', '丙'], ['order_fixed', 2, '乙', '甲']]);
  // Details that cannot be found keep the server's sentence.
  const odd = refusalDetails([{ code: 'order', message: 'something new' }, { code: 'surprise', message: 'why' }], { players: ['甲', '乙'], roster: ROSTER, boards: 2 });
  assert.deepEqual(odd.map((x) => [x.code, x.vars.message]), [['order', 'something new'], ['other', 'why']]);
});

test('every refusal sentence exists in English and Chinese and fills its details', () => {
  for (const code of ['deadline_passed', 'wrong_count', 'duplicate', 'not_on_roster', 'order_fixed', 'order_reversed', 'order', 'ineligible', 'other']) {
    for (const l of ['en', 'zh-CN']) assert.ok(LANGS[l][`refusal.${code}`], `${l} refusal.${code}`);
  }
  assert.match(LANGS['zh-CN']['refusal.order_reversed'], /\{board\}.*\{name\}.*\{above\}/);
});

test('the captain starts from the submitted lineup, then the roster; items move', () => {
  assert.deepEqual(startingOrder(ROSTER, ['丙', '甲']), ['丙', '甲', '乙', '丁']);
  assert.deepEqual(startingOrder(ROSTER, ['不在', '甲', '甲']), ['甲', '乙', '丙', '丁']);
  assert.deepEqual(startingOrder(ROSTER), ROSTER);
  assert.deepEqual(moveItem(ROSTER, 0, 2), ['乙', '丙', '甲', '丁']);
  assert.deepEqual(moveItem(ROSTER, 3, 0), ['丁', '甲', '乙', '丙']);
  assert.deepEqual(moveItem(ROSTER, 0, -1), ROSTER);
  assert.deepEqual(moveItem(ROSTER, 4, 0), ROSTER);
});

test('countdowns and points are written for people', () => {
  assert.equal(countdown(0), '0:00');
  assert.equal(countdown(-5), '0:00');
  assert.equal(countdown(61_000), '1:01');
  assert.equal(countdown(3_600_000 + 2_000), '1:00:02');
  assert.equal(countdown(2 * 86_400_000 + 3 * 3_600_000 + 4 * 60_000 + 5_000), '2d 03:04:05');
  assert.equal(countdown(400), '0:01', 'a part of a second still counts');
  assert.equal(pointsText('2.5'), '2½');
  assert.equal(pointsText('0.5'), '½');
  assert.equal(pointsText(3), '3');
  assert.equal(pointsText(null), '–');
});

function table(n, first, second, { finished = false, games = [], revealed = false, gp = ['0', '0'], mp = null } = {}) {
  return {
    table: n, first: { team: first, name: `T${first}` }, second: { team: second, name: `T${second}` }, finished,
    lineups: [{ revealed }, { revealed }], gamePoints: gp, matchPoints: mp,
    boards: [{ board: 1, games }],
  };
}

test('a match is live while a game of it is unfinished; the lobby finds the first one', () => {
  const playing = table(1, 0, 1, { revealed: true, games: [{ gameId: '7', result: null }] });
  const done = table(2, 2, 3, { finished: true, revealed: true, games: [{ gameId: '8', result: { outcome: 'draw' } }], gp: ['1', '1'], mp: ['1', '1'] });
  const waiting = table(1, 1, 2, { revealed: true });
  assert.equal(isLive(playing), true);
  assert.equal(matchState(playing), 'live');
  assert.equal(matchState(done), 'finished');
  assert.equal(matchState(waiting), 'revealed');
  assert.equal(matchState(table(1, 0, 1)), 'upcoming');
  const overview = { teams: [{ captainIds: ['10'] }, {}, {}, { captainIds: ['11', '12'] }], rounds: [{ round: 1, tables: [done, playing] }, { round: 2, tables: [waiting] }] };
  const m = liveMatch(overview);
  assert.equal(m.round.round, 1);
  assert.equal(m.table.table, 1);
  assert.equal(liveMatch({ rounds: [{ round: 1, tables: [done] }] }), null);
  assert.equal(captainTeam(overview, '12'), 3);
  assert.equal(captainTeam(overview, '99'), -1);
  assert.equal(captainTeam(overview, null), -1);
  // Team 1's next match awaiting a lineup: round 2 (round 1's lineups are out).
  const unrevealed = table(1, 1, 2);
  const o2 = { teams: overview.teams, rounds: [{ round: 1, tables: [playing] }, { round: 2, tables: [unrevealed] }] };
  assert.deepEqual([lineupMatch(o2, 1).round.round, lineupMatch(o2, 1).side], [2, 0]);
  assert.equal(lineupMatch(o2, 0), null);
  assert.equal(lineupMatch(o2, 0, 1, 1).side, 0, 'a match given by its round and table');
  // The crosstable: both directions, only matches begun.
  const rows = crosstable({ teams: [{}, {}, {}, {}], rounds: overview.rounds });
  assert.deepEqual(rows[2][3].map((c) => [c.points, c.against, c.matchPoints]), [['1', '1', '1']]);
  assert.deepEqual(rows[0][1].map((c) => [c.points, c.finished]), [['0', false]]);
  assert.equal(rows[1][0].length, 1);
  assert.equal(rows[1][2].length, 0, 'a match not begun is not in the crosstable');
});

test('the lobby looks at the demo league first, newest first, and features live, else next, else last', () => {
  const ls = [
    { id: '1', name: 'chuhe demo league (season 1)', published: true },
    { id: '2', name: '象甲', published: true },
    { id: '3', name: 'chuhe demo league (season 2)', published: true },
    { id: '4', name: 'draft', published: false },
    { id: '5', name: '象乙', published: true },
  ];
  assert.deepEqual(lobbyOrder(ls).map((l) => l.id), ['3', '1', '5', '2']);
  assert.deepEqual(lobbyOrder([...ls, { id: '6', name: 'renamed demo', published: true, demo: true }]).map((l) => l.id),
    ['6', '3', '1', '5', '2'], 'the list\'s demo mark counts');
  const done = table(1, 0, 1, { finished: true, revealed: true });
  const next = table(2, 2, 3);
  const live = table(1, 1, 2, { revealed: true, games: [{ gameId: '9', result: null }] });
  const at = (m) => [m.round.round, m.table.table];
  assert.deepEqual(at(featuredMatch({ rounds: [{ round: 1, tables: [done, next] }, { round: 2, tables: [live] }] })), [2, 1]);
  assert.deepEqual(at(featuredMatch({ rounds: [{ round: 1, tables: [done, next] }] })), [1, 2]);
  assert.deepEqual(at(featuredMatch({ rounds: [{ round: 1, tables: [done] }, { round: 2, tables: [{ ...done, table: 2 }] }] })), [2, 2]);
  assert.equal(featuredMatch({ rounds: [] }), null);
});

test('a burst of stream entries makes one read, spread over a short while', () => {
  const timers = [];
  let reads = 0;
  const read = soon(() => { reads += 1; }, 300, (fn, ms) => timers.push({ fn, ms }));
  read();
  read();
  read();
  assert.equal(timers.length, 1, 'one read armed for the burst');
  assert.ok(timers[0].ms >= 0 && timers[0].ms < 300);
  timers.shift().fn();
  assert.equal(reads, 1);
  read();
  assert.equal(timers.length, 1, 'the next entry arms the next read');
});
