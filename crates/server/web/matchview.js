// One team match on screen: the teams with the live 局分 and the 场分, the lineups (revealed, or
// shown as sealed), and every board side by side as a small live board (a `GameView` with
// `compact: true`), each a link to its game page. The match itself is read from the league API
// and read again whenever the league's public stream (followed on the page's one websocket,
// resumed by seq after a drop) reports something; the boards follow their games live on the
// same connection. The match page shows it whole; the lobby shows the live one.

import { h, fill } from './dom.js';
import { t, lang, resultText, errorText } from './i18n.js';
import { http, session } from './api.js';
import { GameView } from './gameview.js';
import { stageName } from './phrases.js';
import { leagueApi, leagueUrl, currentGame, matchState, pointsText, printLang, soon, boardPlayerId } from './league.js';

const OUTCOME_RESULT = { first: 'first', second: 'second', draw: 'RESULT_DRAW', both_lose: 'RESULT_BOTH_LOSE' };

export class MatchView {
  /** `withLinks`: the score-sheet and event links under the score (the match page). */
  constructor(conn, leagueId, round, table, { withLinks = true, onLoad = null } = {}) {
    this.conn = conn;
    this.leagueId = String(leagueId);
    this.round = Number(round);
    this.tableNo = Number(table);
    this.onLoad = onLoad;
    this.views = new Map(); // board number → { gameId, view }
    this.data = null;
    this.title = h('h1', { 'data-testid': 'match-title' });
    this.score = h('div.matchscore', { 'data-testid': 'match-score', role: 'status', 'aria-live': 'polite' });
    this.state = h('p.matchstate', { 'data-testid': 'match-state' });
    this.lineups = h('table.lineups', { 'data-testid': 'lineups' });
    this.grid = h('div.boards', { 'data-testid': 'boards' });
    this.error = h('p.error', { 'data-testid': 'error', role: 'alert' });
    this.links = withLinks ? h('div.row.links', { 'data-testid': 'match-links' }) : null;
    this.el = h('section.matchview', { 'data-league': this.leagueId, 'data-round': String(this.round), 'data-table': String(this.tableNo) },
      this.title, this.score, this.state, this.links, this.error,
      h('div.matchbody', {}, this.grid, h('div.lineupcol', {}, h('h2', {}, t('match.lineups')), this.lineups)));
    this.pending = null;
    this.stopped = false;
    this.load();
  }

  /** Reads the match again (at most one request at a time; one more if asked meanwhile). */
  load() {
    if (this.stopped) return;
    if (this.pending) {
      this.again = true;
      return;
    }
    this.pending = (async () => {
      try {
        const [overview, table] = await Promise.all([
          this.overview ? Promise.resolve(this.overview) : http(leagueApi.overview(this.leagueId)),
          http(leagueApi.table(this.leagueId, this.round, this.tableNo)),
        ]);
        if (!this.overview) {
          this.overview = overview;
          // Follow the league from what the overview showed: later entries make it read again.
          this.stopFollow = this.conn.followLeague(this.leagueId, overview.publicSeq || 0, soon(() => this.load()));
        }
        this.error.textContent = '';
        this.render(table);
      } catch (e) {
        if (e.code === 'not_found' && !this.overview && this.onNotFound) {
          this.stopped = true;
          this.onNotFound(e);
          return;
        }
        this.error.textContent = errorText(e);
      } finally {
        this.pending = null;
        if (this.again) {
          this.again = false;
          this.load();
        }
      }
    })();
  }

  teamName(i) {
    const side = i === 0 ? this.data.first : this.data.second;
    return side?.name || '?';
  }

  render(table) {
    if (this.stopped) return;
    this.data = table;
    const o = this.overview;
    fill(this.title,
      h('a', { href: leagueUrl.event(this.leagueId) }, o?.name || ''), ' · ',
      t('match.roundTable', { round: table.round, table: table.table }));
    const gp = table.gamePoints || ['0', '0'];
    const mp = table.matchPoints;
    fill(this.score,
      h('span.team.first', { 'data-testid': 'team-first' }, this.teamName(0)),
      h('span.points', {},
        h('span.gp', { 'data-testid': 'game-points', title: t('match.gamePoints') }, `${pointsText(gp[0])} : ${pointsText(gp[1])}`),
        h('span.gplabel', {}, t('match.gamePoints')),
        mp ? h('span.mp', { 'data-testid': 'match-points', title: t('match.matchPoints') }, `${t('match.matchPoints')} ${pointsText(mp[0])} : ${pointsText(mp[1])}`) : null),
      h('span.team.second', { 'data-testid': 'team-second' }, this.teamName(1)));
    const state = matchState(table);
    this.el.dataset.state = state;
    this.state.textContent = table.forfeit
      ? t('match.forfeit')
      : t(`match.state.${state}`, { start: new Date(table.startsAt).toLocaleString(lang()), deadline: new Date(table.lineupDeadline).toLocaleString(lang()) });
    if (this.links) {
      const pl = printLang(lang());
      fill(this.links,
        h('a', { href: leagueApi.sheet(this.leagueId, table.round, table.table, 'html', pl), target: '_blank', rel: 'noopener', 'data-testid': 'sheet-html' }, t('match.sheet')),
        h('a', { href: leagueApi.sheet(this.leagueId, table.round, table.table, 'csv', pl), 'data-testid': 'sheet-csv' }, t('match.sheetCsv')),
        h('a', { href: `/api/v1/leagues/${this.leagueId}/records?format=pgn&round=${table.round}&table=${table.table}`, download: '', 'data-testid': 'download-match-pgn' }, t('records.matchPgn')),
        h('a', { href: leagueUrl.event(this.leagueId) }, t('match.event')));
    }
    this.renderLineups(table);
    this.renderBoards(table);
    this.onLoad?.(table);
  }

  renderLineups(table) {
    const boards = (table.boards || []).length || this.overview?.boards || 0;
    const cell = (side, i) => {
      const l = table.lineups?.[side] || {};
      if (!l.revealed) {
        if (i > 0) return null;
        const own = l.submitted === undefined ? '' : ` (${t(l.submitted ? 'lineup.ownSubmitted' : 'lineup.ownMissing')})`;
        return h('td.sealed', { rowspan: String(boards), 'data-testid': `sealed-${side}` }, `🔒 ${t('match.sealed')}${own}`);
      }
      if (l.how === 'forfeit') return i > 0 ? null : h('td.forfeit', { rowspan: String(boards) }, t('match.lineupForfeit'));
      const name = l.players?.[i] || '—';
      return h('td', { 'data-testid': `lineup-${side}-${i + 1}` }, name);
    };
    const how = (side) => {
      const l = table.lineups?.[side] || {};
      return l.how === 'registered_order' ? h('div.note', {}, t('match.registeredOrder')) : null;
    };
    fill(this.lineups,
      h('thead', {}, h('tr', {}, h('th', {}, t('match.board')), h('th', {}, this.teamName(0), how(0)), h('th', {}, this.teamName(1), how(1)))),
      h('tbody', {}, Array.from({ length: boards }, (_, i) => h('tr', {}, h('th', {}, String(i + 1)), cell(0, i), cell(1, i)))));
  }

  /** A game's result in words, from the first team's side ('' while it is played). */
  gameResultText(g) {
    if (!g?.result) return '';
    const r = OUTCOME_RESULT[g.result.outcome];
    if (r === 'first' || r === 'second') return t('match.gameWon', { team: this.teamName(r === 'first' ? 0 : 1) });
    return resultText(r);
  }

  /** The earlier games of a board's chain (slow, fast, …) with their results, and a pending choice. */
  boardHistory(b) {
    const games = b.games || [];
    const parts = games.slice(0, -1).map((g) => `${stageName(g.stageName) || t('match.boardN', { n: g.stage + 1 })}: ${this.gameResultText(g)}`);
    if (b.choice && !b.choice.chooserColour && !b.points) {
      const who = b.choice.chooser === 'first' ? this.teamName(0) : this.teamName(1);
      parts.push(t('match.choice', { team: who, at: new Date(b.choice.deadline).toLocaleTimeString(lang()) }));
    }
    return parts.join(' · ');
  }

  boardResult(b) {
    const g = currentGame(b);
    if (b.points) {
      const who = b.winner === 'first' ? this.teamName(0) : b.winner === 'second' ? this.teamName(1) : null;
      return `${pointsText(b.points[0])} : ${pointsText(b.points[1])}${who ? ` · ${t('match.boardWon', { team: who })}` : ''}`;
    }
    return this.gameResultText(g);
  }

  renderBoards(table) {
    const seen = new Set();
    const cards = [];
    for (const b of table.boards || []) {
      seen.add(b.board);
      const g = currentGame(b);
      let entry = this.views.get(b.board);
      if (entry && entry.gameId !== (g?.gameId || null)) {
        entry.view?.destroy();
        entry = null;
      }
      if (!entry) {
        entry = { gameId: g?.gameId || null, view: g ? new GameView(this.conn, g.gameId, { compact: true }) : null };
        this.views.set(b.board, entry);
      }
      const head = h('div.boardhead', {},
        h('span.bno', {}, t('match.boardN', { n: b.board })),
        g?.stageName && (b.games || []).length > 1 ? h('span.stage', {}, stageName(g.stageName)) : null,
        h('span.bresult', { 'data-testid': `board-result-${b.board}` }, this.boardResult(b)),
        h('span.history', { 'data-testid': `board-history-${b.board}` }, this.boardHistory(b)));
      const body = entry.view
        ? h('a.boardlink', { href: `/game/${g.gameId}`, 'data-testid': `board-link-${b.board}`, 'aria-label': t('match.openBoard', { n: b.board }) }, entry.view.el)
        : h('div.noboard', {}, b.setByArbiter ? t('match.setByArbiter') : t('match.noGame', { start: new Date(table.startsAt).toLocaleString(lang()) }));
      cards.push(h('article.boardcard', { 'data-board': String(b.board), 'data-testid': `board-${b.board}`, 'data-game': g?.gameId || '' }, head, this.choiceBox(table, b), body));
    }
    for (const [n, e] of this.views) {
      if (!seen.has(n)) {
        e.view?.destroy();
        this.views.delete(n);
      }
    }
    fill(this.grid, cards);
  }

  /** The armageddon colour buttons, for the signed-in chooser of a board while it may choose. */
  choiceBox(table, b) {
    const c = b.choice;
    if (!c || c.chooserColour || b.points) return null;
    // Who is looking: the connection's principal, or the session's before the welcome.
    const me = this.conn.principalId || session()?.id;
    if (!me || boardPlayerId(this.overview, table, c.chooser === 'first' ? 0 : 1, b.board) !== String(me)) return null;
    const msg = h('span.msg', { role: 'alert' });
    const choose = (colour) => {
      msg.textContent = '';
      this.conn.request({ leagueChooseColour: { leagueId: this.leagueId, round: table.round, table: table.table, board: b.board, colour } })
        .then(() => this.load(), (e) => { msg.textContent = errorText(e); });
    };
    return h('div.choice', { 'data-testid': `choice-${b.board}` },
      h('span', {}, t('match.youChoose', { at: new Date(c.deadline).toLocaleTimeString(lang()) })), ' ',
      h('button', { type: 'button', 'data-testid': `choose-red-${b.board}`, onclick: () => choose('SIDE_RED') }, t('side.red')),
      h('button', { type: 'button', 'data-testid': `choose-black-${b.board}`, onclick: () => choose('SIDE_BLACK') }, t('side.black')),
      msg);
  }

  destroy() {
    this.stopped = true;
    this.stopFollow?.();
    for (const e of this.views.values()) e.view?.destroy();
    this.views.clear();
  }
}
