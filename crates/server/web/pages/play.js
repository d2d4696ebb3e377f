// `/play`: casual games. A signed-in player offers a game — a time control (presets, or any
// text the server's clocks accept: increments, move-count periods, 读秒) and a colour or
// random — and is taken to the challenge's page with its link to share; the open challenges
// of others are listed, each with a button to accept it (the game opens for both).

import { h, fill } from '../dom.js';
import { t, errorText } from '../i18n.js';
import { session } from '../api.js';
import { PRESETS, listChallenges, createChallenge, acceptChallenge, colourText, colourLine, acceptorColour } from '../challenges.js';

export function match(path) {
  return /^\/play\/?$/.test(path) ? {} : null;
}

export function mount(root) {
  const me = session();
  const isPlayer = me && me.role === 'ROLE_PLAYER';
  const error = h('p.error', { role: 'alert', 'data-testid': 'challenge-error' });
  const tc = h('input', { type: 'text', value: '15m+10s', 'data-testid': 'tc', 'aria-label': t('challenge.tc'), autocomplete: 'off', spellcheck: 'false' });
  const presets = h('div.presets', { role: 'group', 'aria-label': t('challenge.presets') },
    PRESETS.map((p) => h('button', { type: 'button', 'data-tc': p, onclick: () => { tc.value = p; tc.focus(); } }, p)));
  let colour = 'random';
  const colours = h('div.colours', { role: 'radiogroup', 'aria-label': t('challenge.colour') },
    ['red', 'random', 'black'].map((c) => h('label', {},
      h('input', { type: 'radio', name: 'colour', value: c, checked: c === colour ? true : null, 'data-testid': `colour-${c}`, onchange: () => { colour = c; } }),
      ' ', colourText(c))));
  const create = h('button.primary', { type: 'submit', 'data-testid': 'create-challenge' }, t('challenge.create'));
  const form = h('form.challengeform', {
    onsubmit: async (ev) => {
      ev.preventDefault();
      error.textContent = '';
      create.disabled = true;
      try {
        const c = await createChallenge(tc.value.trim(), colour);
        location.assign(`/challenge/${c.id}`);
      } catch (e) {
        error.textContent = e.code === 'invalid_argument' ? t('challenge.badTc', { message: e.message }) : challengeError(e);
        create.disabled = false;
      }
    },
  },
  h('label.block', {}, t('challenge.tc'), h('br'), tc),
  h('p.help', {}, t('challenge.tcHelp')),
  presets,
  h('fieldset', {}, h('legend', {}, t('challenge.colour')), colours),
  h('div.row', {}, create));

  const list = h('ul.challenges', { 'data-testid': 'open-challenges' });
  const newOne = isPlayer
    ? h('section', {}, h('h2', {}, t('challenge.new')), form)
    : h('section', {}, h('h2', {}, t('challenge.new')),
      h('p', { 'data-testid': 'play-signin' }, me ? t('challenge.playersOnly') : t('challenge.needSignin'), ' ',
        me ? null : h('a', { href: `/signin#next=${encodeURIComponent('/play')}` }, t('nav.signin'))));
  document.title = `${t('challenge.title')} · chuhe`;
  fill(root, h('div.playpage', {},
    h('h1', {}, t('challenge.title')), error, newOne,
    h('section', {}, h('h2', {}, t('challenge.open')), list)));

  async function accept(c, btn) {
    btn.disabled = true;
    error.textContent = '';
    try {
      const done = await acceptChallenge(c.id);
      location.assign(`/game/${done.gameId}`);
    } catch (e) {
      error.textContent = challengeError(e);
      btn.disabled = false;
      refresh();
    }
  }

  let gone = false;
  async function refresh() {
    try {
      const { challenges } = await listChallenges();
      if (gone) return;
      fill(list, challenges.length ? challenges.map((c) => {
        const mine = me && c.creatorId === me.id;
        const btn = h('button', { type: 'button', 'data-testid': `accept-${c.id}` }, t('challenge.accept'));
        btn.addEventListener('click', () => accept(c, btn));
        return h('li', { 'data-challenge': c.id },
          h('a', { href: `/challenge/${c.id}` }, c.creatorName), ' · ', h('span.tc', {}, c.timeControl), ' · ',
          h('span.meta', {}, colourLine('challenge.youPlay', acceptorColour(c.colour))), ' ',
          mine ? h('span.meta', {}, t('challenge.yours')) : (isPlayer ? btn : null));
      }) : h('li.none', {}, t('challenge.none')));
    } catch (e) {
      if (!gone) error.textContent = errorText(e);
    }
  }
  refresh();
  const timer = setInterval(refresh, 5000);
  return () => {
    gone = true;
    clearInterval(timer);
  };
}

/** A challenge refusal in words. */
export function challengeError(e) {
  const key = `challenge.error.${e?.code}`;
  const s = t(key);
  return s === key ? errorText(e) : s;
}
