// `/league/{id}/round/{n}`: every match of a round, each a live `MatchView` (its score, its
// lineups and its boards as small live boards), with the round's time and links to the rounds
// before and after it; for captains (their matches) and the event's arbiters, the presence lobby
// of the round.

import { h, fill } from '../dom.js';
import { t, lang, errorText } from '../i18n.js';
import { http } from '../api.js';
import { MatchView } from '../matchview.js';
import { leagueApi, leagueUrl } from '../league.js';
import { matchdayUrl } from '../matchday.js';
import { PresenceView } from '../calls.js';

export function match(path) {
  const m = /^\/league\/(\d+)\/round\/(\d+)\/?$/.exec(path);
  return m ? { id: m[1], round: Number(m[2]) } : null;
}

export function mount(root, { id, round }, { conn }) {
  const title = h('h1', { 'data-testid': 'round-title' }, t('md.round.title', { round }));
  const info = h('p.roundinfo', { 'data-testid': 'round-info' });
  const nav = h('p.row.links', { 'data-testid': 'round-nav' });
  const list = h('div.roundmatches', { 'data-testid': 'round-matches' });
  const error = h('p.error', { role: 'alert', 'data-testid': 'error' });
  const presence = new PresenceView(conn, id, round);
  fill(root, h('section.roundpage', {}, title, info, nav, error, presence.el, list));
  const views = [];
  (async () => {
    try {
      const o = await http(leagueApi.overview(id));
      const r = (o.rounds || []).find((x) => x.round === round);
      fill(title, h('a', { href: leagueUrl.event(id) }, o.name), ' · ', t('md.round.title', { round }));
      const last = (o.rounds || []).length;
      fill(nav,
        round > 1 ? h('a', { href: matchdayUrl.round(id, round - 1) }, `← ${t('md.round.title', { round: round - 1 })}`) : null,
        h('a', { href: leagueUrl.event(id) }, t('match.event')),
        round < last ? h('a', { href: matchdayUrl.round(id, round + 1) }, `${t('md.round.title', { round: round + 1 })} →`) : null);
      if (!r) {
        error.textContent = t('md.round.none', { round });
        return;
      }
      info.textContent = t('md.round.info', {
        start: new Date(r.startsAt).toLocaleString(lang()),
        deadline: new Date(r.lineupDeadline).toLocaleString(lang()),
      }) + (r.completed ? ` · ${t('md.round.completed')}` : '');
      for (const tb of r.tables || []) {
        const v = new MatchView(conn, id, round, tb.table, { withLinks: false });
        views.push(v);
        list.append(h('div.roundmatch', { 'data-testid': `round-match-${tb.table}` }, v.el,
          h('p', {}, h('a', { href: leagueUrl.match(id, round, tb.table) }, t('md.round.openMatch')))));
      }
      if (!(r.tables || []).length) list.append(h('p.none', {}, t('md.round.noMatches')));
    } catch (e) {
      error.textContent = errorText(e);
    }
  })();
  return () => {
    presence.destroy();
    for (const v of views) v.destroy();
  };
}
