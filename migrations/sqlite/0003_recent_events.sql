-- Appends go to `recent_events`, a plain rowid table with no index: a group commit writes only
-- the last few pages of it. The writer moves its rows into `game_events` (whose unique
-- (game_id, seq) index serves every lookup) in bulk — sorted by game, in one transaction —
-- once there are a few thousand, and when it opens the database.
--
-- Why: SQLite's WAL writes whole pages on every commit. With every append going into the
-- (game_id, seq) index, each game's latest entries sit in a leaf of their own, so a group
-- commit of N games' moves rewrote N index leaves (4 KiB each, for ~200-byte moves). Moved in
-- bulk, a game's leaf is written once for all its moves since the last move.
--
-- Readers see one log: the view `game_log` is both tables; a game's last seq is the larger of
-- the two maxima. `recent_events` holds at most a few thousand rows, so reading it whole is cheap.
CREATE TABLE recent_events (
    id       INTEGER PRIMARY KEY,
    game_id  INTEGER NOT NULL,
    seq      INTEGER NOT NULL CHECK (seq >= 1),
    kind     TEXT    NOT NULL,
    payload  BLOB    NOT NULL,
    at_ms    INTEGER NOT NULL,
    actor_id INTEGER,
    reason   TEXT
);
CREATE VIEW game_log AS
    SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM game_events
    UNION ALL
    SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM recent_events;
