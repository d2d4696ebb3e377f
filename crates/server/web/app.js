// The browser client's entry: the header (navigation, sign-in state, language) and a router
// that mounts the page module matching the path. Pages are `{ match(path) → params | null,
// mount(root, params, ctx) → unmount }`; a new page (a team match, a captain's lineup) is a
// module in pages/ added to PAGES here and its path to `PAGES` in crates/server/src/web.rs.

import { h, fill } from './dom.js';
import { t, lang, setLang } from './i18n.js';
import { Connection, session, clearSession } from './api.js';
import * as lobby from './pages/lobby.js';
import * as game from './pages/game.js';
import * as signin from './pages/signin.js';
import * as arbiter from './pages/arbiter.js';
import * as leagueMatch from './pages/match.js';
import * as leagueEvent from './pages/event.js';
import * as lineup from './pages/lineup.js';
import * as me from './pages/me.js';
import * as leagueRound from './pages/round.js';
import * as eventConsole from './pages/console.js';
import * as organize from './pages/organize.js';
import * as notfound from './pages/notfound.js';
import * as play from './pages/play.js';
import * as challenge from './pages/challenge.js';

const PAGES = [game, arbiter, signin, leagueMatch, lineup, leagueEvent, lobby, me, leagueRound, eventConsole, organize, play, challenge];

function header(conn) {
  const who = session();
  const state = h('span.conn', { 'data-testid': 'conn-state', role: 'status' });
  conn.onState((s, c) => {
    if (s === 'open' && state.dataset.state === 'badtoken') return; // keep the explanation
    state.dataset.state = s;
    state.textContent = s === 'goodbye' ? t('conn.goodbye', { message: c.stateDetail?.message || '' }) : t(`conn.${s}`);
  });
  const isArbiter = who && (who.role === 'ROLE_ARBITER' || who.role === 'ROLE_ORGANIZER');
  const langBtn = h('button.link', {
    type: 'button', 'aria-label': t('nav.lang.label'), 'data-testid': 'lang',
    onclick: () => {
      setLang(lang() === 'en' ? 'zh-CN' : 'en');
      location.reload();
    },
  }, t('nav.lang'));
  const signBit = who
    ? h('span.who', {}, h('span', { 'data-testid': 'who' }, who.name || '?'), ' ',
      h('button.link', { type: 'button', onclick: () => { clearSession(); location.reload(); } }, t('nav.signout')))
    : h('a', { href: '/signin' }, t('nav.signin'));
  return h('nav.top', { 'aria-label': 'chuhe' },
    h('a.brand', { href: '/' }, t('app.title')),
    h('a', { href: '/' }, t('nav.games')),
    who ? h('a', { href: '/me', 'data-testid': 'nav-me' }, t('md.nav.me')) : null,
    h('a', { href: '/play', 'data-testid': 'nav-play' }, t('nav.play')),
    isArbiter ? h('a', { href: '/arbiter' }, t('nav.arbiter')) : null,
    who?.role === 'ROLE_ORGANIZER' ? h('a', { href: '/organize', 'data-testid': 'nav-organize' }, t('md.nav.organize')) : null,
    h('span.spacer'),
    state, signBit, langBtn);
}

function noticeBox(conn) {
  const box = h('div.notices', { 'data-testid': 'notices', 'aria-live': 'assertive' });
  conn.onLeagueMessage((m) => {
    const to = m.wholeEvent ? t('notice.toEvent') : t('notice.toCaptains', { team: m.teamName || '' });
    const item = h('p.notice', { 'data-testid': 'notice', role: 'alert' },
      h('strong', {}, t('notice.from', { who: m.fromName || `#${m.fromId}`, to })), ' ', m.text, ' ',
      h('button.link', { type: 'button', 'data-testid': 'notice-close', onclick: () => item.remove() }, t('notice.dismiss')));
    box.prepend(item);
  });
  return box;
}

function start() {
  document.documentElement.lang = lang();
  const skip = document.querySelector('a.skip');
  if (skip) skip.textContent = t('nav.skip');
  const conn = new Connection();
  // The tests (and curious users) reach the connection from the console.
  globalThis.chuhe = { conn };
  fill(document.getElementById('top'), header(conn));
  // An arbiter's message to this captain or to everyone of an event, on whatever page is open.
  const notices = noticeBox(conn);
  document.getElementById('top').append(notices);
  const root = document.getElementById('main');
  const path = location.pathname;
  for (const page of PAGES) {
    const params = page.match(path);
    if (params) {
      root.replaceChildren();
      page.mount(root, params, { conn });
      return;
    }
  }
  notfound.mount(root);
}

start();
