-- The events of the last few thousand moves are "live" (live = 1): they have their own small
-- unique (game_id, seq) index, and the writer moves them into the big one in bulk (one
-- `UPDATE ... SET live = 0`) once there are enough of them.
--
-- Why: SQLite's WAL writes whole pages on every commit. With one index over every event ever
-- stored, each game's latest entries sit in a leaf of their own, so a group commit of N games'
-- moves rewrote N index leaves (4 KiB each for a ~200-byte move). The live index holds only a
-- few thousand entries, packed in a few dozen leaves that every commit shares; the bulk move
-- then writes each game's leaf once for all its moves since the last one.
--
-- Readers see one log: the view `game_log` is both parts (each read by its own index); a
-- game's last seq is the larger of the two maxima.
ALTER TABLE game_events ADD COLUMN live INTEGER NOT NULL DEFAULT 0 CHECK (live IN (0, 1));
DROP INDEX game_events_by_game;
CREATE UNIQUE INDEX game_events_by_game ON game_events (game_id, seq) WHERE live = 0;
CREATE UNIQUE INDEX game_events_live ON game_events (game_id, seq) WHERE live = 1;
CREATE VIEW game_log AS
    SELECT id, game_id, seq, kind, payload, at_ms, actor_id, reason FROM game_events WHERE live = 0
    UNION ALL
    SELECT id, game_id, seq, kind, payload, at_ms, actor_id, reason FROM game_events WHERE live = 1;
