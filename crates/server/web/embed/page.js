// The embeddable live board (`/embed/game/{id}`, `/embed/league/{id}/match/{round}/{table}`):
// made for an <iframe> on another site. No sign-in (the connection carries no token, so the
// server applies the event's broadcast delay, as for any spectator), no controls but review
// (back, forward, live), sized by the iframe, zh/en by `?lang=zh|en`.

import { h, fill } from '/assets/dom.js';
import { t, setLang, lang, resultText } from '/assets/i18n.js';
import { Connection } from '/assets/api.js';
import { GameView } from '/assets/gameview.js';
import { MatchView } from '/assets/matchview.js';

const params = new URLSearchParams(location.search);
const want = (params.get('lang') || '').toLowerCase();
if (want.startsWith('zh')) setLang('zh-CN');
else if (want.startsWith('en')) setLang('en');
document.documentElement.lang = lang();

const root = document.getElementById('embed');
const conn = new Connection({ token: null });
globalThis.chuhe = { conn };

function gameEmbed(id) {
  const view = new GameView(conn, id, { compact: false });
  const where = h('span', { 'data-testid': 'embed-ply', role: 'status' });
  const back = h('button', { type: 'button', 'aria-label': '◀', onclick: () => step(-1) }, '◀');
  const fwd = h('button', { type: 'button', 'aria-label': '▶', onclick: () => step(1) }, '▶');
  const live = h('button', { type: 'button', onclick: () => show(null) }, t('game.live'));
  const open = h('a', { href: `/game/${id}`, target: '_blank', rel: 'noopener' }, t('embed.open'));
  const result = h('span', { 'data-testid': 'embed-result' });
  function moves() {
    return view.model?.moves?.length || 0;
  }
  function show(ply) {
    view.showPly(ply === null || ply >= moves() ? null : Math.max(0, ply));
    render();
  }
  function step(d) {
    const cur = view.review === null ? moves() : view.review;
    show(cur + d);
  }
  function render() {
    const n = moves();
    where.textContent = view.review === null ? `${n}` : `${view.review} / ${n}`;
    where.dataset.moves = String(n);
    live.disabled = view.review === null;
    const m = view.model;
    result.textContent = m?.finished ? resultText(m.result) : '';
  }
  view.onUpdate = () => render();
  fill(root, h('div.embedbody', {}, view.el), h('div.embedbar', {}, back, where, fwd, live, result, open));
  render();
}

function matchEmbed(id, round, table) {
  const view = new MatchView(conn, id, round, table, { withLinks: false });
  fill(root, view.el);
}

const path = location.pathname;
let m;
if ((m = /^\/embed\/game\/(\d+)\/?$/.exec(path))) gameEmbed(m[1]);
else if ((m = /^\/embed\/league\/(\d+)\/match\/(\d+)\/(\d+)\/?$/.exec(path))) matchEmbed(m[1], Number(m[2]), Number(m[3]));
else fill(root, h('p', {}, '404'));
