// Calling the arbiter (请裁判) in the browser: the player's call box on the game page, the
// arbiter's call box on the game console, the ringing (a WebAudio beep and a flashing title)
// of the event console, and the presence lobby of a round (captains and arbiters).
//
// A player writes only to the game's arbiters, and only while a call is open: the page offers
// nothing to write to the opponent or to spectators (the server refuses it anyway).

import { h, fill } from './dom.js';
import { t, sideName, errorText, lang } from './i18n.js';
import { http } from './api.js';
import { countdown, soon } from './league.js';
import { namesOf } from './matchday.js';

/** Seconds (or minutes) waited, as words. */
export function waitedText(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return t('call.waitedS', { s });
  return t('call.waitedM', { m: Math.floor(s / 60), s: String(s % 60).padStart(2, '0') });
}

/** A line of the arbiter channel in words (`names`: account id → name). */
export function channelText(e, names = {}) {
  const who = (id) => names[id] || (id ? `#${id}` : '');
  switch (e.kind) {
    case 'arbiterCalled': return t('call.line.called', { side: sideName(e.side), reason: e.text || t('call.noReason') });
    case 'callTaken': return t('call.line.taken', { who: who(e.arbiter?.arbiterId) });
    case 'callClosed': return t('call.line.closed', { who: who(e.arbiter?.arbiterId), decision: e.arbiter?.reason || '' });
    case 'message': {
      const from = e.fromArbiter ? t('call.fromArbiter', { who: who(e.fromId) }) : sideName(e.side);
      const to = e.fromArbiter ? (e.to ? sideName(e.to) : t('call.toBoth')) : t('call.toArbiter');
      return `${from} → ${to}: ${e.text}`;
    }
    default: return '';
  }
}

/** The list of the channel's messages and call lines. */
function channelList(model, names, testid) {
  return h('ol.channel', { 'data-testid': testid, 'aria-live': 'polite' },
    model.channel.filter((e, i, all) => all.findIndex((x) => x.seq === e.seq) === i).map((e) => h('li', { 'data-kind': e.kind, class: e.fromArbiter ? 'arbiter' : '' },
      h('span.time', {}, new Date(e.atMs).toLocaleTimeString(lang())), ' ', channelText(e, names))));
}

/**
 * The call box of a game page. `mode`: 'player' (the player's side is `side()`) or 'arbiter'.
 * `render()` redraws it from the model; `el` is the element.
 */
export class CallBox {
  constructor(conn, gameId, model, { mode, side = () => null, onError = () => {} }) {
    this.conn = conn;
    this.gameId = String(gameId);
    this.model = model;
    this.mode = mode;
    this.side = side;
    this.onError = onError;
    this.names = {};
    this.el = h('section.callbox', { 'data-testid': 'callbox', hidden: true, 'aria-label': t('call.title') });
    // Typed text survives the redraws events cause.
    this.reason = h('input', { type: 'text', maxlength: 500, 'data-testid': 'call-reason', 'aria-label': t('call.reason'), placeholder: t('call.reason') });
    this.text = h('input', { type: 'text', maxlength: 500, 'data-testid': 'call-message', 'aria-label': t('call.message'), placeholder: t('call.message') });
    this.decision = h('input', { type: 'text', maxlength: 500, 'data-testid': 'call-decision', 'aria-label': t('call.decision'), placeholder: t('call.decision') });
    this.to = h('select', { 'data-testid': 'call-to', 'aria-label': t('call.to') },
      h('option', { value: '' }, t('call.toBoth')),
      h('option', { value: 'red' }, sideName('red')),
      h('option', { value: 'black' }, sideName('black')));
    this.timer = setInterval(() => this.tick(), 1000);
  }

  destroy() {
    clearInterval(this.timer);
  }

  /** Whether this game takes calls (a league game, or one created with call settings). */
  get enabled() {
    const i = this.model.info || {};
    return Boolean(i.calls || i.league);
  }

  async act(fn, after = () => {}) {
    this.onError(null);
    try {
      await fn();
      after();
    } catch (e) {
      this.onError(e);
    }
  }

  tick() {
    const w = this.el.querySelector('[data-testid=call-waiting]');
    const c = this.model.openCall;
    if (w && c) w.textContent = waitedText(this.conn.serverNow() - c.atMs);
  }

  async render() {
    const m = this.model;
    const side = this.side();
    const show = m.loaded && this.enabled && (this.mode === 'arbiter' || side) && (!m.finished || m.channel.length);
    this.el.hidden = !show;
    if (!show) return;
    const ids = m.channel.flatMap((e) => [e.fromId, e.arbiter?.arbiterId, m.openCall?.takenBy]).filter(Boolean);
    if (ids.some((id) => !this.names[id])) {
      namesOf(ids).then((n) => {
        const fresh = ids.some((id) => !this.names[id] && n[id]);
        Object.assign(this.names, n);
        if (fresh) this.render();
      }).catch(() => {});
    }
    const c = m.openCall;
    const parts = [h('h2', {}, t('call.title'))];
    if (c) {
      const mine = side && c.side === side;
      parts.push(h('div.opencall', { 'data-testid': 'open-call', role: 'status' },
        h('strong', {}, mine ? t('call.youCalled') : t('call.sideCalled', { side: sideName(c.side) })), ' · ',
        h('span', { 'data-testid': 'call-waiting' }, waitedText(this.conn.serverNow() - c.atMs)),
        c.reason ? h('div.reason', {}, c.reason) : null,
        h('div', { 'data-testid': 'call-clock' }, m.paused ? t('call.clockStopped') : t('call.clockRuns')),
        h('div', { 'data-testid': 'call-taken' }, c.takenBy ? t('call.takenBy', { who: this.names[c.takenBy] || `#${c.takenBy}` }) : t('call.notTaken'))));
    }
    parts.push(channelList(m, this.names, 'call-channel'));
    if (this.mode === 'player' && !m.finished) {
      if (!c) {
        parts.push(h('form.row', {
          onsubmit: (ev) => {
            ev.preventDefault();
            this.act(() => this.conn.callArbiter(this.gameId, this.reason.value.trim()), () => { this.reason.value = ''; });
          },
        }, this.reason, h('button.primary', { type: 'submit', 'data-testid': 'call-arbiter' }, t('call.call'))));
        parts.push(h('p.hint', {}, t('call.hint')));
      } else {
        parts.push(this.messageForm(null));
      }
    }
    if (this.mode === 'arbiter' && c) {
      const take = h('button', { type: 'button', 'data-testid': 'take-call', onclick: () => this.act(() => this.conn.takeCall(this.gameId)) }, t('call.take'));
      const close = h('form.row', {
        onsubmit: (ev) => {
          ev.preventDefault();
          this.act(() => this.conn.closeCall(this.gameId, this.decision.value.trim()), () => { this.decision.value = ''; });
        },
      }, this.decision, h('button', { type: 'submit', 'data-testid': 'close-call' }, t('call.close')));
      parts.push(h('div.row', {}, c.takenBy ? null : take), this.messageForm(this.to), close,
        h('p.hint', {}, t('call.arbiterHint')));
    } else if (this.mode === 'arbiter' && !m.finished) {
      parts.push(this.messageForm(this.to));
    }
    fill(this.el, parts);
  }

  messageForm(to) {
    return h('form.row', {
      onsubmit: (ev) => {
        ev.preventDefault();
        const text = this.text.value.trim();
        if (!text) return;
        this.act(() => this.conn.sendMessage(this.gameId, text, to ? to.value || null : null), () => { this.text.value = ''; });
      },
    }, to, this.text, h('button', { type: 'submit', 'data-testid': 'send-message' }, this.mode === 'player' ? t('call.sendToArbiter') : t('call.send')));
  }
}

/**
 * The alert of the event console: a beep (WebAudio, once the user has enabled sound: browsers
 * start audio only after a gesture) and a flashing title. `globalThis.chuhe.rings` counts the
 * rings and `globalThis.chuhe.beeps` the beeps played (the tests read them).
 */
export class Ringer {
  constructor() {
    this.ctx = null;
    this.flash = null;
    this.title = document.title;
    globalThis.chuhe = globalThis.chuhe || {};
    globalThis.chuhe.rings = 0;
    globalThis.chuhe.beeps = 0;
  }

  get soundOn() {
    return Boolean(this.ctx);
  }

  /** Turns the sound on (must run in a click handler) or off. */
  toggleSound() {
    if (this.ctx) {
      this.ctx.close?.();
      this.ctx = null;
      return false;
    }
    const AC = globalThis.AudioContext || globalThis.webkitAudioContext;
    if (!AC) return false;
    try {
      this.ctx = new AC();
      this.ctx.resume?.();
    } catch {
      this.ctx = null;
    }
    return this.soundOn;
  }

  beep() {
    if (!this.ctx) return;
    try {
      const at = this.ctx.currentTime;
      for (const [i, f] of [880, 660, 880].entries()) {
        const o = this.ctx.createOscillator();
        const g = this.ctx.createGain();
        o.frequency.value = f;
        g.gain.setValueAtTime(0.2, at + i * 0.25);
        g.gain.exponentialRampToValueAtTime(0.001, at + i * 0.25 + 0.2);
        o.connect(g).connect(this.ctx.destination);
        o.start(at + i * 0.25);
        o.stop(at + i * 0.25 + 0.22);
      }
      globalThis.chuhe.beeps += 1;
    } catch {
      // No audio output: the visible alert remains.
    }
  }

  /** A new call: beep, and flash the title while `count()` calls are open. */
  ring(count) {
    globalThis.chuhe.rings += 1;
    this.beep();
    this.flashWhile(count);
  }

  flashWhile(count) {
    if (this.flash) return;
    let on = false;
    this.flash = setInterval(() => {
      const n = count();
      if (!n) {
        this.stopFlash();
        return;
      }
      on = !on;
      document.title = on ? `🔔 (${n}) ${t('call.titleFlash')}` : this.title;
    }, 1000);
  }

  stopFlash() {
    clearInterval(this.flash);
    this.flash = null;
    document.title = this.title;
  }
}

const WORDS = { connected: 'presence.connected', not_yet: 'presence.notYet', left: 'presence.left' };

/**
 * A round's presence lobby (`GET /api/v1/leagues/{id}/rounds/{round}/presence`, then live over
 * the websocket): each lined-up player connected / not yet / left, with the time left to the
 * lateness limit for the absent. Only a match's captains and the event's arbiters see it: for
 * anyone else the element stays empty and hidden. `table`: only this match.
 */
export class PresenceView {
  constructor(conn, leagueId, round, { table = null } = {}) {
    this.conn = conn;
    this.leagueId = String(leagueId);
    this.round = Number(round);
    this.table = table === null ? null : Number(table);
    this.data = null;
    this.at = 0;
    this.el = h('section.presence', { 'data-testid': 'presence', hidden: true, 'aria-label': t('presence.title') });
    this.stopped = false;
    this.load();
    const stopLobby = conn.followLobby(this.leagueId, (p) => {
      if (Number(p.round) === this.round && p.json) this.show(p.json);
    });
    // Lineups revealed and rounds moved come on the league's public stream.
    const stopLeague = conn.followLeague(this.leagueId, 0, soon(() => this.load(), 300));
    this.stop = () => {
      stopLobby();
      stopLeague();
    };
    // The lobby opens at a time, and the lateness limit counts down.
    this.timer = setInterval(() => {
      if (this.data && !this.data.open && Date.now() >= this.data.opensAtMs - (conn.offsetMs || 0)) this.load();
      else this.render();
    }, 1000);
  }

  destroy() {
    this.stopped = true;
    clearInterval(this.timer);
    this.stop?.();
  }

  async load() {
    try {
      const d = await http(`/api/v1/leagues/${encodeURIComponent(this.leagueId)}/rounds/${this.round}/presence`);
      if (!this.stopped) this.show(d);
    } catch {
      // Not a captain of the match nor an arbiter (or signed out): nothing to show.
    }
  }

  show(d) {
    this.data = d;
    this.at = Date.now();
    this.render();
  }

  render() {
    const d = this.data;
    if (!d) return;
    this.el.hidden = false;
    const tables = (d.tables || []).filter((x) => this.table === null || x.table === this.table);
    const head = h('h2', {}, t('presence.title'));
    if (!d.open) {
      fill(this.el, head, h('p.none', { 'data-testid': 'presence-closed' }, t('presence.opensAt', { at: new Date(d.opensAtMs).toLocaleString(lang()) })));
      return;
    }
    const elapsed = Date.now() - this.at;
    const rows = tables.flatMap((tb) => (tb.players || []).map((p) => {
      const left = p.latenessLeftMs === null || p.latenessLeftMs === undefined ? null : Math.max(0, p.latenessLeftMs - elapsed);
      return h('tr', { 'data-testid': `presence-${tb.table}-${p.team}-${p.board}`, 'data-presence': p.presence, 'data-player': p.playerId },
        h('td', {}, String(tb.table)),
        h('td', {}, String(p.board)),
        h('td', {}, p.teamName || ''),
        h('td', {}, p.name),
        h('td', { class: `presence ${p.presence}` }, t(WORDS[p.presence] || 'presence.notYet')),
        h('td', { 'data-testid': 'presence-lateness' }, left === null ? '' : left > 0 ? t('presence.lateIn', { left: countdown(left) }) : t('presence.late')));
    }));
    const absent = tables.flatMap((tb) => tb.players || []).filter((p) => p.presence !== 'connected').length;
    fill(this.el, head,
      h('p', { 'data-testid': 'presence-summary' }, absent ? t('presence.absent', { n: absent }) : t('presence.allHere')),
      rows.length
        ? h('div.tablewrap', {}, h('table.presencetable', {},
          h('thead', {}, h('tr', {}, ['table', 'board', 'team', 'player', 'state', 'lateness'].map((c) => h('th', { scope: 'col' }, t(`presence.col.${c}`))))),
          h('tbody', {}, rows)))
        : h('p.none', {}, t('presence.noLineups')));
  }
}
