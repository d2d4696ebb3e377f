// The client's link to the server: the session (token kept in localStorage), the HTTP API, and
// one websocket connection (`chuhe.v1.json`) shared by everything on the page.
//
// `Connection` keeps a `GameModel` per subscribed game. It reconnects by itself after a drop
// (backoff 0.5 s doubling to 8 s, or the server's `reconnectAfterMs`) and resubscribes every
// game with the last seq it applied, so the server sends exactly the events missed; an event
// that skips a seq makes it resubscribe the same way. A move whose answer was lost with the
// connection is sent again with the same ply after reconnecting: the server acknowledges a
// resent move without playing it twice (docs/protocol.md, "move").
//
// Liveness (docs/protocol.md, "Liveness"): the server writes something at least every two
// `welcome.heartbeatMs` (a `heartbeat` when nothing else); a connection on which nothing
// arrived for three of them — or no welcome within that long of opening — is dead (a frozen
// or unreachable node): it is dropped at once and the connection reconnects, resuming by seq.

import { GameModel } from './model.js';
import { storage as store } from './i18n.js';

const TOKEN = 'chuhe.token';
const WHO = 'chuhe.who';

/** The signed-in principal: `{ token, id, name, role }` or null (a spectator). */
export function session() {
  const s = store();
  const token = s?.getItem(TOKEN);
  if (!token) return null;
  try {
    return { token, ...JSON.parse(s.getItem(WHO) || '{}') };
  } catch {
    return { token };
  }
}

export function saveSession(token, who) {
  store()?.setItem(TOKEN, token);
  store()?.setItem(WHO, JSON.stringify({ id: who.id, name: who.displayName, role: who.role }));
}

export function clearSession() {
  store()?.removeItem(TOKEN);
  store()?.removeItem(WHO);
}

/** An HTTP error answer: `status`, the stable `code` and the server's `message`. */
export class ApiError extends Error {
  constructor(status, code, message, body = null) {
    super(message);
    this.status = status;
    this.code = code;
    // The whole answer: a refused lineup's `reasons` are in it.
    this.body = body;
  }
}

/** GET/POST JSON; throws `ApiError` with the server's code on a non-2xx answer. */
export async function http(path, { method = 'GET', body, token } = {}) {
  const headers = {};
  const tok = token === undefined ? session()?.token : token;
  if (tok) headers.Authorization = `Bearer ${tok}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'disconnected', String(e?.message || e));
  }
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) throw new ApiError(res.status, json?.code || 'http_error', json?.message || text || res.statusText, json);
  return json;
}

/** Who a token belongs to (`Player`), or throws (`unauthenticated` when unknown or revoked). */
export function whoAmI(token) {
  return http('/api/v1/me', { token });
}

/** The legal moves of a position (`LegalMoves`). */
export function legalMoves(fen) {
  return http(`/api/v1/legal?fen=${encodeURIComponent(fen)}`, { token: null });
}

/** A game's full event log (arbiters and organizers). */
export function gameEvents(gameId) {
  return http(`/api/v1/games/${encodeURIComponent(gameId)}/events`);
}

export class Connection {
  constructor({ token = session()?.token, url } = {}) {
    this.token = token || null;
    const proto = globalThis.location?.protocol === 'https:' ? 'wss' : 'ws';
    this.url = url || `${proto}://${globalThis.location?.host}/ws`;
    this.ws = null;
    this.state = 'connecting';
    this.welcome = null;
    this.nextId = 1;
    this.pending = new Map(); // requestId → { resolve, reject, msg, retry }
    this.games = new Map(); // gameId → { model, listeners: Set }
    this.leagues = new Map(); // leagueId → { seq, listeners: Set }
    this.desks = new Map(); // leagueId → Set of listeners (the arbiters' desk: calls)
    this.lobbies = new Map(); // leagueId → Set of listeners (the presence lobby)
    this.messageListeners = new Set(); // an arbiter's messages to captains or a whole event
    this.stateListeners = new Set();
    this.listListeners = new Set();
    this.offsetMs = 0; // server time − local time
    this.backoffMs = 500;
    this.closed = false;
    this.timer = null;
    this.pinger = null;
    this.watchdog = null;
    this.redirects = 0; // owner_unreachable goodbyes since the last reply
    this.heardAt = 0; // Date.now() of the last message (or of opening the socket)
    this.heartbeatMs = 0; // the last welcome's (0: the server does not beat)
    this.connects = 0;
    this.open();
  }

  /** Who this connection is (the last `welcome`'s principal id; kept while reconnecting). */
  get principalId() {
    return this.lastWelcome?.principalId || null;
  }

  /** Server time now, in Unix ms (local clock corrected by the measured offset). */
  serverNow() {
    return Date.now() + this.offsetMs;
  }

  onState(fn) {
    this.stateListeners.add(fn);
    fn(this.state, this);
    return () => this.stateListeners.delete(fn);
  }

  setState(s, detail) {
    this.state = s;
    this.stateDetail = detail;
    for (const fn of this.stateListeners) fn(s, this);
  }

  open() {
    if (this.closed) return;
    const url = this.token ? `${this.url}?token=${encodeURIComponent(this.token)}` : this.url;
    let ws;
    try {
      ws = new WebSocket(url, 'chuhe.v1.json');
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.connects += 1;
    this.heardAt = Date.now();
    this.armWatchdog();
    ws.onmessage = (ev) => {
      this.heardAt = Date.now();
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      this.receive(msg);
    };
    ws.onclose = () => this.lost(ws);
  }

  /**
   * The liveness rule's watchdog: one timer per connection. Silence for three heartbeat
   * intervals (10 s before a first welcome told the interval) drops the socket.
   */
  armWatchdog() {
    clearInterval(this.watchdog);
    const every = this.heartbeatMs > 0 ? Math.max(250, this.heartbeatMs / 2) : 1000;
    this.watchdog = setInterval(() => {
      const ws = this.ws;
      if (!ws) return;
      const limit = this.heartbeatMs > 0 ? 3 * this.heartbeatMs : 10000;
      if (this.heartbeatMs === 0 && this.welcome) return; // an old server: no rule
      if (Date.now() - this.heardAt < limit) return;
      // Dead: not even the closing handshake would get through; drop it and go on at once.
      ws.onmessage = null;
      ws.onclose = null;
      try {
        ws.close();
      } catch {
        // already closing
      }
      this.lost(ws, true);
    }, every);
  }

  /** The socket `ws` is gone (closed, or found dead): reconnect unless closed for good. */
  lost(ws, dead = false) {
    if (this.ws !== ws) return;
    {
      const welcomed = this.welcome !== null;
      this.ws = null;
      this.welcome = null;
      clearInterval(this.pinger);
      clearInterval(this.watchdog);
      this.failPending();
      if (this.closed) return;
      this.setState('reconnecting');
      if (!welcomed && this.token && !dead) {
        // Refused before the welcome: the browser does not say why, so ask whether the token
        // still works. A revoked one is forgotten and the page goes on as a spectator.
        const token = this.token;
        whoAmI(token).then(() => this.scheduleReconnect(), (e) => {
          if (e.code === 'unauthenticated' && this.token === token) {
            clearSession();
            this.token = null;
            this.lastWelcome = null;
            this.setState('badtoken');
            this.scheduleReconnect(0);
          } else {
            this.scheduleReconnect();
          }
        });
        return;
      }
      this.scheduleReconnect(dead ? 0 : undefined);
    }
  }

  scheduleReconnect(afterMs) {
    clearTimeout(this.timer);
    const wait = afterMs ?? this.backoffMs;
    this.backoffMs = Math.min(8000, this.backoffMs * 2);
    this.timer = setTimeout(() => this.open(), wait);
  }

  /** Drops the socket as a network failure would (the tests use it); it reconnects. */
  drop() {
    this.ws?.close();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.pinger);
    clearInterval(this.watchdog);
    this.ws?.close();
  }

  failPending() {
    for (const [id, p] of this.pending) {
      if (p.retry) continue; // moves are sent again after reconnecting
      this.pending.delete(id);
      p.reject({ code: 'disconnected', message: 'the connection was lost' });
    }
  }

  rawSend(msg) {
    if (!this.ws || this.ws.readyState !== 1) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /**
   * Sends a client message and resolves with the `Reply` (rejects with the `Error`:
   * `{ code, message }`). `retry`: resend after a reconnect instead of failing (moves only).
   */
  request(msg, { retry = false } = {}) {
    const requestId = this.nextId++;
    const full = { requestId, ...msg };
    return new Promise((resolve, reject) => {
      if (!this.welcome && !retry) {
        reject({ code: 'disconnected', message: 'not connected' });
        return;
      }
      this.pending.set(requestId, { resolve, reject, msg: full, retry });
      if (this.welcome) this.rawSend(full);
    });
  }

  receive(msg) {
    const now = Date.now();
    if (msg.welcome) {
      this.welcome = msg.welcome;
      this.lastWelcome = msg.welcome;
      this.offsetMs = Number(msg.welcome.serverTimeMs || now) - now;
      // After a redirect the backoff it set holds until this socket has served a reply.
      if (!this.redirects) this.backoffMs = 500;
      const beat = Number(msg.welcome.heartbeatMs || 0);
      if (beat !== this.heartbeatMs) {
        this.heartbeatMs = beat;
        this.armWatchdog();
      }
      this.setState('open');
      for (const [gameId, g] of this.games) this.sendSubscribe(gameId, g.model.seq);
      for (const [leagueId, l] of this.leagues) this.sendLeagueSubscribe(leagueId, l.seq);
      for (const leagueId of this.desks.keys()) this.sendDeskSubscribe(leagueId);
      for (const leagueId of this.lobbies.keys()) this.sendLobbySubscribe(leagueId);
      for (const p of this.pending.values()) this.rawSend(p.msg);
      clearInterval(this.pinger);
      this.pinger = setInterval(() => this.rawSend({ ping: { clientTimeMs: String(Date.now()) } }), 15000);
      this.rawSend({ ping: { clientTimeMs: String(now) } });
      return;
    }
    if (msg.pong) {
      const sent = Number(msg.pong.clientTimeMs || 0);
      const server = Number(msg.pong.serverTimeMs || 0);
      if (sent && server && now >= sent) this.offsetMs = server - (sent + now) / 2;
      return;
    }
    if (msg.reply || msg.error) {
      if (msg.reply) this.redirects = 0;
      const r = msg.reply || msg.error;
      const p = this.pending.get(r.requestId);
      if (p) {
        this.pending.delete(r.requestId);
        if (msg.reply) p.resolve(msg.reply);
        else p.reject(msg.error);
      } else if (msg.error && msg.error.gameId) {
        this.notify(msg.error.gameId, 'error', msg.error);
      }
      return;
    }
    if (msg.gameList) {
      for (const fn of this.listListeners) fn(msg.gameList.games || []);
      return;
    }
    if (msg.heartbeat) return;
    if (msg.goodbye) {
      if (msg.goodbye.code === 'owner_unreachable') {
        // This node cannot reach the game's node (a coordination outage): reconnect at once;
        // the proxy's next pick (or the same node once it can) serves the game.
        // Redirected again and again (no node reaches it): back off from 100 ms to 8 s.
        this.redirects += 1;
        this.setState('reconnecting');
        this.backoffMs = Math.min(8000, Number(msg.goodbye.reconnectAfterMs || 100) * 2 ** Math.min(this.redirects - 1, 7));
        return;
      }
      this.setState('goodbye', msg.goodbye);
      const after = Number(msg.goodbye.reconnectAfterMs || 0);
      if (after > 0) this.scheduleReconnect(after);
      return;
    }
    if (msg.league) {
      this.receiveLeague(msg.league);
      return;
    }
    if (msg.desk) {
      for (const fn of this.desks.get(String(msg.desk.leagueId)) || []) fn(msg.desk);
      return;
    }
    if (msg.leagueMessage) {
      for (const fn of this.messageListeners) fn(msg.leagueMessage);
      return;
    }
    if (msg.presence) {
      let json = null;
      try {
        json = JSON.parse(msg.presence.json || 'null');
      } catch {
        json = null;
      }
      for (const fn of this.lobbies.get(String(msg.presence.leagueId)) || []) fn({ round: msg.presence.round, json });
      return;
    }
    const gameId = msg.snapshot?.gameId || msg.event?.gameId;
    const g = gameId && this.games.get(String(gameId));
    if (!g) return;
    const what = g.model.apply(msg, now);
    if (what === 'gap') {
      this.sendSubscribe(gameId, g.model.seq);
      return;
    }
    if (what === 'applied') this.notify(gameId, msg.snapshot ? 'snapshot' : 'event', msg.snapshot || msg.event);
  }

  notify(gameId, kind, data) {
    const g = this.games.get(String(gameId));
    if (!g) return;
    for (const fn of g.listeners) fn(kind, data, g.model);
  }

  sendSubscribe(gameId, lastSeq) {
    this.rawSend({ requestId: this.nextId++, subscribe: { gameId: String(gameId), lastSeq: String(lastSeq || 0) } });
  }

  /**
   * Watches (or plays) a game: `fn(kind, data, model)` is called with 'snapshot', 'event' or
   * 'error' as they come. Several watchers of one game share its model and subscription.
   * Returns `{ model, stop }`.
   */
  watch(gameId, fn) {
    const id = String(gameId);
    let g = this.games.get(id);
    if (!g) {
      g = { model: new GameModel(id), listeners: new Set() };
      this.games.set(id, g);
      if (this.welcome) this.sendSubscribe(id, 0);
    }
    g.listeners.add(fn);
    if (g.model.loaded) fn('snapshot', null, g.model);
    return {
      model: g.model,
      stop: () => {
        g.listeners.delete(fn);
        if (g.listeners.size === 0) {
          this.games.delete(id);
          if (this.welcome) this.rawSend({ requestId: this.nextId++, unsubscribe: { gameId: id } });
        }
      },
    };
  }

  /**
   * Follows a league's public stream from `lastSeq` (0: everything the server still holds):
   * `fn(update)` gets each new entry (`{ seq, atMs, kind, json, gap }`; `gap` when entries were
   * missed, so the page should reload what it shows). After a drop it resubscribes with the
   * last seq seen and gets exactly the entries missed. Returns a stop function.
   */
  followLeague(leagueId, lastSeq, fn) {
    const id = String(leagueId);
    let l = this.leagues.get(id);
    if (!l) {
      l = { seq: Number(lastSeq || 0), listeners: new Set() };
      this.leagues.set(id, l);
      if (this.welcome) this.sendLeagueSubscribe(id, l.seq);
    }
    l.listeners.add(fn);
    return () => {
      l.listeners.delete(fn);
      if (l.listeners.size === 0 && this.leagues.get(id) === l) {
        this.leagues.delete(id);
        if (this.welcome) this.rawSend({ requestId: this.nextId++, leagueUnsubscribe: { leagueId: id } });
      }
    };
  }

  sendLeagueSubscribe(leagueId, lastSeq) {
    this.rawSend({ requestId: this.nextId++, leagueSubscribe: { leagueId: String(leagueId), lastSeq: String(lastSeq || 0) } });
  }

  receiveLeague(u) {
    const l = this.leagues.get(String(u.leagueId));
    if (!l) return;
    const seq = Number(u.seq || 0);
    if (seq <= l.seq) return; // already seen (a resubscription overlaps)
    const gap = seq > l.seq + 1;
    l.seq = seq;
    let json = null;
    try {
      json = u.json ? JSON.parse(u.json) : null;
    } catch {
      json = null;
    }
    const update = { seq, atMs: Number(u.atMs || 0), kind: u.kind, json, gap };
    for (const fn of l.listeners) fn(update);
  }

  /**
   * Follows a league's arbiters' desk (officials only): `fn(desk)` gets every call, take,
   * close and message of the league's games (`{ leagueId, board, event }`), the open calls'
   * first. Resubscribes after a drop. `onError(err)` hears a refusal. Returns a stop function.
   */
  followDesk(leagueId, fn, onError = () => {}) {
    return this.followSet(this.desks, leagueId, fn, (id) => this.sendDeskSubscribe(id, onError));
  }

  /**
   * Follows a league's presence lobby (its captains and officials): `fn({ round, json })` gets
   * a round's presence (the JSON of GET …/rounds/{round}/presence) when the lobby is open and
   * whenever a lined-up player connects or leaves. Returns a stop function.
   */
  followLobby(leagueId, fn, onError = () => {}) {
    return this.followSet(this.lobbies, leagueId, fn, (id) => this.sendLobbySubscribe(id, onError));
  }

  followSet(map, leagueId, fn, subscribe) {
    const id = String(leagueId);
    let set = map.get(id);
    if (!set) {
      set = new Set();
      map.set(id, set);
      if (this.welcome) subscribe(id);
    }
    set.add(fn);
    // The server keeps a connection's desk and lobby until it closes: nothing to unsubscribe.
    return () => {
      set.delete(fn);
      if (!set.size && map.get(id) === set) map.delete(id);
    };
  }

  sendDeskSubscribe(leagueId, onError) {
    this.request({ arbiterDeskSubscribe: { leagueId: String(leagueId) } }).catch((e) => onError?.(e));
  }

  sendLobbySubscribe(leagueId, onError) {
    this.request({ lobbySubscribe: { leagueId: String(leagueId) } }).catch((e) => onError?.(e));
  }

  /** `fn(m)` gets every arbiter's message to this account as a captain or one of an event. */
  onLeagueMessage(fn) {
    this.messageListeners.add(fn);
    return () => this.messageListeners.delete(fn);
  }

  /** Calls the arbiter (请裁判) in game `gameId`. */
  callArbiter(gameId, reason) {
    return this.request({ callArbiter: { gameId: String(gameId), reason } });
  }

  /** A message on a game's arbiter channel; `to`: 'red', 'black' or null (both / the arbiters). */
  sendMessage(gameId, text, to = null) {
    const side = to === 'red' ? 'SIDE_RED' : to === 'black' ? 'SIDE_BLACK' : 'SIDE_UNSPECIFIED';
    return this.request({ sendMessage: { gameId: String(gameId), to: side, text } });
  }

  takeCall(gameId) {
    return this.request({ takeCall: { gameId: String(gameId) } });
  }

  closeCall(gameId, decision) {
    return this.request({ closeCall: { gameId: String(gameId), decision } });
  }

  /** Asks for the live game list; `fn(games)` gets every list that arrives. */
  onGameList(fn) {
    this.listListeners.add(fn);
    return () => this.listListeners.delete(fn);
  }

  listGames() {
    return this.request({ listGames: {} }).catch(() => {});
  }

  /** Plays a move (ICCS, Chinese or WXF) as ply `ply`; resent after a reconnect if needed. */
  move(gameId, ply, move, { offerDraw = false, thinkMs } = {}) {
    const m = { gameId: String(gameId), ply, move };
    if (offerDraw) m.offerDraw = true;
    if (thinkMs) m.thinkMs = Math.max(0, Math.min(4294967295, Math.round(thinkMs)));
    return this.request({ move: m }, { retry: true });
  }

  arbiter(gameId, reason, action) {
    return this.request({ arbiter: { gameId: String(gameId), reason, ...action } });
  }
}
