// FEN and squares. Pure: no DOM, importable from Node for the unit tests.
// Squares are ICCS names: files a–i from Red's left, ranks 0–9 from Red's back rank.

export const FILES = 'abcdefghi';

const NAMES = {
  K: '帅', A: '仕', B: '相', E: '相', N: '马', H: '马', R: '车', C: '炮', P: '兵',
  k: '将', a: '士', b: '象', e: '象', n: '马', h: '马', r: '车', c: '炮', p: '卒',
};

/** The Chinese character of a FEN piece letter (upper case = Red). */
export function pieceName(ch) {
  return NAMES[ch] || '?';
}

/** 'red' or 'black' for a FEN piece letter. */
export function pieceSide(ch) {
  return ch === ch.toUpperCase() ? 'red' : 'black';
}

/** The piece kind in upper case, elephant and horse as B and N. */
export function pieceKind(ch) {
  const u = ch.toUpperCase();
  return u === 'E' ? 'B' : u === 'H' ? 'N' : u;
}

export function squareName(file, rank) {
  return FILES[file] + rank;
}

/** [file, rank] of a square name, or null. */
export function squareOf(name) {
  if (typeof name !== 'string' || name.length !== 2) return null;
  const f = FILES.indexOf(name[0]);
  const r = name.charCodeAt(1) - 48;
  if (f < 0 || r < 0 || r > 9) return null;
  return [f, r];
}

/**
 * The position a FEN describes: `pieces` maps square names to FEN piece letters, `toMove` is
 * 'red' or 'black'. Throws on a malformed placement (the server never sends one).
 */
export function parseFen(fen) {
  const [placement, side] = String(fen || '').trim().split(/\s+/);
  const rows = (placement || '').split('/');
  if (rows.length !== 10) throw new Error(`bad FEN: ${fen}`);
  const pieces = new Map();
  rows.forEach((row, i) => {
    const rank = 9 - i;
    let file = 0;
    for (const ch of row) {
      if (ch >= '1' && ch <= '9') file += ch.charCodeAt(0) - 48;
      else {
        if (!NAMES[ch] || file > 8) throw new Error(`bad FEN: ${fen}`);
        pieces.set(squareName(file, rank), ch);
        file += 1;
      }
    }
    if (file !== 9) throw new Error(`bad FEN: ${fen}`);
  });
  return { pieces, toMove: side === 'b' ? 'black' : 'red' };
}

/** The square of `side`'s king, or null. */
export function kingSquare(pieces, side) {
  const k = side === 'red' ? 'K' : 'k';
  for (const [sq, ch] of pieces) if (ch === k) return sq;
  return null;
}

/** From and to squares of an ICCS move, or null. */
export function splitMove(iccs) {
  if (typeof iccs !== 'string' || iccs.length !== 4) return null;
  const from = iccs.slice(0, 2);
  const to = iccs.slice(2);
  return squareOf(from) && squareOf(to) ? { from, to } : null;
}
