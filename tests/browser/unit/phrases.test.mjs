// The server's explanations worded in one language (crates/server/web/phrases.js): every
// ruling and end code the server sends (docs/protocol.md, "Phrases") in zh-CN without Latin
// words and in English without Chinese beyond the glossed terms, the article cited once, the
// stage names, and the fall-backs for a code the client does not know.
import test from 'node:test';
import assert from 'node:assert/strict';
import { phraseText, explainText, stageName, knownPhrase } from '../../../crates/server/web/phrases.js';

const P = (code, params = {}) => ({ code, params: Object.entries(params).map(([name, value]) => ({ name, value })) });

// Every code the server sends, with the parameters it sends (crates/server/src/phrase.rs and
// the game's commands).
const ALL = [
  P('ended.checkmate', { side: 'black', winner: 'red', article: '4.1.1' }),
  P('ended.stalemate', { side: 'red', winner: 'black', article: '4.1.3' }),
  P('ended.move_limit', { article: '4.2.4' }),
  P('ended.move_limit_claim', { side: 'red', plies: '120', limit: '120', article: '4.2.4' }),
  P('ended.dead_position', { article: '4.2.1' }),
  P('ended.resign', { side: 'black', winner: 'red' }),
  P('ended.draw_agreed', { side: 'red', other: 'black' }),
  P('ended.flag', { side: 'red', winner: 'black' }),
  P('ended.flag_penalty', { side: 'red', winner: 'black' }),
  P('ended.flag_arbiter', { side: 'red', winner: 'black', reason: '迟到' }),
  P('ended.fouls', { side: 'black', article: '4.1.8' }),
  P('ended.arbiter', { result: 'RESULT_DRAW', reason: '停电' }),
  P('ended.arbiter_override', { result: 'RESULT_RED_WINS', ruling_seq: '31', reason: '是兑不是捉' }),
  P('ended.lateness', { side: 'red', after_ms: '600000', article: '21' }),
  P('ended.lateness', { side: 'both', after_ms: '630000', article: '21' }),
  P('foul.repeated_draw_offer', { side: 'red', other: 'black', article: '9.1.3' }),
  P('foul.false_move_limit_claim', { side: 'black', plies: '40', limit: '120', article: '23.3' }),
  P('foul.arbiter', { side: 'red', reason: '手机响' }),
  P('ruling.loss', { red: 'perpetual_check', black: 'idle', red_chased: '', black_chased: '', side: 'red', article: '24.1' }),
  P('ruling.loss_after_warning', { red: 'perpetual_chase', black: 'idle', red_chased: 'nc6', black_chased: '', side: 'red', article: '24.3' }),
  P('ruling.loss_engine_chase', { red: 'perpetual_chase', black: 'idle', red_chased: 'Rc6', black_chased: '', side: 'red', article: 'engine' }),
  P('ruling.draw', { red: 'perpetual_check', black: 'perpetual_check', red_chased: '', black_chased: '', forbidden: 'both', article: '24.2' }),
  P('ruling.draw', { red: 'idle', black: 'attacks_with_idle', red_chased: '', black_chased: '', forbidden: 'none', article: '24.2' }),
  P('ruling.draw_engine', { red: 'idle', black: 'idle', forbidden: 'none', article: 'engine' }),
  P('ruling.must_vary', { red: 'check_and_chase', black: 'idle', red_chased: 'nc6,rd4', black_chased: '', side: 'red', article: '24.3' }),
  P('ruling.none', { article: '24' }),
];

// Arbiters' reasons are free text (written in Chinese above): leave them out of the checks.
const strip = (s) => s.replace(/迟到|停电|是兑不是捉|手机响/g, '');
// English glosses the Chinese terms in brackets: 长将, 长捉, 长杀, 一将一捉.
const glosses = /\((长将|长捉|长杀|一将一捉)\)/g;

test('every code is worded in zh-CN without English and in English without Chinese', () => {
  for (const p of ALL) {
    assert.ok(knownPhrase(p, 'zh-CN') && knownPhrase(p, 'en'), p.code);
    const zh = strip(phraseText(p, 'zh-CN'));
    const en = strip(phraseText(p, 'en')).replace(glosses, '');
    assert.ok(zh.length > 3 && en.length > 3, p.code);
    assert.doesNotMatch(zh, /[A-Za-z]{2,}/, `${p.code}: ${zh}`);
    assert.doesNotMatch(en, /[\u4e00-\u9fff]/, `${p.code}: ${en}`);
    assert.doesNotMatch(zh + en, /\{\w+\}|undefined/, p.code);
  }
});

test('the article is cited once, in the language of the page', () => {
  const p = P('ruling.loss', { red: 'perpetual_check', black: 'idle', side: 'red', article: '24.1' });
  const zh = phraseText(p, 'zh-CN');
  const en = phraseText(p, 'en');
  assert.equal(zh.split('第24.1条').length - 1, 1, zh);
  assert.equal(en.split('art. 24.1').length - 1, 1, en);
  assert.match(zh, /^红方长将，黑方闲着：一方长将，红方判负（第24\.1条）。$/);
  assert.match(en, /^Red: perpetual check \(长将\); Black: idle moves\. One-sided perpetual check: Red loses \(art\. 24\.1\)\.$/);
  assert.doesNotMatch(phraseText(ALL.find((x) => x.code === 'ruling.loss_engine_chase'), 'en'), /art\./);
});

test('rulings name each side, its pattern and the pieces it chased', () => {
  const p = ALL.find((x) => x.code === 'ruling.must_vary');
  assert.equal(phraseText(p, 'zh-CN'), '红方一将一捉（捉c6马、d4车），黑方闲着：红方为禁止着法，必须变着，若再重复一次循环即判负（第24.3条）。');
  assert.match(phraseText(p, 'en'), /Red: alternating check and chase \(一将一捉\) \(chasing the horse on c6, the rook on d4\); Black: idle moves\. Red plays forbidden moves and must vary/);
  const mutual = ALL.find((x) => x.code === 'ruling.draw' && x.params.some((q) => q.value === 'both'));
  assert.match(phraseText(mutual, 'zh-CN'), /^红方长将，黑方长将：双方均为禁止着法，不变作和/);
});

test('results, draws by agreement, lateness and arbiters in words', () => {
  assert.equal(phraseText(P('ended.draw_agreed', { side: 'red', other: 'black' }), 'zh-CN'), '红方同意了黑方的提和，和棋。');
  assert.equal(phraseText(P('ended.draw_agreed', { side: 'red', other: 'black' }), 'en'), "Red accepted Black's draw offer: draw.");
  assert.equal(phraseText(P('ended.checkmate', { side: 'black', winner: 'red', article: '4.1.1' }), 'zh-CN'), '黑方被将死，红方胜（第4.1.1条）。');
  assert.equal(phraseText(P('ended.stalemate', { side: 'red', winner: 'black', article: '4.1.3' }), 'zh-CN'), '红方无子可走（困毙），黑方胜（第4.1.3条）。');
  assert.match(phraseText(P('ended.lateness', { side: 'both', after_ms: '630000', article: '21' }), 'zh-CN'), /10 分 30 秒后双方均未到场/);
  assert.match(phraseText(P('ended.lateness', { side: 'red', after_ms: '600000' }), 'en'), /^Red had not joined the game 10 min after/);
  assert.equal(phraseText(P('ended.arbiter', { result: 'RESULT_DRAW', reason: '停电' }), 'zh-CN'), '裁判判定结果（和棋）。理由：停电。');
});

test('an unknown code falls back to the server text in the page language, then to the sentence', () => {
  const unknown = P('ended.something_new', { side: 'red' });
  assert.equal(phraseText(unknown, 'en'), '');
  assert.equal(explainText({ phrase: unknown, en: 'E', zh: '中', fallback: 'F' }, 'zh-CN'), '中');
  assert.equal(explainText({ phrase: unknown, en: 'E', zh: '中', fallback: 'F' }, 'en'), 'E');
  assert.equal(explainText({ phrase: null, fallback: 'F' }, 'en'), 'F');
  assert.equal(explainText({}, 'en'), '');
});

test('stage names: 慢棋, 快棋, 超快棋, and an event\'s own names as they are', () => {
  assert.deepEqual(['slow', 'fast', 'armageddon'].map((s) => stageName(s, 'zh-CN')), ['慢棋', '快棋', '超快棋']);
  assert.deepEqual(['slow', 'fast', 'armageddon'].map((s) => stageName(s, 'en')), ['Slow game', 'Fast game', 'Armageddon']);
  assert.equal(stageName('加赛', 'en'), '加赛');
  assert.equal(stageName('', 'zh-CN'), '');
});

test('every end reason code has its word in both languages', async () => {
  const { LANGS } = await import('../../../crates/server/web/i18n.js');
  // GameEnded.reason codes (docs/protocol.md).
  const codes = ['checkmate', 'stalemate', 'resign', 'flag', 'draw_agreed', 'perpetual_check', 'perpetual_chase',
    'repetition_draw', 'move_limit', 'dead_position', 'fouls', 'arbiter', 'lateness'];
  for (const l of ['en', 'zh-CN']) {
    for (const c of codes) assert.ok(LANGS[l][`reason.${c}`], `${l}: reason.${c}`);
  }
  for (const c of codes) assert.doesNotMatch(LANGS['zh-CN'][`reason.${c}`], /[A-Za-z]{2,}/, c);
});

test('every text of the client has its zh-CN and its English form', async () => {
  const { LANGS } = await import('../../../crates/server/web/i18n.js');
  // The notation names are the same in both (中文, WXF, ICCS).
  const missing = Object.keys(LANGS.en).filter((k) => !(k in LANGS['zh-CN']) && !k.startsWith('notation.'));
  assert.deepEqual(missing, [], 'keys without a zh-CN text');
  assert.deepEqual(Object.keys(LANGS['zh-CN']).filter((k) => !(k in LANGS.en)), [], 'keys without an English text');
});
