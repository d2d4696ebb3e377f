// Clocks between server snapshots. Pure: the caller passes the elapsed time in.
//
// The server sends each side's clock as of an instant (`ClockState`): `remainingMs` (main time,
// or in 读秒 the time left in the current period), `periodsLeft`, `inByoyomi`, and whose clock
// runs. The display counts the running side down from there the way chuhe-clock does: main time
// first, then each byo-yomi period in turn (a period run past is used up), and in move-count
// stages the moves still to make. The flag itself is the server's: a display at zero waits for
// the server's `ended` event (the lag grace may still let a move in).

const UNIT = { h: 3600000, m: 60000, s: 1000, ms: 1 };

/** Milliseconds of a duration like `90m`, `1h30m`, `2s500ms` or `0`; NaN when malformed. */
export function parseDuration(text) {
  const t = text.trim();
  if (t === '0') return 0;
  const re = /(\d+)(ms|h|m|s)/gy;
  let ms = 0;
  let pos = 0;
  let m;
  while ((m = re.exec(t)) !== null) {
    ms += Number(m[1]) * UNIT[m[2]];
    pos = re.lastIndex;
  }
  return pos === t.length && pos > 0 ? ms : NaN;
}

function parseControl(text) {
  let rest = text;
  let byo = null;
  const bar = rest.indexOf('|');
  if (bar >= 0) {
    const b = rest.slice(bar + 1);
    rest = rest.slice(0, bar);
    const x = b.indexOf('x');
    const periods = x >= 0 ? Number(b.slice(0, x)) : 1;
    const ms = parseDuration(x >= 0 ? b.slice(x + 1) : b);
    if (!Number.isInteger(periods) || periods < 1 || Number.isNaN(ms)) return null;
    byo = { periods, ms };
  }
  let incMs = 0;
  const plus = rest.indexOf('+');
  if (plus >= 0) {
    incMs = parseDuration(rest.slice(plus + 1));
    if (Number.isNaN(incMs)) return null;
    rest = rest.slice(0, plus);
  }
  const stages = [];
  for (const part of rest.split(',')) {
    const slash = part.indexOf('/');
    const moves = slash >= 0 ? Number(part.slice(0, slash)) : null;
    const ms = parseDuration(slash >= 0 ? part.slice(slash + 1) : part);
    if (Number.isNaN(ms) || (moves !== null && !(Number.isInteger(moves) && moves > 0))) return null;
    stages.push({ moves, ms });
  }
  return stages.length ? { stages, incMs, byo } : null;
}

/**
 * A time control's text (`90m+30s`, `40/90m,10/15m`, `30m|3x30s`, `red:5m;black:4m`) as
 * `{ red, black }`, each `{ stages: [{ moves, ms }], incMs, byo: { periods, ms } | null }`;
 * null when it cannot be read (the display then counts down plainly).
 */
export function parseControls(text) {
  const t = String(text || '').replace(/\s+/g, '');
  if (!t) return null;
  if (t.includes(';')) {
    const out = {};
    for (const part of t.split(';')) {
      const m = /^(red|black|r|b):(.*)$/.exec(part);
      if (!m) return null;
      const c = parseControl(m[2]);
      if (!c) return null;
      out[m[1].startsWith('r') ? 'red' : 'black'] = c;
    }
    return out.red && out.black ? out : null;
  }
  const c = parseControl(t);
  return c ? { red: c, black: c } : null;
}

/**
 * The stage a side is in after `moves` moves: `{ stage, movesToGo }` (`movesToGo` null in a
 * stage without a move count). A counted last stage repeats.
 */
export function stageOf(control, moves) {
  if (!control) return { stage: 0, movesToGo: null };
  let left = moves;
  const n = control.stages.length;
  for (let i = 0; i < n; i++) {
    const need = control.stages[i].moves;
    if (need === null) return { stage: i, movesToGo: null };
    if (i === n - 1) return { stage: i, movesToGo: need - (left % need) };
    if (left < need) return { stage: i, movesToGo: need - left };
    left -= need;
  }
  return { stage: n - 1, movesToGo: null };
}

/**
 * What one side's clock shows `elapsedMs` after the server's reading `side`
 * (`{ remainingMs, periodsLeft, inByoyomi }`, 64-bit numbers as strings or numbers) while it
 * runs (`running` false: the reading as it is). `moves`: the moves this side has made.
 * Returns `{ ms, inByoyomi, periodsLeft, movesToGo, out }`; `out` once no time is left.
 */
export function showSide(side, elapsedMs, running, control, moves) {
  const remaining = Number(side?.remainingMs || 0);
  let periodsLeft = Number(side?.periodsLeft || 0);
  let inByoyomi = Boolean(side?.inByoyomi);
  const { stage, movesToGo } = stageOf(control, moves);
  const lastStage = control ? stage === control.stages.length - 1 : true;
  const byo = control && lastStage && control.stages[stage].moves === null ? control.byo : null;
  const used = running ? Math.max(0, elapsedMs) : 0;
  let ms = remaining - used;
  if (ms <= 0 && byo && byo.ms > 0 && (inByoyomi || periodsLeft > 0)) {
    // Past the reading's time: main time runs into the first period; in 读秒 the current
    // period is used up. Each full period run past after that is used up too.
    const over = -ms;
    const gone = (inByoyomi ? 1 : 0) + Math.floor(over / byo.ms);
    inByoyomi = true;
    if (gone >= periodsLeft) {
      ms = 0;
      periodsLeft = 0;
    } else {
      periodsLeft -= gone;
      ms = byo.ms - (over % byo.ms);
    }
  }
  ms = Math.max(0, ms);
  return { ms, inByoyomi, periodsLeft, movesToGo, out: ms === 0 };
}

/** `1:02:03`, `5:07`, and under 10 s with tenths: `0:09.4`. */
export function formatMs(ms) {
  const v = Math.max(0, ms);
  if (v < 10000) {
    const tenths = Math.floor(v / 100);
    return `0:0${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  const s = Math.floor(v / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
