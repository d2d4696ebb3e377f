// One game on screen: the board, both players' names and clocks (ticking locally between the
// server's readings), and a status line (whose move, paused, the result in words). The game
// page builds on it; a team-match page shows several side by side (`compact: true`), each a
// link to its game page. Everything it shows comes from the shared connection's `GameModel`.

import { Board } from './board.js';
import { h, fill } from './dom.js';
import { parseControls, showSide, formatMs } from './clock.js';
import { t, lang, sideName, resultText, reasonText } from './i18n.js';
import { otherSide } from './model.js';

/** A scheduled game whose clocks have not started yet (no move, no side's clock running). */
export function notStarted(m) {
  const running = m.clock?.running === 'SIDE_RED' || m.clock?.running === 'SIDE_BLACK';
  return m.info?.startMode === 'START_MODE_SCHEDULED' && !m.moves.length && !running && !m.finished;
}

export class GameView {
  constructor(conn, gameId, { compact = false, flipped = false, onUpdate = null, onAnnounce = null } = {}) {
    this.conn = conn;
    this.gameId = String(gameId);
    this.compact = compact;
    this.flipped = flipped;
    this.onUpdate = onUpdate;
    this.review = null; // a ply being reviewed, or null for the live position
    this.controls = null;
    this.board = new Board({ flipped, compact, label: t('board.label'), onAnnounce });
    this.top = this.playerRow();
    this.bottom = this.playerRow();
    this.status = h('div.status', { 'data-testid': 'status', 'aria-live': 'off' });
    this.el = h(`section.gameview${compact ? '.compact' : ''}`, { 'data-game': this.gameId },
      this.top.el, this.board.el, this.bottom.el, this.status);
    this.sub = conn.watch(this.gameId, (kind, data, model) => this.update(kind, data, model));
    this.model = this.sub.model;
    this.ticker = setInterval(() => this.tick(), 100);
    this.tick();
  }

  playerRow() {
    const name = h('span.name');
    const side = h('span.side-dot');
    const time = h('span.time');
    const extra = h('span.extra');
    const clock = h('span.clock', {}, time, extra);
    const fouls = h('span.fouls');
    return { el: h('div.player', {}, side, name, fouls, clock), name, side, clock, time, extra, fouls };
  }

  destroy() {
    clearInterval(this.ticker);
    this.sub.stop();
  }

  setFlipped(f) {
    this.flipped = f;
    this.board.setFlipped(f);
    this.renderPlayers();
    this.tick();
  }

  /** Shows the position after move `ply` (null: the live position). */
  showPly(ply) {
    this.review = ply;
    this.renderBoard();
  }

  update(kind, data, model) {
    // `watch` calls back at once for a game already loaded (another view of it on the page),
    // before the constructor has kept the model.
    this.model = model;
    if (kind === 'error') {
      this.onUpdate?.(kind, data, model);
      return;
    }
    if (model.loaded && !this.controls) this.controls = parseControls(model.info.timeControl);
    this.renderPlayers();
    this.renderBoard();
    this.renderStatus();
    this.tick();
    this.onUpdate?.(kind, data, model);
  }

  renderPlayers() {
    const m = this.model;
    if (!m.loaded) return;
    const me = this.conn.principalId;
    const bottomSide = this.flipped ? 'black' : 'red';
    for (const [row, side] of [[this.bottom, bottomSide], [this.top, otherSide(bottomSide)]]) {
      const name = side === 'red' ? m.info.redName : m.info.blackName;
      const id = side === 'red' ? m.info.redId : m.info.blackId;
      row.side.className = `side-dot ${side}`;
      row.side.title = sideName(side);
      row.name.textContent = `${name || '?'}${me && id === me ? ` (${t('game.you')})` : ''}`;
      row.clock.dataset.testid = `clock-${side}`;
      row.el.dataset.side = side;
      const f = m.fouls[side] || 0;
      row.fouls.textContent = f ? `${t('game.fouls')} ${f}` : '';
    }
  }

  renderBoard() {
    const m = this.model;
    if (!m.loaded || !m.fen) return;
    let fen = m.fen;
    let last = m.lastMove;
    if (this.review !== null && this.review >= 0 && this.review < m.moves.length) {
      last = this.review > 0 ? m.moves[this.review - 1] : null;
      fen = last ? last.fen : m.info.initialFen;
    }
    this.board.setPosition({ fen, lastMove: last?.iccs || null, check: Boolean(last?.check) });
  }

  renderStatus() {
    const m = this.model;
    let text;
    if (!m.loaded) {
      text = m.delayed ? t('game.waitingDelay') : t('game.loading');
    } else if (m.finished) {
      text = t('result.line', { result: resultText(m.result), reason: reasonText(m.endReason) });
    } else if (m.paused) {
      text = t('clock.paused');
    } else if (notStarted(m)) {
      text = t('game.startsAt', { at: new Date(Number(m.info.scheduledStartMs)).toLocaleTimeString(lang()) });
    } else {
      text = t('game.toMove', { side: sideName(m.toMove) });
    }
    this.status.textContent = text;
    this.status.className = `status${m.finished ? ' over' : ''}${m.paused ? ' paused' : ''}`;
  }

  /** Milliseconds since the clock reading was taken, as the viewer's stream runs. */
  elapsed() {
    const m = this.model;
    if (m.delayed) return Date.now() - m.clockLocalMs;
    return this.conn.serverNow() - m.clockAtMs;
  }

  tick() {
    const m = this.model;
    if (!m.clock || !m.loaded) return;
    const running = m.finished || m.paused ? null : ({ SIDE_RED: 'red', SIDE_BLACK: 'black' })[m.clock.running] || null;
    const e = this.elapsed();
    const bottomSide = this.flipped ? 'black' : 'red';
    for (const [row, side] of [[this.bottom, bottomSide], [this.top, otherSide(bottomSide)]]) {
      const control = this.controls?.[side] || null;
      const v = showSide(m.clock[side], e, running === side, control, m.movesBy(side));
      row.time.textContent = formatMs(v.ms);
      const bits = [];
      if (v.inByoyomi) bits.push(`${t('clock.byoyomi')} ${t('clock.periods', { n: v.periodsLeft })}`);
      if (v.movesToGo !== null && !this.compact) bits.push(t('clock.movesToGo', { n: v.movesToGo }));
      if (m.paused) bits.push(t('clock.paused'));
      fill(row.extra, bits.join(' · '));
      row.clock.className = `clock${running === side ? ' running' : ''}${v.out ? ' out' : ''}${v.ms < 10000 ? ' low' : ''}${v.inByoyomi ? ' byoyomi' : ''}${m.paused ? ' paused' : ''}`;
    }
  }
}
