// `/challenge/{id}`: one challenge, the page its link opens. Its creator sees the link to
// share (with a copy button), can withdraw it, and is taken to the game as soon as someone
// accepts (the page asks the server every 2 s); another signed-in player accepts it and is
// taken to the game; anybody else is asked to sign in. A challenge that is gone says so.

import { h, fill } from '../dom.js';
import { t } from '../i18n.js';
import { session } from '../api.js';
import { getChallenge, acceptChallenge, cancelChallenge, colourLine, acceptorColour } from '../challenges.js';
import { challengeError } from './play.js';
import { showNotFound } from './notfound.js';

export function match(path) {
  const m = /^\/challenge\/(\d+)\/?$/.exec(path);
  return m ? { id: m[1] } : null;
}

export function mount(root, { id }) {
  const me = session();
  const error = h('p.error', { role: 'alert', 'data-testid': 'challenge-error' });
  const body = h('div');
  fill(root, h('section.challengepage', {}, h('h1', {}, t('challenge.titleOne', { id })), error, body));
  document.title = `${t('challenge.titleOne', { id })} · chuhe`;
  let gone = false;
  let timer = null;
  let shown = false;

  function go(gameId) {
    gone = true;
    location.assign(`/game/${gameId}`);
  }

  function render(c) {
    if (c.gameId) {
      if (me && (me.id === c.creatorId || me.name === c.opponentName)) {
        go(c.gameId);
        return;
      }
      fill(body, h('p', { 'data-testid': 'challenge-taken' }, t('challenge.taken', { name: c.opponentName || '?' }), ' ',
        h('a', { href: `/game/${c.gameId}` }, t('challenge.watch'))));
      return;
    }
    if (shown) return;
    shown = true;
    const mine = me && me.id === c.creatorId;
    const facts = h('p', { 'data-testid': 'challenge-facts' },
      t('challenge.by', { name: c.creatorName }), ' · ', h('span.tc', {}, c.timeControl), ' · ',
      colourLine('challenge.creatorPlays', c.colour));
    if (mine) {
      const link = `${location.origin}/challenge/${c.id}`;
      const field = h('input', { type: 'text', readonly: true, value: link, 'data-testid': 'share-link', 'aria-label': t('challenge.share') });
      const copied = h('span.meta', { role: 'status' });
      fill(body, facts,
        h('p.waiting', { 'data-testid': 'challenge-waiting' }, t('challenge.waiting')),
        h('label.block', {}, t('challenge.share'), h('br'), field),
        h('div.row', {},
          h('button', {
            type: 'button',
            onclick: async () => {
              field.select();
              try {
                await navigator.clipboard.writeText(link);
                copied.textContent = t('challenge.copied');
              } catch {
                copied.textContent = t('challenge.copyByHand');
              }
            },
          }, t('challenge.copy')), copied,
          h('button', {
            type: 'button', 'data-testid': 'cancel-challenge',
            onclick: async () => {
              try {
                await cancelChallenge(c.id);
                gone = true;
                location.assign('/play');
              } catch (e) {
                error.textContent = challengeError(e);
              }
            },
          }, t('challenge.cancel'))));
      return;
    }
    if (!me || me.role !== 'ROLE_PLAYER') {
      fill(body, facts, h('p', { 'data-testid': 'play-signin' }, me ? t('challenge.playersOnly') : t('challenge.needSignin'), ' ',
        me ? null : h('a', { href: `/signin#next=${encodeURIComponent(location.pathname)}` }, t('nav.signin'))));
      return;
    }
    const btn = h('button.primary', { type: 'button', 'data-testid': 'accept-challenge' },
      c.colour === 'random' ? t('challenge.accept') : colourLine('challenge.acceptAs', acceptorColour(c.colour)));
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      error.textContent = '';
      try {
        const done = await acceptChallenge(c.id);
        go(done.gameId);
      } catch (e) {
        error.textContent = challengeError(e);
        btn.disabled = false;
      }
    });
    fill(body, facts, h('div.row', {}, btn));
  }

  async function poll() {
    try {
      const c = await getChallenge(id);
      if (!gone) render(c);
    } catch (e) {
      if (gone) return;
      if (e.code === 'challenge_not_found') {
        gone = true;
        showNotFound(root, t('challenge.gone', { id }));
        root.querySelector('[data-testid=not-found]')?.append(h('p', {}, h('a', { href: '/play' }, t('challenge.newLink'))));
        return;
      }
      error.textContent = challengeError(e);
    }
    if (!gone) timer = setTimeout(poll, 2000);
  }
  poll();
  return () => {
    gone = true;
    clearTimeout(timer);
  };
}
