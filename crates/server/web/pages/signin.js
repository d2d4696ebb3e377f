// `/signin`: sign in with a token, pasted or from a link (`/signin#token=chuhe_…`, optionally
// `&next=/game/42`: the fragment never reaches the server's logs). The token is checked with
// `GET /api/v1/me` and kept in this browser (localStorage) until "sign out".

import { h, fill } from '../dom.js';
import { t } from '../i18n.js';
import { whoAmI, saveSession, session } from '../api.js';

export function match(path) {
  return path === '/signin' || path === '/signin/' ? {} : null;
}

export function mount(root) {
  const frag = new URLSearchParams(location.hash.slice(1));
  const next = frag.get('next') || new URLSearchParams(location.search).get('next');
  const safeNext = next && next.startsWith('/') && !next.startsWith('//') ? next : null;
  const input = h('input', { type: 'password', id: 'token', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'token' });
  const msg = h('p.msg', { role: 'status', 'data-testid': 'signin-msg' });
  const who = session();
  const current = h('p', {}, who ? t('signin.current', { name: who.name, role: t(`role.${who.role}`) }) : t('signin.out'));

  async function signIn(token) {
    const tok = token.trim();
    if (!tok) {
      msg.textContent = t('signin.empty');
      return;
    }
    msg.textContent = t('signin.checking');
    try {
      const me = await whoAmI(tok);
      saveSession(tok, me);
      msg.textContent = t('signin.ok', { name: me.displayName, role: t(`role.${me.role || 'ROLE_PLAYER'}`) });
      history.replaceState(null, '', '/signin');
      location.href = safeNext || (me.role === 'ROLE_ARBITER' || me.role === 'ROLE_ORGANIZER' ? '/arbiter' : '/me');
    } catch (e) {
      msg.textContent = e.code === 'unauthenticated' ? t('signin.bad') : t('signin.failed', { message: e.message });
    }
  }

  fill(root, h('section.signin', {},
    h('h1', {}, t('signin.title')),
    current,
    h('p', {}, t('signin.help')),
    h('form', {
      onsubmit: (ev) => {
        ev.preventDefault();
        signIn(input.value);
      },
    }, h('label', { for: 'token' }, t('signin.token')), ' ', input, ' ', h('button.primary', { type: 'submit' }, t('signin.submit'))),
    msg));
  const fromLink = frag.get('token');
  if (fromLink) signIn(fromLink);
}
