// What every browser test needs: a real `chuhe serve` (the binary cargo built) on a free port
// with a fresh SQLite database, the organiser API to create players, tokens and games, and
// Debian's headless Chromium driven by playwright-core.
//
// CHUHE_BIN names the binary (default: target/release/chuhe if built, else target/debug/chuhe);
// CHROMIUM the browser (default /usr/bin/chromium).

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function chuheBin() {
  if (process.env.CHUHE_BIN) return process.env.CHUHE_BIN;
  for (const p of ['target/release/chuhe', 'target/debug/chuhe']) {
    if (existsSync(join(ROOT, p))) return join(ROOT, p);
  }
  throw new Error('no chuhe binary: run `cargo build -p chuhe` first (or set CHUHE_BIN)');
}

/** Starts `chuhe serve` with an organiser already in its database. */
export async function startServer({ args = [] } = {}) {
  const bin = chuheBin();
  const dir = mkdtempSync(join(tmpdir(), 'chuhe-browser-'));
  const db = `sqlite://${join(dir, 'chuhe.db')}`;
  const admin = (...a) => JSON.parse(execFileSync(bin, ['admin', ...a, '--database-url', db], { encoding: 'utf8' }));
  const org = admin('create-player', '--name', 'Organiser', '--role', 'organizer');
  const orgToken = admin('issue-token', '--player', org.id).token;
  const child = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--database-url', db, '--log', 'warn', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  // The server prints its address once it listens.
  let out = '';
  const base = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /serving on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`chuhe serve exited (${code}): ${stderr}`)));
  });
  const server = {
    base,
    orgToken,
    /** The server's process id (the liveness test freezes it). */
    pid: child.pid,
    /** What the server has printed so far (the demo's addresses and tokens). */
    stdout: () => out,
    async api(method, path, body, token = orgToken) {
      const res = await fetch(base + path, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    /** A principal with a token: `{ id, name, token }`. */
    async principal(name, role = 'ROLE_PLAYER') {
      const p = await this.api('POST', '/api/v1/players', { displayName: name, role });
      const t = await this.api('POST', '/api/v1/tokens', { playerId: p.id, label: 'browser test' });
      return { id: p.id, name, token: t.token, tokenId: t.tokenId };
    },
    /** Creates (and so starts) a game; returns its id. */
    async game(req) {
      const r = await this.api('POST', '/api/v1/games', req);
      return r.info.gameId;
    },
    async stop() {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A test file's server and browser: `before(async () => ({ server, browser } = await startAll()))`. */
export async function startAll(opts) {
  const server = await startServer(opts);
  try {
    return { server, browser: await launchBrowser() };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

/** Stops what `startAll` started (either may be missing when it failed). */
export async function stopAll({ server, browser }) {
  await browser?.close();
  await server?.stop();
}

/** Debian's Chromium, headless, with a fresh profile. */
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run',
      '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A browser context signed in with `token` (through the sign-in link, as a person would use it)
 * and its page open at `path`. `lang`: the interface language.
 */
export async function openAs(browser, server, token, path, { lang = 'en', viewport } = {}) {
  const ctx = await browser.newContext({ viewport: viewport || { width: 1200, height: 900 }, locale: lang === 'zh-CN' ? 'zh-CN' : 'en-US' });
  await ctx.addInitScript((l) => localStorage.setItem('chuhe.lang', l), lang);
  const page = await ctx.newPage();
  page.on('pageerror', (e) => { throw e; });
  if (token) {
    await page.goto(`${server.base}/signin#token=${encodeURIComponent(token)}&next=${encodeURIComponent(path)}`);
    await page.waitForURL(`${server.base}${path}`);
  } else {
    await page.goto(server.base + path);
  }
  return { ctx, page };
}

/** Clicks the board's point `square` (ICCS, e.g. "h2"). */
export async function clickSquare(page, square) {
  await page.locator(`[data-testid=board] rect.hit[data-square="${square}"]`).click();
}

/** Drags from one point of the board to another with the mouse. */
export async function dragSquare(page, from, to) {
  const box = async (sq) => {
    const b = await page.locator(`[data-testid=board] rect.hit[data-square="${sq}"]`).boundingBox();
    return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  };
  const a = await box(from);
  const b = await box(to);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 4 });
  await page.mouse.move(b.x, b.y, { steps: 4 });
  await page.mouse.up();
}

/** The piece letter on `square` ('' when empty). */
export async function pieceAt(page, square) {
  const g = page.locator(`[data-testid=board] g.piece[data-square="${square}"]`);
  return (await g.count()) ? g.getAttribute('data-piece') : '';
}

/**
 * A published team league (organizer API): two teams of three for two boards, one round robin
 * leg (so one match), its first round a day away unless `startInMs` says otherwise. Returns
 * `{ id, tokens }` where `tokens` are the API's (`{ team, role, name, principalId, token }`).
 */
export async function league(server, { name = '象甲 browser test', boards = 2, chain = { preset: 'single', time_control: '10m+5s' }, teams, extra = {} } = {}) {
  const spec = {
    ...extra,
    name,
    system: 'round_robin',
    legs: 1,
    boards,
    result_chain: chain,
    teams: teams || [
      { name: '红队', players: ['红一', '红二', '红三'] },
      { name: '黑队', players: ['黑一', '黑二', '黑三'] },
    ],
    schedule: { first_round: new Date(Date.now() + 86_400_000).toISOString(), every: '1d' },
  };
  const created = await server.api('POST', '/api/v1/leagues', spec);
  await server.api('POST', `/api/v1/leagues/${created.id}/publish`, {});
  const { tokens } = await server.api('POST', `/api/v1/leagues/${created.id}/tokens`, {});
  return { id: created.id, tokens };
}

/** The token entry of `name` (a captain, player or arbiter of a league). */
export function tokenOf(tokens, role, team, name = null) {
  const t = tokens.find((x) => x.role === role && x.team === team && (name === null || x.name === name));
  if (!t) throw new Error(`no ${role} token for team ${team} ${name || ''}`);
  return t;
}

/** Starts a league's round now: its lineup deadline passes at once and it starts in `inMs`. */
export async function startRound(server, leagueId, round = 1, inMs = 1500) {
  const now = Date.now();
  await server.api('POST', `/api/v1/leagues/${leagueId}/rounds/${round}/reschedule`, {
    start: new Date(now + inMs).toISOString(),
    lineup_deadline: new Date(now).toISOString(),
  });
}
