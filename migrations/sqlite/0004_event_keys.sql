-- Appends go straight into `game_events` again, a rowid table in append order that now has no
-- index at all: a group commit writes only its last few pages. The per-game lookup index
-- `game_events_by_game` is gone; instead `game_event_keys`, a WITHOUT ROWID table clustered by
-- (game_id, seq), maps each event up to a watermark to its row (`event_id` = `game_events.id`).
-- `game_event_watermark` holds that watermark, the largest `game_events.id` that has a key.
-- Every `StoreOptions::sqlite_recent_max` appends, and when it opens the database, the writer
-- adds the keys of the events above it (sorted by game, so each game's leaf of the key tree is
-- written once for all its moves since the last time) and moves the watermark up, in one
-- transaction; the primary key refuses a duplicate seq then (the writer refuses one at append
-- time from the last seqs it knows).
--
-- Why: since 0003 appends went to `recent_events` and were moved in bulk into `game_events`.
-- That move copied every event's payload a second time (sorted with the wide rows, inserted
-- into `game_events` and deleted from `recent_events`), and both copies went through the WAL
-- and the checkpoint: half of the writer's CPU at full speed. Now a payload is written once,
-- where it is appended, and the bulk step writes only keys of three integers.
--
-- Readers see one log: the view `game_log` (same columns as before) is the keyed events (keys
-- joined to their rows by rowid) and the events above the watermark (a rowid range, at most a
-- few thousand rows, so reading it whole is cheap). A game's last seq is the larger of the
-- largest keyed seq and the largest seq above the watermark. Rows of `game_events` are never
-- deleted, so rowids only grow and every new event lands above the watermark.
--
-- Carried over from 0003: the rows still in `recent_events` join `game_events` in their
-- append order (the unique index still there refuses a duplicate), then every row gets its
-- key and the watermark is the last row.

INSERT INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason)
    SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM recent_events ORDER BY id;
DROP VIEW game_log;
DROP TABLE recent_events;

-- No foreign keys: only the writer writes keys, and only for rows it reads from `game_events`.
CREATE TABLE game_event_keys (
    game_id  INTEGER NOT NULL,
    seq      INTEGER NOT NULL,
    event_id INTEGER NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
INSERT INTO game_event_keys (game_id, seq, event_id)
    SELECT game_id, seq, id FROM game_events ORDER BY game_id, seq;

-- One row: the largest game_events.id whose key is in game_event_keys (0: none).
CREATE TABLE game_event_watermark (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    keyed_to INTEGER NOT NULL
);
INSERT INTO game_event_watermark (id, keyed_to)
    SELECT 1, COALESCE(MAX(id), 0) FROM game_events;

DROP INDEX game_events_by_game;

-- CROSS JOIN keeps the keys as the outer loop (SQLite does not reorder it): a lookup by game
-- searches the primary key, then fetches each row by rowid.
CREATE VIEW game_log AS
    SELECT k.game_id AS game_id, k.seq AS seq, e.kind AS kind, e.payload AS payload,
           e.at_ms AS at_ms, e.actor_id AS actor_id, e.reason AS reason
    FROM game_event_keys AS k CROSS JOIN game_events AS e ON e.id = k.event_id
    UNION ALL
    SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM game_events
    WHERE id > (SELECT keyed_to FROM game_event_watermark);
