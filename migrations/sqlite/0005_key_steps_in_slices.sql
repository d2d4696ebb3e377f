-- The writer keys the tail in slices: a step (see 0004) still takes every event above
-- `keyed_to` up to the largest id at its start (`keying_to`), sorted by game, but adds their
-- keys a few hundred at a time, each slice in its own short transaction between two group
-- commits, whole games at a time, in game order. `keyed_game` is the last game whose keys of
-- the step are in: an event with `keyed_to < id <= keying_to` is keyed if and only if its
-- game is `<= keyed_game`. The last slice moves `keyed_to` up to `keying_to` and sets both
-- back to 0 (no step running).
--
-- Why: with 5,000 live games a step of 4,096 events writes ~1,000 leaves of the key tree in
-- one transaction, and every group commit queued behind it waited that long (the tail of the
-- move acknowledgement latency). A slice of 512 keys holds the writer ~1/8 as long; sorted by
-- game, the slices together write each leaf about as often as one step did.
--
-- Readers: `game_log`'s tail leaves out the events a running step has keyed already (they
-- are in the keyed part). A game's last seq (`MAX(seq)` over keys and tail) needs no change:
-- an event counted in both gives the same maximum.
ALTER TABLE game_event_watermark ADD COLUMN keying_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE game_event_watermark ADD COLUMN keyed_game INTEGER NOT NULL DEFAULT 0;

DROP VIEW game_log;
CREATE VIEW game_log AS
    SELECT k.game_id AS game_id, k.seq AS seq, e.kind AS kind, e.payload AS payload,
           e.at_ms AS at_ms, e.actor_id AS actor_id, e.reason AS reason
    FROM game_event_keys AS k CROSS JOIN game_events AS e ON e.id = k.event_id
    UNION ALL
    SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM game_events
    WHERE id > (SELECT keyed_to FROM game_event_watermark)
      AND (id > (SELECT keying_to FROM game_event_watermark)
           OR game_id > (SELECT keyed_game FROM game_event_watermark));
