-- Fencing tokens (issue 23): several nodes share this database, and a Redis lease says which
-- node owns a game or a competition (a league's runner). The lease can be lost while its
-- holder still runs (a pause longer than the lease, a partition), so the database has the
-- last word: `fence_token` counts the claims of the row (0 = never claimed), `fence_node` is
-- the node of the latest claim (for operators; never compared). A claim bumps the token
-- (`UPDATE … SET fence_token = fence_token + 1`); an append that carries a token other than
-- the current one is refused and stores nothing.
--
-- Columns on the rows themselves, not a table of their own: every append already locks its
-- game's row (`FOR UPDATE`, to check `last_seq`) and every competition append updates its
-- competition's row, so the check reads a column of a row the transaction holds anyway (no
-- extra lock, no extra statement), and a claim's `UPDATE` of that row waits for an append in
-- flight to commit (or an append waits for the claim and then sees the new token). Keep in
-- step with ../sqlite/0008_fencing.sql.
ALTER TABLE games ADD COLUMN fence_token BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN fence_node TEXT;
ALTER TABLE competitions ADD COLUMN fence_token BIGINT NOT NULL DEFAULT 0;
ALTER TABLE competitions ADD COLUMN fence_node TEXT;
