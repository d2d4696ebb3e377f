// `/league/{id}`: an event — the standings with the criterion that decided each rank, the
// crosstable, and the fixtures round by round with results, each a link to its match page and
// score sheet (the API's printable HTML and CSV); the printouts of the standings, the players'
// board tables (台次成绩) and the Elo list. It reads the league again whenever the
// league's public stream reports something (a result, a round paired), so it stays live.

import { h, fill } from '../dom.js';
import { t, lang, errorText } from '../i18n.js';
import { http, session } from '../api.js';
import { showNotFound } from './notfound.js';
import { stageName } from '../phrases.js';
import { leagueApi, leagueUrl, crosstable, matchState, pointsText, printLang, captainTeam, soon } from '../league.js';

export function match(path) {
  const m = /^\/league\/(\d+)\/?$/.exec(path);
  return m ? { id: m[1] } : null;
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString(lang(), { dateStyle: 'medium', timeStyle: 'short' }) : '';
}

export function criterionText(code) {
  return code ? t(`crit.${code}`) : '—';
}

function standingsTable(st) {
  if (!st.rows?.length) return h('p', {}, t('event.noStandings'));
  return h('table.standings', { 'data-testid': 'standings' },
    h('caption', {}, t('event.criteria', { list: (st.criteria || []).map(criterionText).join(' › ') })),
    h('thead', {}, h('tr', {},
      ...['rank', 'team', 'played', 'wdl', 'mp', 'gp', 'decidedBy'].map((k) => h('th', { scope: 'col' }, t(`event.col.${k}`))))),
    h('tbody', {}, st.rows.map((r) => h('tr', { 'data-team': String(r.team), 'data-rank': String(r.rank) },
      h('td.num', {}, String(r.rank)),
      h('th', { scope: 'row' }, r.name, r.withdrawn ? h('span.note', {}, ` (${t(r.expelled ? 'event.expelled' : 'event.withdrawn')})`) : null),
      h('td.num', {}, String(r.played)),
      h('td.num', {}, `${r.won}-${r.drawn}-${r.lost}`),
      h('td.num.mp', {}, pointsText(r.matchPoints)),
      h('td.num.gp', {}, pointsText(r.gamePoints)),
      h('td.decided', { 'data-testid': `decided-${r.rank}` }, criterionText(r.decidedBy))))));
}

function crosstableEl(overview, id) {
  const teams = overview.teams || [];
  const rows = crosstable(overview);
  return h('table.crosstable', { 'data-testid': 'crosstable' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), ...teams.map((tm, j) => h('th', { scope: 'col', title: tm.name }, String(j + 1))))),
    h('tbody', {}, teams.map((tm, i) => h('tr', {},
      h('th', { scope: 'row' }, `${i + 1}. ${tm.name}`),
      ...teams.map((_, j) => (i === j
        ? h('td.self', {}, '')
        : h('td', {}, rows[i][j].map((c) => h('a', {
          href: leagueUrl.match(id, c.round, c.table),
          class: c.finished ? 'done' : 'live',
          title: t('match.roundTable', { round: c.round, table: c.table }),
        }, `${pointsText(c.points)}:${pointsText(c.against)}`)))))))));
}

function fixturesEl(overview, id) {
  const pl = printLang(lang());
  return h('div.fixtures', { 'data-testid': 'fixtures' }, (overview.rounds || []).map((r) => h('section.round', { 'data-round': String(r.round) },
    h('h3', {}, h('a', { href: `/league/${id}/round/${r.round}`, 'data-testid': `round-link-${r.round}` }, t('event.round', { n: r.round })), ' ',
      h('span.meta', {}, `${when(r.startsAt)} · ${t('event.deadline', { at: when(r.lineupDeadline) })}${r.completed ? ` · ${t('event.completed')}` : ''}`)),
    h('div.scroll', {}, h('table.fixtures', {}, h('tbody', {}, (r.tables || []).map((m) => {
      const state = matchState(m);
      const gp = m.gamePoints || ['0', '0'];
      const mp = m.matchPoints;
      return h('tr', { 'data-table': String(m.table), 'data-state': state },
        h('td.num', {}, String(m.table)),
        h('td.home', {}, m.first.name),
        h('td.score', {}, state === 'upcoming' || state === 'revealed' ? '–' : `${pointsText(gp[0])} : ${pointsText(gp[1])}`,
          mp ? h('span.mp', {}, ` (${pointsText(mp[0])}:${pointsText(mp[1])})`) : null),
        h('td.away', {}, m.second.name),
        h('td.state', {}, h('span', { class: `badge ${state}` }, t(`match.badge.${state}`))),
        h('td.links', {},
          h('a', { href: leagueUrl.match(id, r.round, m.table), 'data-testid': `match-link-${r.round}-${m.table}` }, t('event.openMatch')), ' ',
          h('a', { href: leagueApi.sheet(id, r.round, m.table, 'html', pl), target: '_blank', rel: 'noopener' }, t('event.sheet')), ' ',
          h('a', { href: leagueApi.sheet(id, r.round, m.table, 'csv', pl) }, 'CSV')));
    })))),
    (r.byes || []).length ? h('p.meta', {}, t('event.byes', { teams: r.byes.map((b) => overview.teams[b]?.name || b).join(', ') })) : null)));
}

export function mount(root, { id }, { conn }) {
  const head = h('div.eventhead');
  const standings = h('section', {}, h('h2', {}, t('event.standings')), h('p', {}, t('event.loading')));
  const cross = h('section', {});
  const fixtures = h('section', {});
  const error = h('p.error', { 'data-testid': 'error', role: 'alert' });
  fill(root, h('div.eventpage', {}, head, error, standings, cross, fixtures));
  let stop = null;
  let pending = null;
  let again = false;
  let gone = false;

  async function load() {
    if (pending) {
      again = true;
      return;
    }
    pending = (async () => {
      try {
        const overview = await http(leagueApi.overview(id));
        let st = null;
        try {
          st = await http(leagueApi.standings(id));
        } catch (e) {
          st = { error: e };
        }
        if (gone) return;
        if (!stop) stop = conn.followLeague(id, overview.publicSeq || 0, soon(load));
        render(overview, st);
        error.textContent = '';
      } catch (e) {
        if (e.code === 'not_found' && !stop) {
          gone = true;
          showNotFound(root, t('notfound.league', { id }));
          return;
        }
        error.textContent = errorText(e);
      } finally {
        pending = null;
        if (again && !gone) {
          again = false;
          load();
        }
      }
    })();
  }

  function render(o, st) {
    const pl = printLang(lang());
    const me = session();
    const team = captainTeam(o, me?.id);
    document.title = `${o.name} · chuhe`;
    fill(head,
      h('h1', { 'data-testid': 'event-name' }, o.name),
      h('p.meta', {}, [
        t(`event.system.${o.system}`),
        t('event.boards', { n: o.boards }),
        (o.chain || []).length ? h('span', {}, (o.chain || []).flatMap((s, i) => [i ? ' → ' : '', `${stageName(s.name)} `, h('span.tc', {}, s.timeControl)])) : null,
        o.published ? null : t('event.unpublished'),
      ].filter(Boolean).flatMap((x, i) => (i ? [' · ', x] : [x]))),
      h('div.row.links', {},
        h('a', { href: leagueApi.standings(id, 'html', pl), target: '_blank', rel: 'noopener', 'data-testid': 'standings-html' }, t('event.printStandings')),
        h('a', { href: leagueApi.standings(id, 'csv', pl) }, t('event.csvStandings')),
        h('a', { href: leagueApi.boards(id, 'html', pl), target: '_blank', rel: 'noopener', 'data-testid': 'boards-html' }, t('event.boardTables')),
        h('a', { href: leagueApi.elo(id, 'html', pl), target: '_blank', rel: 'noopener', 'data-testid': 'elo-html' }, t('event.elo')),
        team >= 0 ? h('a', { href: leagueUrl.lineup(id), 'data-testid': 'lineup-link' }, t('event.myLineup', { team: o.teams[team].name })) : null));
    const body = st?.error
      ? h('p', {}, st.error.code === 'no_standings' ? t('event.knockout') : errorText(st.error))
      : standingsTable(st);
    fill(standings, h('h2', {}, t('event.standings'), ' ', h('span.meta', {}, t('event.after', { n: st?.completedRounds ?? 0 }))), h('div.scroll', {}, body));
    fill(cross, h('h2', {}, t('event.crosstable')), h('div.scroll', {}, crosstableEl(o, id)));
    fill(fixtures, h('h2', {}, t('event.fixtures')), fixturesEl(o, id));
  }

  load();
  return () => {
    gone = true;
    stop?.();
  };
}
