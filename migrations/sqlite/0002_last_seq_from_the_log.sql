-- SQLite no longer stores games.last_seq: a game's last seq is MAX(seq) of its events (the
-- unique (game_id, seq) index answers that), and the single group-commit writer remembers it
-- for the games it appends to. Updating the column with every append made each group commit
-- rewrite one page of `games` per game in the batch (SQLite's WAL writes whole pages). A
-- game row is written again only when the game finishes.
-- PostgreSQL keeps the column: several nodes' writers check it under row locks.
ALTER TABLE games DROP COLUMN last_seq;
