-- Fencing tokens (issue 23), as in ../postgres/0004_fencing.sql: `fence_token` counts the
-- claims of a game or competition (0 = never claimed), `fence_node` names the node of the
-- latest claim. Several nodes need PostgreSQL, so on SQLite the tokens only keep the two
-- backends alike (one process may still claim, and its appends are checked the same way):
-- the writer reads a fenced game's token inside its `BEGIN IMMEDIATE` transaction, and a
-- claim is a write, so the two take turns on SQLite's write lock.
ALTER TABLE games ADD COLUMN fence_token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN fence_node TEXT;
ALTER TABLE competitions ADD COLUMN fence_token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE competitions ADD COLUMN fence_node TEXT;
