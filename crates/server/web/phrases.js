// The server's explanations in one language: a `Phrase` (`{ code, params: [{ name, value }] }`,
// docs/protocol.md "Phrases") worded in the page's language, with the article cited once; the
// stage names of a board chain (慢棋, 快棋, 超快棋). Pure apart from the chosen language.

import { lang } from './i18n.js';

const EN = {
  'side.red': 'Red',
  'side.black': 'Black',
  article: ' (art. {article})',
  'ended.checkmate': '{side} is checkmated: {winner} wins',
  'ended.stalemate': '{side} has no legal move (stalemate) and loses: {winner} wins',
  'ended.move_limit': 'The natural move limit was reached without a capture: draw',
  'ended.move_limit_claim': '{side} claimed the natural move limit: {plies} plies without a capture (the limit is {limit}): draw',
  'ended.dead_position': 'Neither side can ever mate: draw',
  'ended.repetition': 'Repetition',
  'ended.resign': '{side} resigned: {winner} wins',
  'ended.draw_agreed': "{side} accepted {other}'s draw offer: draw",
  'ended.flag': "{side}'s time ran out: {winner} wins on time",
  'ended.flag_penalty': "The 5-minute penalty used up {side}'s time: {winner} wins",
  'ended.flag_arbiter': "The time charged by the arbiter used up {side}'s time: {winner} wins. Reason: {reason}",
  'ended.fouls': '{side} committed three fouls and loses',
  'ended.arbiter': 'The arbiter set the result ({result}). Reason: {reason}',
  'ended.arbiter_override': 'The arbiter overrode ruling #{ruling_seq} ({result}). Reason: {reason}',
  'ended.lateness': '{side} had not joined the game {after} after its start and loses by lateness',
  'ended.lateness_both': 'Neither player had joined the game {after} after its start: both lose by lateness',
  'foul.repeated_draw_offer': '{side} offered a draw again after it was refused, before {other} offered one: a foul. The offer is not passed on',
  'foul.false_move_limit_claim': '{side} claimed the move limit after {plies} plies without a capture; the limit is {limit}. A false claim is a foul and costs 5 minutes',
  'foul.arbiter': 'Recorded by the arbiter. Reason: {reason}',
  'ruling.who': '{side}: {pattern}{chased}',
  'ruling.chased': ' (chasing {list})',
  'ruling.chasedPiece': 'the {piece} on {square}',
  'ruling.join': '; ',
  'ruling.loss': '{both}. One-sided perpetual check: {side} loses',
  'ruling.loss_after_warning': '{both}. {side} was told to vary, repeated the cycle again and loses',
  'ruling.loss_engine_chase': '{both}. {side} chased the same piece perpetually and loses (engine rules)',
  'ruling.draw.both': "{both}. Both sides' moves are forbidden: the repetition is a draw",
  'ruling.draw.none': "{both}. Both sides' moves are allowed: the repetition is a draw",
  'ruling.draw_engine': '{both}. Drawn by repetition (engine rules)',
  'ruling.must_vary': '{both}. {side} plays forbidden moves and must vary; repeating the cycle once more loses',
  'ruling.none': 'No cycle is being repeated: there is nothing to rule on. The server rules by itself at every third occurrence of a position',
  'pattern.perpetual_check': 'perpetual check (长将)',
  'pattern.perpetual_mate_threat': 'perpetual mate threat (长杀)',
  'pattern.perpetual_chase': 'perpetual chase (长捉)',
  'pattern.check_and_mate_threat': 'alternating check and mate threat',
  'pattern.check_and_chase': 'alternating check and chase (一将一捉)',
  'pattern.mate_threat_and_chase': 'alternating mate threat and chase',
  'pattern.mixed_attack': 'uninterrupted attacks',
  'pattern.attacks_with_idle': 'attacks with idle moves',
  'pattern.idle': 'idle moves',
  'piece.K': 'king', 'piece.A': 'advisor', 'piece.B': 'elephant', 'piece.N': 'horse',
  'piece.R': 'rook', 'piece.C': 'cannon', 'piece.P': 'pawn',
  'result.RESULT_RED_WINS': 'Red wins',
  'result.RESULT_BLACK_WINS': 'Black wins',
  'result.RESULT_DRAW': 'draw',
  'result.RESULT_BOTH_LOSE': 'both lose',
  'result.RESULT_UNSPECIFIED': 'play continues',
  'minutes': '{n} min',
  'minutesSeconds': '{m} min {s} s',
  'stage.slow': 'Slow game',
  'stage.fast': 'Fast game',
  'stage.armageddon': 'Armageddon',
  'stage.blitz': 'Blitz',
  'stage.game': 'Game',
  end: '.',
};

const ZH = {
  'side.red': '红方',
  'side.black': '黑方',
  article: '（第{article}条）',
  'ended.checkmate': '{side}被将死，{winner}胜',
  'ended.stalemate': '{side}无子可走（困毙），{winner}胜',
  'ended.move_limit': '达到自然限着且无吃子，和棋',
  'ended.move_limit_claim': '{side}申请自然限着：已连续 {plies} 步无吃子（限着 {limit} 步），和棋',
  'ended.dead_position': '双方均无可能将死对方，和棋',
  'ended.repetition': '循环重复',
  'ended.resign': '{side}认输，{winner}胜',
  'ended.draw_agreed': '{side}同意了{other}的提和，和棋',
  'ended.flag': '{side}超时，{winner}胜',
  'ended.flag_penalty': '{side}被扣 5 分钟后用完时间，{winner}胜',
  'ended.flag_arbiter': '裁判扣时后{side}用完时间，{winner}胜。理由：{reason}',
  'ended.fouls': '{side}犯规三次，判负',
  'ended.arbiter': '裁判判定结果（{result}）。理由：{reason}',
  'ended.arbiter_override': '裁判改判第 {ruling_seq} 号裁决（{result}）。理由：{reason}',
  'ended.lateness': '{side}在开赛 {after}后仍未到场，按迟到判负',
  'ended.lateness_both': '开赛 {after}后双方均未到场，双方均判负',
  'foul.repeated_draw_offer': '{side}提和被拒后，在{other}提和之前再次提和，按犯规处理；该提和不转达对方',
  'foul.false_move_limit_claim': '{side}在连续 {plies} 步无吃子时申请限着，而限着为 {limit} 步。申请不实按犯规处理，并扣 5 分钟',
  'foul.arbiter': '裁判记录犯规。理由：{reason}',
  'ruling.who': '{side}{pattern}{chased}',
  'ruling.chased': '（捉{list}）',
  'ruling.chasedPiece': '{square}{piece}',
  'ruling.join': '，',
  'ruling.loss': '{both}：一方长将，{side}判负',
  'ruling.loss_after_warning': '{both}：{side}经警告仍不变着，再次循环，判负',
  'ruling.loss_engine_chase': '{both}：{side}长捉同一子，判负（引擎规则）',
  'ruling.draw.both': '{both}：双方均为禁止着法，不变作和',
  'ruling.draw.none': '{both}：双方均为允许着法，不变作和',
  'ruling.draw_engine': '{both}：不变作和（引擎规则）',
  'ruling.must_vary': '{both}：{side}为禁止着法，必须变着，若再重复一次循环即判负',
  'ruling.none': '没有循环重复的局面，无须裁决。局面每第三次出现时服务器自动裁决',
  'pattern.perpetual_check': '长将',
  'pattern.perpetual_mate_threat': '长杀',
  'pattern.perpetual_chase': '长捉',
  'pattern.check_and_mate_threat': '一将一杀',
  'pattern.check_and_chase': '一将一捉',
  'pattern.mate_threat_and_chase': '一杀一捉',
  'pattern.mixed_attack': '将杀捉交替',
  'pattern.attacks_with_idle': '打中有闲',
  'pattern.idle': '闲着',
  'piece.K': '帅', 'piece.A': '仕', 'piece.B': '相', 'piece.N': '马',
  'piece.R': '车', 'piece.C': '炮', 'piece.P': '兵',
  'piece.k': '将', 'piece.a': '士', 'piece.b': '象', 'piece.n': '马',
  'piece.r': '车', 'piece.c': '炮', 'piece.p': '卒',
  'result.RESULT_RED_WINS': '红胜',
  'result.RESULT_BLACK_WINS': '黑胜',
  'result.RESULT_DRAW': '和棋',
  'result.RESULT_BOTH_LOSE': '双方均负',
  'result.RESULT_UNSPECIFIED': '对局继续',
  'minutes': '{n} 分钟',
  'minutesSeconds': '{m} 分 {s} 秒',
  'stage.slow': '慢棋',
  'stage.fast': '快棋',
  'stage.armageddon': '超快棋',
  'stage.blitz': '超快棋',
  'stage.game': '对局',
  end: '。',
};

const TABLES = { en: EN, 'zh-CN': ZH };

function table(l) {
  return TABLES[l] || EN;
}

function fmt(s, vars) {
  return s.replace(/\{(\w+)\}/g, (_, k) => (vars[k] === undefined ? '' : String(vars[k])));
}

/** The parameters of a phrase as an object. */
export function params(p) {
  const o = {};
  for (const x of p?.params || []) o[x.name] = x.value ?? '';
  return o;
}

function duration(ms, T) {
  const s = Math.round(Number(ms || 0) / 1000);
  const m = Math.floor(s / 60);
  return s % 60 ? fmt(T.minutesSeconds, { m, s: s % 60 }) : fmt(T.minutes, { n: m });
}

function chasedList(text, T, l) {
  if (!text) return '';
  const items = text.split(',').filter(Boolean).map((x) => {
    const letter = x[0];
    const square = x.slice(1);
    const piece = T[`piece.${letter}`] || T[`piece.${letter.toUpperCase()}`] || letter;
    return fmt(T['ruling.chasedPiece'], { piece, square });
  });
  if (!items.length) return '';
  return fmt(T['ruling.chased'], { list: items.join(l === 'zh-CN' ? '、' : ', ') });
}

/** Whether the page can word the phrase (otherwise the server's sentence is shown). */
export function knownPhrase(p, l = lang()) {
  if (!p?.code) return false;
  const T = table(l);
  return Boolean(T[p.code] || T[`${p.code}.${params(p).forbidden}`] || p.code === 'ended.lateness');
}

/**
 * A phrase in language `l` (the page's by default), the article cited once at the end, or ''
 * for a code this client does not know.
 */
export function phraseText(p, l = lang()) {
  if (!knownPhrase(p, l)) return '';
  const T = table(l);
  const v = params(p);
  const side = (s) => T[`side.${s}`] || s || '';
  const vars = {
    ...v,
    side: side(v.side),
    winner: side(v.winner),
    other: side(v.other),
    result: T[`result.${v.result}`] || v.result || '',
    after: duration(v.after_ms, T),
  };
  let code = p.code;
  if (code === 'ended.lateness' && v.side === 'both') code = 'ended.lateness_both';
  if (code === 'ruling.draw') code = `ruling.draw.${v.forbidden === 'both' ? 'both' : 'none'}`;
  if (code.startsWith('ruling.') && code !== 'ruling.none') {
    const who = (s) => fmt(T['ruling.who'], {
      side: side(s),
      pattern: T[`pattern.${v[s]}`] || v[s] || '',
      chased: chasedList(v[`${s}_chased`], T, l),
    });
    vars.both = `${who('red')}${T['ruling.join']}${who('black')}`;
  }
  const art = v.article && v.article !== 'engine' ? fmt(T.article, { article: v.article }) : '';
  return `${fmt(T[code], vars)}${art}${T.end}`;
}

/**
 * The words for a server explanation: the phrase in the page's language, else the server's
 * text in that language (`en`/`zh`, e.g. a ruling's `explanationEn`/`explanationZh`), else
 * `fallback`.
 */
export function explainText({ phrase, en = '', zh = '', fallback = '' } = {}, l = lang()) {
  const p = phraseText(phrase, l);
  if (p) return p;
  if (l === 'zh-CN' && zh) return zh;
  if (l !== 'zh-CN' && en) return en;
  return fallback;
}

/** A stage of a board chain: 慢棋, 快棋, 超快棋 (slow, fast, armageddon), others as named. */
export function stageName(name, l = lang()) {
  if (!name) return '';
  return table(l)[`stage.${String(name).toLowerCase()}`] || name;
}
