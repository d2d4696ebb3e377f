// One game as a client sees it, built from a snapshot and the events after it. Pure: no DOM, no
// network, no clock; importable from Node for the unit tests.
//
// `apply(msg)` takes a `snapshot` or an `event` (the JSON of `chuhe.v1.json`) and answers what
// happened: 'applied', 'duplicate' (an event already seen, e.g. replayed after a reconnect),
// or 'gap' (events are missing: resubscribe with `seq`, the last one applied).

import { parseFen } from './fen.js';

export const SIDES = { SIDE_RED: 'red', SIDE_BLACK: 'black' };

/** 'red', 'black' or null for a wire side. */
export function sideOf(wire) {
  return SIDES[wire] || null;
}

export function otherSide(side) {
  return side === 'red' ? 'black' : 'red';
}

export class GameModel {
  constructor(gameId) {
    this.gameId = String(gameId);
    this.seq = 0;
    this.info = null;
    this.moves = [];
    this.fen = '';
    this.toMove = 'red';
    this.clock = null;
    // When the clock reading was taken: server time (ms) and, for the delayed view, the local
    // time it arrived (set by the caller through `stamp`).
    this.clockAtMs = 0;
    this.clockLocalMs = 0;
    this.result = 'RESULT_UNSPECIFIED';
    this.endReason = '';
    this.endExplanation = '';
    // Why it ended as a code with its parameters (`Phrase`), worded by phrases.js.
    this.endPhrase = null;
    this.drawOffer = null;
    this.fouls = { red: 0, black: 0 };
    this.rulings = [];
    this.delayed = false;
    this.finished = false;
    this.paused = false;
    // Everything that happened, newest last: { seq, atMs, kind, side, text, arbiter, … }.
    this.log = [];
    // The open call to the arbiter (请裁判), as players and arbiters see it:
    // { seq, side, atMs, reason, takenBy, clockStopped } or null.
    this.openCall = null;
    // The arbiter channel this page has seen (calls, takes, closes and messages), oldest first.
    this.channel = [];
    this.snapshots = 0;
  }

  /**
   * The game's description is known. (A spectator of a game with a broadcast delay may get a
   * snapshot before the delay has released even the game's creation: no info yet.)
   */
  get loaded() {
    return Boolean(this.info && this.info.initialFen);
  }

  /** The side that moved first (from the initial FEN). */
  get firstSide() {
    try {
      return parseFen(this.info?.initialFen).toMove;
    } catch {
      return 'red';
    }
  }

  /** Moves `side` has made so far. */
  movesBy(side) {
    const n = this.moves.length;
    const firstCount = Math.ceil(n / 2);
    return side === this.firstSide ? firstCount : n - firstCount;
  }

  /** The side that played the move with number `ply` (1-based). */
  sideOfPly(ply) {
    return ply % 2 === 1 ? this.firstSide : otherSide(this.firstSide);
  }

  get lastMove() {
    return this.moves.length ? this.moves[this.moves.length - 1] : null;
  }

  setClock(c, atMs, localMs) {
    if (!c) return;
    this.clock = c;
    this.clockAtMs = Number(atMs || 0);
    this.clockLocalMs = localMs;
    this.paused = Boolean(c.paused);
  }

  /** Applies a snapshot or an event; `localMs` is the local time it arrived. */
  apply(msg, localMs = 0) {
    if (msg.snapshot) return this.applySnapshot(msg.snapshot, localMs);
    if (msg.event) return this.applyEvent(msg.event, localMs);
    return 'ignored';
  }

  applySnapshot(s, localMs) {
    this.seq = Number(s.seq || 0);
    this.info = s.info || {};
    this.moves = (s.moves || []).slice();
    this.fen = s.fen || this.info.initialFen || '';
    this.toMove = sideOf(s.toMove) || this.toMove;
    this.setClock(s.clock, s.atMs, localMs);
    this.result = s.result || 'RESULT_UNSPECIFIED';
    this.endReason = s.endReason || '';
    this.endPhrase = s.endPhrase || null;
    this.drawOffer = sideOf(s.drawOffer);
    this.fouls = { red: s.redFouls || 0, black: s.blackFouls || 0 };
    this.rulings = (s.rulings || []).slice();
    this.delayed = Boolean(s.delayed);
    this.finished = Boolean(s.finished);
    const oc = s.openCall;
    this.openCall = oc ? {
      seq: Number(oc.callSeq || 0), side: sideOf(oc.side), atMs: Number(oc.atMs || 0), reason: '',
      takenBy: oc.takenBy || null, clockStopped: Boolean(oc.clockStopped),
    } : null;
    this.snapshots += 1;
    return 'applied';
  }

  applyEvent(e, localMs) {
    const seq = Number(e.seq || 0);
    if (seq <= this.seq) return 'duplicate';
    if (!this.loaded && !e.created) return 'gap';
    if (this.loaded && seq !== this.seq + 1) return 'gap';
    this.seq = seq;
    const at = e.atMs;
    const entry = { seq, atMs: Number(at || 0), kind: '', side: null, text: '', arbiter: null };
    if (e.created) {
      this.info = e.created.info || {};
      this.fen = this.info.initialFen || '';
      this.toMove = parseFen(this.fen).toMove;
      this.setClock(e.created.clock, at, localMs);
      entry.kind = 'created';
    } else if (e.move) {
      const m = e.move.move || {};
      this.moves.push(m);
      this.fen = m.fen || this.fen;
      try {
        this.toMove = parseFen(this.fen).toMove;
      } catch {
        this.toMove = otherSide(sideOf(e.move.side));
      }
      this.setClock(e.move.clock, at, localMs);
      entry.kind = 'move';
      entry.side = sideOf(e.move.side);
      entry.move = m;
    } else if (e.drawOffered) {
      this.drawOffer = sideOf(e.drawOffered.side);
      entry.kind = 'drawOffered';
      entry.side = this.drawOffer;
    } else if (e.drawDeclined) {
      this.drawOffer = null;
      entry.kind = 'drawDeclined';
      entry.side = sideOf(e.drawDeclined.side);
      entry.byMoving = Boolean(e.drawDeclined.byMoving);
    } else if (e.foul) {
      const side = sideOf(e.foul.side);
      if (side) this.fouls[side] = e.foul.count || this.fouls[side] + 1;
      Object.assign(entry, {
        kind: 'foul', side, code: e.foul.code, text: e.foul.explanation || '', phrase: e.foul.phrase || null,
        count: e.foul.count || 0, arbiter: e.foul.arbiter || null,
      });
    } else if (e.clockAdjusted) {
      const c = e.clockAdjusted;
      this.setClock(c.clock, at, localMs);
      Object.assign(entry, {
        kind: 'clockAdjusted', side: sideOf(c.side), deltaMs: Number(c.deltaMs || 0),
        code: c.code, arbiter: c.arbiter || null,
      });
    } else if (e.paused) {
      this.setClock(e.paused.clock, at, localMs);
      this.paused = true;
      Object.assign(entry, { kind: 'paused', arbiter: e.paused.arbiter || null });
    } else if (e.resumed) {
      this.setClock(e.resumed.clock, at, localMs);
      this.paused = false;
      Object.assign(entry, { kind: 'resumed', arbiter: e.resumed.arbiter || null });
    } else if (e.ruling) {
      const r = e.ruling.ruling || {};
      this.rulings.push(r);
      Object.assign(entry, { kind: 'ruling', side: sideOf(r.side), text: r.explanation || '', ruling: r });
    } else if (e.ended) {
      const x = e.ended;
      this.result = x.result || 'RESULT_UNSPECIFIED';
      this.endReason = x.reason || '';
      this.endExplanation = x.explanation || '';
      this.endPhrase = x.phrase || null;
      this.finished = true;
      this.drawOffer = null;
      this.setClock(x.clock, at, localMs);
      Object.assign(entry, {
        kind: 'ended', result: this.result, code: this.endReason, text: this.endExplanation, phrase: this.endPhrase,
        arbiter: x.arbiter || null,
      });
    } else if (e.rulingOverridden) {
      const x = e.rulingOverridden;
      Object.assign(entry, {
        kind: 'rulingOverridden', rulingSeq: Number(x.rulingSeq || 0),
        result: x.result || 'RESULT_UNSPECIFIED', arbiter: x.arbiter || null,
      });
    } else if (e.started) {
      // A scheduled game's clocks start: the reading is as of the scheduled instant, even when
      // the event is recorded a little later.
      this.setClock(e.started.clock, e.started.startedAtMs || at, localMs);
      this.started = true;
      entry.kind = 'started';
    } else if (e.joined) {
      Object.assign(entry, { kind: 'joined', side: sideOf(e.joined.side) });
    } else if (e.serverRestarted) {
      this.setClock(e.serverRestarted.clock, at, localMs);
      Object.assign(entry, {
        kind: 'serverRestarted', downtimeMs: Number(e.serverRestarted.downtimeMs || 0),
      });
    } else if (e.arbiterCalled) {
      const c = e.arbiterCalled;
      this.setClock(c.clock, at, localMs);
      this.openCall = {
        seq, side: sideOf(c.side), atMs: Number(at || 0), reason: c.reason || '', takenBy: null,
        clockStopped: Boolean(c.clockStopped),
      };
      Object.assign(entry, { kind: 'arbiterCalled', side: this.openCall.side, text: c.reason || '', count: c.count || 0, clockStopped: Boolean(c.clockStopped) });
      this.channel.push(entry);
    } else if (e.callTaken) {
      const by = e.callTaken.arbiter?.arbiterId || null;
      if (this.openCall && this.openCall.seq === Number(e.callTaken.callSeq || 0)) this.openCall.takenBy = by;
      Object.assign(entry, { kind: 'callTaken', callSeq: Number(e.callTaken.callSeq || 0), arbiter: e.callTaken.arbiter || null });
      this.channel.push(entry);
    } else if (e.callClosed) {
      if (this.openCall && this.openCall.seq === Number(e.callClosed.callSeq || 0)) this.openCall = null;
      Object.assign(entry, { kind: 'callClosed', callSeq: Number(e.callClosed.callSeq || 0), arbiter: e.callClosed.arbiter || null });
      this.channel.push(entry);
    } else if (e.message) {
      const m = e.message;
      Object.assign(entry, {
        kind: 'message', fromId: m.fromId || '', fromArbiter: m.fromRole === 'ROLE_ARBITER',
        side: sideOf(m.fromSide), to: sideOf(m.to), text: m.text || '', callSeq: Number(m.callSeq || 0),
      });
      this.channel.push(entry);
    } else if (e.private) {
      // Something of the arbiter channel that is not for this viewer: only the clocks change.
      if (e.private.clock) this.setClock(e.private.clock, at, localMs);
      entry.kind = 'private';
    } else {
      entry.kind = 'unknown';
    }
    this.log.push(entry);
    return 'applied';
  }
}
