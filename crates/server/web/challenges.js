// Casual-game challenges: the HTTP routes (`/api/v1/challenges`, crates/server/src/challenge.rs)
// and the words for a challenge. Pure apart from `http`.

import { http } from './api.js';
import { t } from './i18n.js';

export const challengeApi = {
  list: () => '/api/v1/challenges',
  one: (id) => `/api/v1/challenges/${id}`,
  accept: (id) => `/api/v1/challenges/${id}/accept`,
};

/** Time controls offered as one click (any other the clocks accept can be typed). */
export const PRESETS = ['10m+5s', '15m+10s', '25m+30s', '90m+30s', '30m|3x30s', '40/90m,10/15m', '5m+3s'];

export const listChallenges = () => http(challengeApi.list());
export const getChallenge = (id) => http(challengeApi.one(id));
export const createChallenge = (timeControl, colour) => http(challengeApi.list(), { method: 'POST', body: { timeControl, colour } });
export const acceptChallenge = (id) => http(challengeApi.accept(id), { method: 'POST', body: {} });
export const cancelChallenge = (id) => http(challengeApi.one(id), { method: 'DELETE' });

/** The creator's colour in words ('red', 'black' or 'random'). */
export function colourText(c) {
  return t(`challenge.colour.${c || 'random'}`);
}

/** Who plays which colour, as the one reading sees it: `key` for a side, or colours at random. */
export function colourLine(key, colour) {
  return colour === 'random' ? t('challenge.randomColours') : t(key, { colour: colourText(colour) });
}

/** The colour the one accepting gets. */
export function acceptorColour(c) {
  return c === 'red' ? 'black' : c === 'black' ? 'red' : 'random';
}
