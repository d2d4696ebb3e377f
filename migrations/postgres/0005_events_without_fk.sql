-- The event log's rows name their game without a foreign key. The key's check ran once per
-- inserted event (a trigger with a locking `SELECT … FOR KEY SHARE` of the game's row) although
-- every append already locks the row itself (`FOR UPDATE`, to check `last_seq` and the fencing
-- token) and inserts only events of games it locked; it took about a fifth of PostgreSQL's CPU
-- per move. Games are never deleted. What the key guaranteed, the append statement checks: an
-- append whose events name a game it did not lock writes nothing (`SQL_KNOWN` in
-- crates/store/src/postgres.rs; the locked path plans appends only against the rows it
-- locked). SQLite's group-commit writer appends with foreign keys off likewise.
ALTER TABLE game_events DROP CONSTRAINT IF EXISTS game_events_game_id_fkey;
