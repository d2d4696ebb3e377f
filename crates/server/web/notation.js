// Move lists: moves in pairs, in Chinese, WXF or ICCS notation. Pure.

export const NOTATIONS = ['chinese', 'wxf', 'iccs'];

/** A move record's text in `notation` (falls back to ICCS). */
export function moveText(m, notation) {
  if (!m) return '';
  if (notation === 'wxf') return m.wxf || m.iccs || '';
  if (notation === 'iccs') return m.iccs || '';
  return m.chinese || m.iccs || '';
}

/**
 * The moves as numbered pairs `[{ no, red, black }]` (each a move record or null). When Black
 * moved first (a set-up position), the first pair has no Red move.
 */
export function movePairs(moves, firstSide = 'red') {
  const out = [];
  let i = 0;
  let no = 1;
  if (firstSide === 'black' && moves.length) {
    out.push({ no, red: null, black: moves[0] });
    i = 1;
    no = 2;
  }
  for (; i < moves.length; i += 2, no += 1) {
    out.push({ no, red: moves[i], black: moves[i + 1] || null });
  }
  return out;
}
