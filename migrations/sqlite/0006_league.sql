-- The league service (issue 19) and explicit game starts (issue 17). Keep in step with
-- ../postgres/0002_league.sql: same tables, columns and meaning.

-- How a game's clock starts (the server's name for it: `now`, `scheduled`, `players`), the
-- lateness limit (art. 21; 0 = none of its own) and an idempotency key (`league/7/r3/t2/b1/g0`):
-- the league service creates a board's game by key, so a restart that creates it again finds
-- the stored one instead of a second game. Games from before read back as `now`, 0 and no key.
-- Adding a column with a constant default rewrites no row.
ALTER TABLE games ADD COLUMN start_mode TEXT NOT NULL DEFAULT 'now';
ALTER TABLE games ADD COLUMN lateness_limit_ms INTEGER NOT NULL DEFAULT 0
    CHECK (lateness_limit_ms >= 0);
ALTER TABLE games ADD COLUMN key TEXT;
-- Keys are unique where present (NULLs are distinct).
CREATE UNIQUE INDEX games_by_key ON games (key);

-- A competition (a league season): the owner of one append-only log.
CREATE TABLE competitions (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    created_by    INTEGER REFERENCES principals (id),
    -- Highest seq of its log; an append continues at last_seq + 1.
    last_seq      INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0)
);

-- Each competition's gap-free log, seq 1, 2, 3, ...: every lineup submission, result and
-- arbiter decision, with who, when and why. Appended in transactions of their own (not the
-- games' group commit): the log is small and written rarely. Clustered by competition.
CREATE TABLE competition_events (
    competition_id INTEGER NOT NULL REFERENCES competitions (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    kind           TEXT    NOT NULL,
    -- JSON text, opaque to the store.
    payload        TEXT    NOT NULL,
    at_ms          INTEGER NOT NULL,
    actor_id       INTEGER REFERENCES principals (id),
    reason         TEXT,
    PRIMARY KEY (competition_id, seq)
) WITHOUT ROWID;
