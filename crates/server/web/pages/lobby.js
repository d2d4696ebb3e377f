// `/`: the live games, and the liveliest of them on a board (the one with the most moves: the
// demo's bot games rather than an idle one), updating live.

import { h, fill } from '../dom.js';
import { t } from '../i18n.js';
import { GameView } from '../gameview.js';

export function match(path) {
  return path === '/' ? {} : null;
}

/** The game to feature: an unfinished game with the most plies, or null. */
export function liveliest(games) {
  let best = null;
  for (const g of games) {
    if (g.finished) continue;
    if (!best || (g.plies || 0) > (best.plies || 0)) best = g;
  }
  return best;
}

export function mount(root, _params, { conn }) {
  const list = h('ul.games', { 'data-testid': 'game-list' });
  const featured = h('div.featured');
  const goto = h('input', { type: 'text', inputmode: 'numeric', 'aria-label': t('lobby.goto'), placeholder: t('lobby.goto'), size: 8 });
  const form = h('form.goto', {
    onsubmit: (ev) => {
      ev.preventDefault();
      const id = goto.value.trim();
      if (/^\d+$/.test(id)) location.href = `/game/${id}`;
    },
  }, goto, h('button', { type: 'submit' }, t('lobby.go')));
  fill(root,
    h('div.lobby', {},
      h('section.list', {},
        h('h1', {}, t('lobby.title')),
        list,
        h('div.row', {}, h('button', { type: 'button', onclick: () => conn.listGames() }, t('lobby.refresh')), form)),
      featured));
  let view = null;
  let shownId = null;
  const off = conn.onGameList((games) => {
    fill(list, games.length ? games.map((g) => h('li', {},
      h('a', { href: `/game/${g.gameId}`, 'data-game': g.gameId },
        h('span.gid', {}, `#${g.gameId}`), ' ',
        h('span.red', {}, g.redName || '?'), ' – ', h('span.black', {}, g.blackName || '?'),
        h('span.meta', {}, ` ${g.timeControl || ''} · ${t('lobby.plies', { n: g.plies || 0 })}`))))
      : h('li.none', {}, t('lobby.none')));
    // Feature the liveliest game; keep it while it lasts and moves (an idle one gives way to
    // one with moves, a finished one to the next).
    const shown = games.find((g) => g.gameId === shownId && !g.finished);
    const best = liveliest(games);
    if (shown && view && !view.model.finished && ((shown.plies || 0) > 0 || !(best?.plies > 0))) return;
    if (!best || best.gameId === shownId) return;
    view?.destroy();
    shownId = best.gameId;
    view = new GameView(conn, best.gameId, {});
    fill(featured,
      h('h2', {}, t('lobby.featured'), ' ', h('a', { href: `/game/${best.gameId}`, 'data-testid': 'featured-link' }, t('lobby.open'))),
      view.el);
  });
  const offState = conn.onState((s) => {
    if (s === 'open') conn.listGames();
  });
  const timer = setInterval(() => conn.listGames(), 10000);
  return () => {
    off();
    offState();
    clearInterval(timer);
    view?.destroy();
  };
}
