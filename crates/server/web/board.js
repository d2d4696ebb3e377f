// The Xiangqi board: an SVG of 9×10 lines with the pieces on the intersections, the palaces
// with their diagonals, the river (楚河 汉界), the position marks and coordinates on the edges
// (Red's files 一…九 and Black's 1…9, ICCS letters and rank digits). It shows the last move, a
// check, the selected piece and its legal moves, and takes moves by click-click, by drag, or by
// keyboard (arrow keys move a cursor, Enter or Space picks up and puts down, Escape cancels).
//
// Reuse: `new Board()` is one board; a page with several (a team match) makes several with
// `{ compact: true }` and no `setMovable` — each is independent.

import { FILES, parseFen, pieceName, pieceSide, squareName, squareOf, kingSquare, splitMove } from './fen.js';

const NS = 'http://www.w3.org/2000/svg';
const U = 10; // one line spacing
const MX = 10; // margins
const MY = 12;
const W = 8 * U + 2 * MX;
const H = 9 * U + 2 * MY;
const RED_FILES = ['九', '八', '七', '六', '五', '四', '三', '二', '一']; // files a…i as Red counts
const MARKS = ['b2', 'h2', 'b7', 'h7', 'a3', 'c3', 'e3', 'g3', 'i3', 'a6', 'c6', 'e6', 'g6', 'i6'];

function s(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

export class Board {
  constructor({ flipped = false, compact = false, label = '', onAnnounce = null } = {}) {
    this.flipped = flipped;
    this.pieces = new Map();
    this.lastMove = null;
    this.check = false;
    this.toMove = 'red';
    this.side = null; // the side the user may move, or null
    this.legal = null; // Map from → Set of to; null = unknown (the server decides)
    this.onMove = null;
    this.selected = null;
    this.cursor = null;
    this.drag = null;
    this.onAnnounce = onAnnounce;
    this.svg = s('svg', {
      viewBox: `0 0 ${W} ${H}`,
      class: `board${compact ? ' compact' : ''}`,
      role: 'img',
      'aria-label': label,
      'data-testid': 'board',
    });
    this.layers = {};
    for (const name of ['grid', 'marks', 'pieces', 'hints', 'cursor', 'hit', 'ghost']) {
      this.layers[name] = s('g', { class: `layer-${name}` });
      this.svg.append(this.layers[name]);
    }
    this.el = document.createElement('div');
    this.el.className = 'board-wrap';
    this.el.append(this.svg);
    this.drawGrid();
    this.drawHit();
    this.bindPointer();
  }

  xy(square) {
    const [f, r] = squareOf(square);
    const col = this.flipped ? 8 - f : f;
    const row = this.flipped ? r : 9 - r;
    return [MX + col * U, MY + row * U];
  }

  squareAtColRow(col, row) {
    if (col < 0 || col > 8 || row < 0 || row > 9) return null;
    const f = this.flipped ? 8 - col : col;
    const r = this.flipped ? row : 9 - row;
    return squareName(f, r);
  }

  drawGrid() {
    const g = this.layers.grid;
    g.replaceChildren();
    g.append(s('rect', { x: 1, y: 1, width: W - 2, height: H - 2, rx: 2, class: 'bg' }));
    g.append(s('rect', { x: MX - 1.6, y: MY - 1.6, width: 8 * U + 3.2, height: 9 * U + 3.2, class: 'frame' }));
    const line = (x1, y1, x2, y2) => g.append(s('line', { x1, y1, x2, y2, class: 'line' }));
    for (let row = 0; row <= 9; row++) line(MX, MY + row * U, MX + 8 * U, MY + row * U);
    for (let col = 0; col <= 8; col++) {
      const x = MX + col * U;
      if (col === 0 || col === 8) line(x, MY, x, MY + 9 * U);
      else {
        line(x, MY, x, MY + 4 * U);
        line(x, MY + 5 * U, x, MY + 9 * U);
      }
    }
    // Palaces: d0–f2 and d7–f9, with their diagonals.
    for (const [a, b] of [['d0', 'f2'], ['f0', 'd2'], ['d7', 'f9'], ['f7', 'd9']]) {
      const [x1, y1] = this.xy(a);
      const [x2, y2] = this.xy(b);
      line(x1, y1, x2, y2);
    }
    // The river.
    const ry = MY + 4.5 * U;
    const left = this.flipped ? '汉 界' : '楚 河';
    const right = this.flipped ? '楚 河' : '汉 界';
    g.append(s('text', { x: MX + 2 * U, y: ry, class: 'river' }, left));
    g.append(s('text', { x: MX + 6 * U, y: ry, class: 'river' }, right));
    // Position marks of the cannons and pawns.
    for (const sq of MARKS) {
      const [x, y] = this.xy(sq);
      const [f] = squareOf(sq);
      const col = this.flipped ? 8 - f : f;
      const d = 1;
      const l = 2.2;
      for (const sx of [-1, 1]) {
        if ((sx < 0 && col === 0) || (sx > 0 && col === 8)) continue;
        for (const sy of [-1, 1]) {
          const px = x + sx * d;
          const py = y + sy * d;
          g.append(s('polyline', { points: `${px + sx * l},${py} ${px},${py} ${px},${py + sy * l}`, class: 'mark' }));
        }
      }
    }
    // Coordinates: the side at the bottom numbers the files from its right.
    const bottomRed = !this.flipped;
    for (let f = 0; f < 9; f++) {
      const [x] = this.xy(squareName(f, 0));
      const redLabel = RED_FILES[f];
      const blackLabel = String(f + 1);
      g.append(s('text', { x, y: MY - 6.2, class: 'coord' }, bottomRed ? blackLabel : redLabel));
      g.append(s('text', { x, y: MY + 9 * U + 6.8, class: 'coord' }, bottomRed ? redLabel : blackLabel));
      g.append(s('text', { x, y: MY + 9 * U + 10.6, class: 'coord iccs' }, FILES[f]));
    }
    for (let r = 0; r <= 9; r++) {
      const [, y] = this.xy(squareName(0, r));
      g.append(s('text', { x: 3.2, y: y + 1, class: 'coord iccs' }, String(r)));
    }
  }

  drawHit() {
    const g = this.layers.hit;
    g.replaceChildren();
    for (let f = 0; f < 9; f++) {
      for (let r = 0; r <= 9; r++) {
        const sq = squareName(f, r);
        const [x, y] = this.xy(sq);
        g.append(s('rect', { x: x - U / 2, y: y - U / 2, width: U, height: U, class: 'hit', 'data-square': sq }));
      }
    }
  }

  /** Shows a position: `fen`, the last move (ICCS) and whether the side to move is in check. */
  setPosition({ fen, lastMove = null, check = false }) {
    const p = parseFen(fen);
    this.pieces = p.pieces;
    this.toMove = p.toMove;
    this.lastMove = lastMove;
    this.check = check;
    if (this.selected && !this.ownPieceAt(this.selected)) this.selected = null;
    this.render();
  }

  setFlipped(flipped) {
    if (this.flipped === flipped) return;
    this.flipped = flipped;
    this.drawGrid();
    this.drawHit();
    this.render();
  }

  /**
   * Lets the user move `side`'s pieces (null: nobody). `legal`: Map from-square → Set of
   * to-squares (null while unknown: any move is sent and the server decides). `onMove(iccs)`.
   */
  setMovable({ side = null, legal = null, onMove = null } = {}) {
    this.side = side;
    this.legal = legal;
    this.onMove = onMove;
    if (!side) this.selected = null;
    this.svg.setAttribute('role', side ? 'application' : 'img');
    this.svg.setAttribute('tabindex', side ? '0' : '-1');
    this.render();
  }

  ownPieceAt(sq) {
    const ch = this.pieces.get(sq);
    return Boolean(ch && this.side && pieceSide(ch) === this.side && this.toMove === this.side);
  }

  targetsOf(sq) {
    if (!this.legal) return null;
    return this.legal.get(sq) || new Set();
  }

  render() {
    const pl = this.layers.pieces;
    const hints = this.layers.hints;
    pl.replaceChildren();
    hints.replaceChildren();
    const lm = splitMove(this.lastMove);
    if (lm) {
      for (const sq of [lm.from, lm.to]) {
        const [x, y] = this.xy(sq);
        pl.append(s('rect', { x: x - 4.6, y: y - 4.6, width: 9.2, height: 9.2, rx: 1.2, class: 'last', 'data-last': sq }));
      }
    }
    if (this.check) {
      const k = kingSquare(this.pieces, this.toMove);
      if (k) {
        const [x, y] = this.xy(k);
        pl.append(s('circle', { cx: x, cy: y, r: 5.2, class: 'check', 'data-check': k }));
      }
    }
    for (const [sq, ch] of this.pieces) {
      const [x, y] = this.xy(sq);
      const side = pieceSide(ch);
      const g = s('g', {
        class: `piece ${side}${sq === this.selected ? ' selected' : ''}${this.drag?.from === sq ? ' dragging' : ''}`,
        transform: `translate(${x} ${y})`,
        'data-square': sq,
        'data-piece': ch,
      });
      g.append(s('circle', { r: 4.4, class: 'disc' }));
      g.append(s('circle', { r: 3.6, class: 'ring' }));
      g.append(s('text', { y: 1.55, class: 'char' }, pieceName(ch)));
      pl.append(g);
    }
    if (this.selected) {
      const targets = this.targetsOf(this.selected);
      for (const to of targets || []) {
        const [x, y] = this.xy(to);
        hints.append(this.pieces.has(to)
          ? s('circle', { cx: x, cy: y, r: 4.8, class: 'hint capture', 'data-hint': to })
          : s('circle', { cx: x, cy: y, r: 1.3, class: 'hint', 'data-hint': to }));
      }
    }
    const cur = this.layers.cursor;
    cur.replaceChildren();
    if (this.cursor && this.focused) {
      const [x, y] = this.xy(this.cursor);
      cur.append(s('rect', { x: x - 5, y: y - 5, width: 10, height: 10, class: 'cursor', 'data-cursor': this.cursor }));
    }
  }

  /** A click (or Enter) on a square. */
  pick(sq) {
    if (!this.side || this.toMove !== this.side) return;
    if (this.selected) {
      if (sq === this.selected) {
        this.selected = null;
      } else if (this.ownPieceAt(sq)) {
        this.select(sq);
        return;
      } else {
        const targets = this.targetsOf(this.selected);
        const from = this.selected;
        this.selected = null;
        if (!targets || targets.has(sq)) {
          this.render();
          this.onMove?.(from + sq);
          return;
        }
      }
      this.render();
      return;
    }
    if (this.ownPieceAt(sq)) this.select(sq);
  }

  select(sq) {
    this.selected = sq;
    this.render();
    const n = this.targetsOf(sq)?.size;
    this.onAnnounce?.('selected', { square: sq, piece: pieceName(this.pieces.get(sq)), n: n ?? '?' });
  }

  squareFromEvent(ev) {
    const pt = this.svg.createSVGPoint();
    pt.x = ev.clientX;
    pt.y = ev.clientY;
    const m = this.svg.getScreenCTM();
    if (!m) return null;
    const p = pt.matrixTransform(m.inverse());
    const col = Math.round((p.x - MX) / U);
    const row = Math.round((p.y - MY) / U);
    return { square: this.squareAtColRow(col, row), x: p.x, y: p.y };
  }

  bindPointer() {
    const svg = this.svg;
    svg.addEventListener('pointerdown', (ev) => {
      if (!this.side || ev.button !== 0) return;
      const at = this.squareFromEvent(ev);
      if (!at?.square) return;
      if (this.ownPieceAt(at.square)) {
        this.drag = { from: at.square, x0: at.x, y0: at.y, moved: false, id: ev.pointerId };
        svg.setPointerCapture?.(ev.pointerId);
        ev.preventDefault();
      }
    });
    svg.addEventListener('pointermove', (ev) => {
      const d = this.drag;
      if (!d || ev.pointerId !== d.id) return;
      const at = this.squareFromEvent(ev);
      if (!at) return;
      if (!d.moved && Math.hypot(at.x - d.x0, at.y - d.y0) > 2) {
        d.moved = true;
        this.selected = d.from;
        this.render();
      }
      if (d.moved) this.drawGhost(d.from, at.x, at.y);
    });
    const end = (ev, cancelled) => {
      const d = this.drag;
      if (!d || ev.pointerId !== d.id) return;
      this.drag = null;
      this.layers.ghost.replaceChildren();
      const at = this.squareFromEvent(ev);
      if (!d.moved) {
        this.render();
        return; // a plain click: handled by the click listener
      }
      this.suppressClick = true;
      if (cancelled || !at?.square || at.square === d.from) {
        this.render();
        return;
      }
      this.selected = d.from;
      this.pick(at.square);
    };
    svg.addEventListener('pointerup', (ev) => end(ev, false));
    svg.addEventListener('pointercancel', (ev) => end(ev, true));
    svg.addEventListener('click', (ev) => {
      if (this.suppressClick) {
        this.suppressClick = false;
        return;
      }
      const at = this.squareFromEvent(ev);
      if (at?.square) this.pick(at.square);
    });
    svg.addEventListener('focus', () => {
      this.focused = true;
      if (!this.cursor) this.cursor = this.side === 'black' ? 'e9' : 'e0';
      this.render();
    });
    svg.addEventListener('blur', () => {
      this.focused = false;
      this.render();
    });
    svg.addEventListener('keydown', (ev) => this.key(ev));
  }

  drawGhost(from, x, y) {
    const ch = this.pieces.get(from);
    const g = this.layers.ghost;
    g.replaceChildren();
    const p = s('g', { class: `piece ${pieceSide(ch)} ghost`, transform: `translate(${x} ${y})` });
    p.append(s('circle', { r: 4.6, class: 'disc' }));
    p.append(s('circle', { r: 3.8, class: 'ring' }));
    p.append(s('text', { y: 1.55, class: 'char' }, pieceName(ch)));
    g.append(p);
  }

  key(ev) {
    if (!this.side) return;
    const dirs = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
    if (dirs[ev.key]) {
      ev.preventDefault();
      const [f, r] = squareOf(this.cursor || 'e0');
      let col = this.flipped ? 8 - f : f;
      let row = this.flipped ? r : 9 - r;
      col = Math.max(0, Math.min(8, col + dirs[ev.key][0]));
      row = Math.max(0, Math.min(9, row + dirs[ev.key][1]));
      this.cursor = this.squareAtColRow(col, row);
      this.render();
      const ch = this.pieces.get(this.cursor);
      this.onAnnounce?.('square', { square: this.cursor, piece: ch ? pieceName(ch) : null, side: ch ? pieceSide(ch) : null });
    } else if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      if (this.cursor) this.pick(this.cursor);
    } else if (ev.key === 'Escape') {
      this.selected = null;
      this.render();
    }
  }
}

/** Legal moves (`LegalMoves.moves`) as the Map from → Set of to that `setMovable` takes. */
export function legalMap(moves) {
  const m = new Map();
  for (const mv of moves || []) {
    const p = splitMove(mv.iccs);
    if (!p) continue;
    if (!m.has(p.from)) m.set(p.from, new Set());
    m.get(p.from).add(p.to);
  }
  return m;
}
