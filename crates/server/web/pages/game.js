// `/game/{id}`: one game. Spectators watch (behind the broadcast delay, which is shown); the
// game's players play from it: moves by click, drag, keyboard or typed notation, draw offers
// and answers, resignation, the move-limit claim and ruling requests. The move list comes in
// pairs in Chinese, WXF or ICCS notation; rulings, fouls, pauses and the result are shown in
// words with the server's explanation, and announced to screen readers.

import { h, fill, announcer, confirmButton } from '../dom.js';
import { t, sideName, resultText, reasonText, errorText, storage } from '../i18n.js';
import { legalMoves } from '../api.js';
import { GameView } from '../gameview.js';
import { legalMap } from '../board.js';
import { moveText, movePairs, NOTATIONS } from '../notation.js';
import { otherSide } from '../model.js';
import { followBoard, takeBanner, waitingText } from '../matchday.js';
import { explainText } from '../phrases.js';
import { showNotFound } from './notfound.js';
import { CallBox, channelText } from '../calls.js';

export function match(path) {
  const m = /^\/game\/(\d+)\/?$/.exec(path);
  return m ? { id: m[1] } : null;
}

const NOTATION_KEY = 'chuhe.notation';

function savedNotation() {
  const n = storage()?.getItem(NOTATION_KEY);
  return NOTATIONS.includes(n) ? n : 'chinese';
}

/** Words for a log entry (a banner or a line of the arbiter's log). */
export function entryText(e, notation = 'chinese') {
  const side = sideName(e.side);
  const reason = e.arbiter?.reason || '';
  switch (e.kind) {
    case 'paused': return t('game.paused', { reason });
    case 'resumed': return t('game.resumed', { reason });
    case 'foul': return t('game.foul', { side, count: e.count, text: explainText({ phrase: e.phrase, en: e.text, fallback: e.text || reason }) });
    case 'clockAdjusted': {
      const s = Math.round(e.deltaMs / 1000);
      const delta = `${s >= 0 ? '+' : ''}${s} s`;
      const why = e.code === 'arbiter' ? `${t('adjust.arbiter')}: ${reason}` : t(`adjust.${e.code}`);
      return t('game.clockAdjusted', { side, delta, why });
    }
    case 'ruling': return rulingText(e.ruling || {});
    case 'rulingOverridden': return t('game.overridden', { seq: e.rulingSeq, reason });
    case 'serverRestarted': return t('game.restarted', { s: Math.round(e.downtimeMs / 1000) });
    case 'drawOffered': return t('game.drawOffered', { side });
    case 'drawDeclined': return t('game.drawDeclined', { side });
    case 'ended': {
      const why = explainText({ phrase: e.phrase, fallback: e.text || '' });
      return `${t('result.line', { result: resultText(e.result), reason: reasonText(e.code) })}${why ? ` · ${why}` : ''}`;
    }
    case 'move': return `${e.move?.ply}. ${moveText(e.move, notation)}`;
    case 'arbiterCalled':
    case 'callTaken':
    case 'callClosed':
    case 'message':
      return channelText(e);
    default: return '';
  }
}

/** A ruling in words, in the page's language, its article cited once. */
export function rulingText(r) {
  if (r.kind === 'RULING_KIND_NONE') return t('game.ruling.none');
  const text = explainText({ phrase: r.phrase, en: r.explanationEn, zh: r.explanationZh });
  if (text) return t('game.ruling.decision', { text });
  // An older server: its bilingual sentence, which cites the article itself.
  return t('game.ruling.decision', { text: r.explanation || '' });
}

export function mount(root, { id }, { conn }) {
  let notation = savedNotation();
  let flipped = null; // decided once we know who is looking
  let legalFor = null;
  let legal = null;
  let turnStartedAt = Date.now();
  let sending = false;
  const say = announcer();

  const title = h('h1', {}, t('game.title', { id }));
  const meta = h('p.meta', { 'data-testid': 'game-meta' });
  const delay = h('p.delay', { 'data-testid': 'delay' });
  const result = h('div.result', { 'data-testid': 'result', role: 'status' });
  const banners = h('ul.banners', { 'data-testid': 'banners', 'aria-live': 'polite' });
  const error = h('p.error', { 'data-testid': 'error', role: 'alert' });
  // A league game: where its board's chain stands (the page moves on to the next game by itself).
  const chain = h('div.chain', { 'data-testid': 'chain', hidden: true });
  const waiting = h('p.waiting', { 'data-testid': 'waiting', role: 'status' });
  let stopChain = null;
  const chainWhy = takeBanner(id);
  const controls = h('div.controls', { 'data-testid': 'controls' });
  const reviewBar = h('div.review', { hidden: true });
  const moves = h('div.moves', { 'data-testid': 'moves' });
  const noteSel = h('div.notation', { role: 'radiogroup', 'aria-label': t('game.notation') },
    ...NOTATIONS.map((n) => h('button', {
      type: 'button', role: 'radio', 'data-notation': n, 'aria-checked': String(n === notation),
      onclick: () => {
        notation = n;
        storage()?.setItem(NOTATION_KEY, n);
        for (const b of noteSel.querySelectorAll('button')) b.setAttribute('aria-checked', String(b.dataset.notation === n));
        renderMoves();
      },
    }, t(`notation.${n}`))));
  const typed = h('input', { type: 'text', 'aria-label': t('game.typeMove'), placeholder: t('game.typeMove'), 'data-testid': 'move-input', autocomplete: 'off' });
  const offerNext = h('input', { type: 'checkbox', 'data-testid': 'offer-with-move' });
  const typedForm = h('form.typed', {
    onsubmit: (ev) => {
      ev.preventDefault();
      const text = typed.value.trim();
      if (text) play(text).then((ok) => { if (ok) typed.value = ''; });
    },
  }, typed, h('button', { type: 'submit' }, t('game.play')));
  const flipBtn = h('button', { type: 'button', onclick: () => { flipped = !flipped; view.setFlipped(flipped); } }, t('game.flip'));
  const record = h('a', { href: `/api/v1/games/${id}/pgn?notation=chinese`, target: '_blank', rel: 'noopener' }, t('game.record'));

  // Records in the forms the Xiangqi world uses (GET /api/v1/games/{id}/record).
  const downloads = h('div.row.downloads', { 'data-testid': 'downloads' }, t('records.download'),
    ...['pgn', 'xqf', 'dhtmlxq'].flatMap((f) => [' ', h('a', { href: `/api/v1/games/${id}/record?format=${f}`, download: '', 'data-testid': `download-${f}` }, t(`records.${f}`))]));

  const view = new GameView(conn, id, {
    onUpdate: (kind, data, model) => onUpdate(kind, data, model),
    onAnnounce: (what, v) => {
      if (what === 'square') say.say(t('announce.square', { square: v.square, piece: v.piece ? `${sideName(v.side)}${v.piece}` : t('announce.empty') }));
      else if (what === 'selected') say.say(t('announce.selected', v));
    },
  });
  const model = view.model;
  // 请裁判: the player's call to the arbiter and the conversation while it is open.
  const callBox = new CallBox(conn, id, model, { mode: 'player', side: () => mySide(), onError: (e) => showError(e) });

  fill(root, h('div.gamepage', {},
    h('div.boardcol', {}, view.el, h('div.row', {}, flipBtn, record), downloads),
    h('div.side', {},
      title, meta, delay, waiting, result, chain, error, banners, controls, callBox.el, reviewBar,
      h('h2', {}, t('game.moves'), ' ', noteSel), moves,
      typedForm, say.el)));

  function mySide() {
    const me = conn.principalId;
    if (!me || !model.loaded) return null;
    if (model.info.redId === me) return 'red';
    if (model.info.blackId === me) return 'black';
    return null;
  }

  function showError(err) {
    error.textContent = err ? errorText(err) : '';
  }

  function banner(text, cls = '') {
    if (!text) return;
    banners.prepend(h(`li${cls ? `.${cls}` : ''}`, {}, text));
    while (banners.children.length > 6) banners.lastChild.remove();
  }

  async function play(moveText_) {
    const side = mySide();
    if (!side || model.finished) return false;
    sending = true;
    view.board.setMovable({ side: null });
    showError(null);
    try {
      await conn.move(id, model.moves.length + 1, moveText_, {
        offerDraw: offerNext.checked,
        thinkMs: Date.now() - turnStartedAt,
      });
      offerNext.checked = false;
      return true;
    } catch (e) {
      showError(e);
      return false;
    } finally {
      sending = false;
      refreshMovable();
    }
  }

  function command(msg) {
    showError(null);
    return conn.request(msg).catch((e) => showError(e));
  }

  async function refreshMovable() {
    const side = mySide();
    const canMove = side && !model.finished && !model.paused && model.toMove === side && view.review === null && !sending;
    if (!canMove) {
      view.board.setMovable({ side: null });
      return;
    }
    const fen = model.fen;
    if (legalFor !== fen) {
      legalFor = fen;
      legal = null;
      view.board.setMovable({ side, legal: null, onMove: play });
      try {
        const l = await legalMoves(fen);
        if (legalFor !== fen) return;
        legal = legalMap(l.moves);
      } catch {
        legal = null; // no hints; the server still decides
      }
    }
    if (model.fen === fen) view.board.setMovable({ side, legal, onMove: play });
  }

  function renderMeta() {
    const i = model.info;
    if (!model.loaded) return;
    const bits = [t('game.vs', { red: i.redName, black: i.blackName }), i.timeControl];
    if (i.event) bits.push([i.event, i.round, i.board].filter(Boolean).join(' · '));
    meta.textContent = bits.join(' · ');
    const d = i.delay || {};
    const parts = [];
    if (d.plies) parts.push(t('game.delay.plies', { n: d.plies }));
    if (d.seconds) parts.push(t('game.delay.seconds', { n: d.seconds }));
    delay.textContent = model.delayed && parts.length ? t('game.delay', { what: parts.join(', ') }) : '';
  }

  function renderResult() {
    if (!model.finished) {
      result.textContent = '';
      result.className = 'result';
      return;
    }
    fill(result,
      h('strong', {}, resultText(model.result)), ' — ', reasonText(model.endReason),
      endWhy() ? h('div.explain', { 'data-testid': 'explain' }, endWhy()) : null);
    result.className = 'result over';
  }

  function endWhy() {
    return explainText({ phrase: model.endPhrase, fallback: model.endExplanation });
  }

  function renderControls() {
    const side = mySide();
    typedForm.hidden = !side || model.finished;
    if (!side || model.finished) {
      fill(controls);
      return;
    }
    const other = otherSide(side);
    const items = [];
    if (model.drawOffer === other) {
      items.push(h('p.offer', {}, t('game.drawOffered', { side: sideName(other) })));
      items.push(h('button.primary', { type: 'button', 'data-testid': 'accept-draw', onclick: () => command({ answerDraw: { gameId: id, accept: true } }) }, t('game.acceptDraw')));
      items.push(h('button', { type: 'button', 'data-testid': 'decline-draw', onclick: () => command({ answerDraw: { gameId: id, accept: false } }) }, t('game.declineDraw')));
    } else if (model.drawOffer === side) {
      items.push(h('p.offer', {}, t('game.yourOffer')));
    } else if (model.toMove === other && model.moves.length) {
      items.push(h('button', { type: 'button', 'data-testid': 'offer-draw', onclick: () => command({ offerDraw: { gameId: id } }) }, t('game.offerDraw')));
    } else if (model.toMove === side) {
      items.push(h('label.check', {}, offerNext, ' ', t('game.offerWithMove')));
    }
    items.push(confirmButton(t('game.resign'), t('game.confirm', { what: t('game.resign') }), t('game.cancel'),
      () => command({ resign: { gameId: id } }), { 'data-testid': 'resign' }));
    items.push(confirmButton(t('game.claim'), t('game.confirm', { what: t('game.claim') }), t('game.cancel'),
      () => command({ claimMoveLimit: { gameId: id } }), { 'data-testid': 'claim', title: t('game.claimWarn') }));
    items.push(h('button', { type: 'button', 'data-testid': 'request-ruling', onclick: () => command({ requestRuling: { gameId: id } }) }, t('game.requestRuling')));
    fill(controls, items);
  }

  function renderMoves() {
    if (!model.loaded) return;
    const pairs = movePairs(model.moves, model.firstSide);
    if (!pairs.length) {
      fill(moves, h('p.none', {}, t('game.nomoves')));
      return;
    }
    const cell = (m) => (m
      ? h('td', {}, h('button.mv', {
        type: 'button', 'data-ply': m.ply, 'aria-current': view.review === m.ply ? 'true' : null,
        onclick: () => review(m.ply === model.moves.length ? null : m.ply),
      }, moveText(m, notation)))
      : h('td'));
    fill(moves, h('table', {}, h('tbody', {}, pairs.map((p) => h('tr', {}, h('th', { scope: 'row' }, `${p.no}.`), cell(p.red), cell(p.black))))));
    if (view.review === null) moves.scrollTop = moves.scrollHeight;
  }

  function review(ply) {
    view.showPly(ply);
    if (ply === null) {
      reviewBar.hidden = true;
    } else {
      fill(reviewBar, t('game.reviewing', { ply }), ' ', h('button', { type: 'button', onclick: () => review(null) }, t('game.live')));
      reviewBar.hidden = false;
    }
    renderMoves();
    refreshMovable();
  }

  let seenSnapshot = false;
  function onUpdate(kind, data, m) {
    if (kind === 'error') {
      if (data.code === 'game_not_found') {
        view.destroy();
        showNotFound(root, t('game.notfound', { id }));
      } else {
        showError(data);
      }
      return;
    }
    if (!stopChain && m.loaded && m.info?.league?.leagueId) {
      stopChain = followBoard(conn, id, m.info.league, chain);
      if (chainWhy) banner(t(chainWhy.key, chainWhy.vars), 'chain');
    }
    if (m.loaded) waiting.textContent = waitingText(m, mySide(), conn.serverNow());
    if (flipped === null && m.loaded) {
      flipped = mySide() === 'black';
      view.setFlipped(flipped);
    }
    if (kind === 'snapshot' && !seenSnapshot) {
      seenSnapshot = true;
      const warn = [...m.rulings].reverse().find((r) => r.kind === 'RULING_KIND_WARNING');
      if (warn && !m.finished) banner(entryText({ kind: 'ruling', side: sideOfWire(warn.side), ruling: warn }), 'ruling');
      if (m.paused) banner(t('game.paused', { reason: '' }), 'paused');
    }
    if (kind === 'event') {
      const e = m.log[m.log.length - 1];
      if (e && e.seq === Number(data.seq)) {
        if (e.kind === 'move') {
          turnStartedAt = Date.now();
          const words = t('announce.move', { side: sideName(e.side), move: moveText(e.move, notation) });
          say.say(e.move?.check ? `${words}, ${t('announce.check')}` : words);
        } else if (e.kind === 'ended') {
          say.say(t('announce.ended', { result: resultText(e.result), reason: reasonText(e.code) }));
        } else {
          const text = entryText(e, notation);
          banner(text, e.kind);
          if (text) say.say(text);
        }
      }
    }
    document.title = `${t('game.title', { id })} · ${m.info?.redName || ''} – ${m.info?.blackName || ''}`;
    renderMeta();
    renderResult();
    renderControls();
    callBox.render();
    renderMoves();
    refreshMovable();
  }

  // The wait before the start counts down.
  const waitTicker = setInterval(() => { if (model.loaded) waiting.textContent = waitingText(model, mySide(), conn.serverNow()); }, 1000);
  return () => {
    clearInterval(waitTicker);
    callBox.destroy();
    stopChain?.();
    view.destroy();
  };
}

function sideOfWire(s) {
  return s === 'SIDE_RED' ? 'red' : s === 'SIDE_BLACK' ? 'black' : null;
}
