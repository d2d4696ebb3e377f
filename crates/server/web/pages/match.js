// `/league/{id}/match/{round}/{table}`: one team match — every board side by side, live, with
// the 局分/场分, the lineups (sealed until revealed) and the score sheet (`MatchView`); for the
// match's captains and the event's arbiters, the presence lobby before the round.

import { MatchView } from '../matchview.js';
import { showNotFound } from './notfound.js';
import { t } from '../i18n.js';
import { PresenceView } from '../calls.js';

export function match(path) {
  const m = /^\/league\/(\d+)\/match\/(\d+)\/(\d+)\/?$/.exec(path);
  return m ? { id: m[1], round: Number(m[2]), table: Number(m[3]) } : null;
}

export function mount(root, { id, round, table }, { conn }) {
  const view = new MatchView(conn, id, round, table, { withLinks: true });
  // A league, round or table that does not exist: a not-found page, not an empty match.
  view.onNotFound = () => {
    view.destroy();
    showNotFound(root, t('notfound.match', { id, round, table }));
  };
  const presence = new PresenceView(conn, id, round, { table });
  root.replaceChildren(presence.el, view.el);
  return () => {
    presence.destroy();
    view.destroy();
  };
}
