// The not-found page: an unknown address (the server answers it with status 404 and this
// shell), and a game, event, match or arbiter view of something that does not exist. It says
// so in words, offers the way back, and shows no live controls.

import { h, fill } from '../dom.js';
import { t } from '../i18n.js';

/** Every path: the router tries it last. */
export function match(path) {
  return { path };
}

/** Replaces `root` with the not-found page; `what` is the sentence (an unknown address by default). */
export function showNotFound(root, what = null) {
  document.title = `${t('notfound.title')} · chuhe`;
  fill(root, h('section.notfound', { 'data-testid': 'not-found' },
    h('h1', {}, t('notfound.title')),
    what ? h('p', {}, what) : h('p', {}, t('notfound.path'), ' ', h('code.path', {}, location.pathname)),
    h('p', {}, h('a', { href: '/' }, t('notfound.home')))));
}

export function mount(root) {
  showNotFound(root);
  return () => {};
}
