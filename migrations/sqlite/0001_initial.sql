-- chuhe schema, SQLite flavour. Times are Unix milliseconds (INTEGER); ids are INTEGER rowids.
-- Keep in step with ../postgres/0001_initial.sql: same tables, columns and meaning.

-- Players, arbiters and organisers.
CREATE TABLE principals (
    id            INTEGER PRIMARY KEY,
    role          TEXT    NOT NULL CHECK (role IN ('player', 'arbiter', 'organiser')),
    name          TEXT    NOT NULL,
    rating        INTEGER,
    created_at_ms INTEGER NOT NULL,
    UNIQUE (role, name)
);

-- Bearer tokens: only the SHA-256 of the opaque token is stored.
CREATE TABLE tokens (
    id            INTEGER PRIMARY KEY,
    hash          BLOB    NOT NULL UNIQUE CHECK (length(hash) = 32),
    principal_id  INTEGER NOT NULL REFERENCES principals (id),
    role          TEXT    NOT NULL CHECK (role IN ('player', 'arbiter', 'organiser')),
    label         TEXT,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER
);
CREATE INDEX tokens_by_principal ON tokens (principal_id);

CREATE TABLE games (
    id                 INTEGER PRIMARY KEY,
    red_id             INTEGER NOT NULL REFERENCES principals (id),
    black_id           INTEGER NOT NULL REFERENCES principals (id),
    time_control       TEXT    NOT NULL,
    ruleset            TEXT    NOT NULL,
    start_fen          TEXT    NOT NULL,
    delay_moves        INTEGER NOT NULL DEFAULT 0 CHECK (delay_moves >= 0),
    delay_ms           INTEGER NOT NULL DEFAULT 0 CHECK (delay_ms >= 0),
    event              TEXT,
    round              TEXT,
    board              INTEGER,
    scheduled_start_ms INTEGER,
    created_at_ms      INTEGER NOT NULL,
    -- Highest event seq stored; the next append must start at last_seq + 1.
    last_seq           INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
    result             TEXT,
    reason             TEXT,
    finished_at_ms     INTEGER,
    CHECK ((result IS NULL) = (finished_at_ms IS NULL)),
    CHECK (red_id <> black_id)
);
CREATE INDEX games_unfinished ON games (id) WHERE finished_at_ms IS NULL;
CREATE INDEX games_finished ON games (finished_at_ms) WHERE finished_at_ms IS NOT NULL;

-- The gap-free event log of each game: seq 1, 2, 3, ...
CREATE TABLE game_events (
    game_id  INTEGER NOT NULL REFERENCES games (id),
    seq      INTEGER NOT NULL CHECK (seq >= 1),
    kind     TEXT    NOT NULL,
    payload  BLOB    NOT NULL,
    at_ms    INTEGER NOT NULL,
    -- Who caused the event (an arbiter, a player) and why, for the audit trail. No foreign key:
    -- a group-commit batch must not fail as a whole for one bad id; the server writes ids of
    -- authenticated principals, and principals are never deleted.
    actor_id INTEGER,
    reason   TEXT,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;

-- Administrative actions outside any game (players created, tokens issued or revoked, ...).
CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY,
    at_ms    INTEGER NOT NULL,
    actor_id INTEGER REFERENCES principals (id),
    action   TEXT    NOT NULL,
    subject  TEXT,
    reason   TEXT
);
