-- Organisations, persons and the user keys that may register them.
CREATE TABLE organisations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE persons (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    first_name      TEXT NOT NULL,
    last_name       TEXT NOT NULL,
    date_of_birth   DATE NOT NULL,
    email           TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX persons_organisation_idx ON persons (organisation_id);

-- user_persons says which persons a user key (from the hash link) may register.
CREATE TABLE user_persons (
    user_key        TEXT NOT NULL,
    person_id       BIGINT NOT NULL REFERENCES persons (id),
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    PRIMARY KEY (user_key, person_id)
);
CREATE INDEX user_persons_org_idx ON user_persons (user_key, organisation_id);

-- Process definitions are versioned data: a new import adds a version, instances stay on theirs.
CREATE TABLE process_definitions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    key             TEXT NOT NULL,
    name            TEXT NOT NULL,
    category        TEXT NOT NULL,
    version         INTEGER NOT NULL,
    active          BOOLEAN NOT NULL DEFAULT TRUE,
    content_hash    TEXT NOT NULL,
    created_at      TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (organisation_id, key, version)
);

CREATE TABLE process_steps (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    definition_id      BIGINT NOT NULL REFERENCES process_definitions (id),
    order_index        INTEGER NOT NULL,
    name               TEXT NOT NULL,
    question_text      TEXT NOT NULL,
    question_type      TEXT NOT NULL CHECK (question_type IN ('TXT','NUM','DRP','BCB','ITC','ONE','RDO','SEL')),
    required           BOOLEAN NOT NULL DEFAULT FALSE,
    format_pattern     TEXT,
    format_message     TEXT,
    min_value          REAL,
    max_value          REAL,
    person_min_age     INTEGER,
    person_max_age     INTEGER,
    price_code         TEXT,
    price_label        TEXT,
    price_answer       TEXT,
    price_amount_minor BIGINT,
    marks_transfer     BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (definition_id, order_index),
    UNIQUE (definition_id, name)
);

CREATE TABLE process_step_options (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    step_id     BIGINT NOT NULL REFERENCES process_steps (id),
    order_index INTEGER NOT NULL,
    value       TEXT NOT NULL,
    label       TEXT NOT NULL,
    UNIQUE (step_id, value)
);

CREATE TABLE membership_types (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    code            TEXT NOT NULL,
    name            TEXT NOT NULL,
    min_age         INTEGER,
    max_age         INTEGER,
    UNIQUE (organisation_id, code)
);

CREATE TABLE membership_periods (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    name            TEXT NOT NULL,
    start_date      DATE NOT NULL,
    end_date        DATE NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('open','closed')),
    currency        TEXT NOT NULL CHECK (length(currency) = 3),
    definition_key  TEXT NOT NULL,
    CHECK (end_date >= start_date)
);

-- Price rules are data: the engine evaluates them at commit and freezes the result onto order lines.
CREATE TABLE price_rules (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    period_id          BIGINT NOT NULL REFERENCES membership_periods (id),
    code               TEXT NOT NULL,
    kind               TEXT NOT NULL CHECK (kind IN ('MEMBERSHIP_FEE','MEMBER_TYPE','EARLY_BIRD','LATE_FEE','FAMILY','ADMIN_FEE')),
    label              TEXT NOT NULL,
    membership_type_id BIGINT REFERENCES membership_types (id),
    member_type        TEXT CHECK (member_type IN ('NEW','RENEWAL','TRANSFER')),
    min_persons        INTEGER,
    valid_from         TIMESTAMP,
    valid_until        TIMESTAMP,
    amount_minor       BIGINT,
    percent_bp         INTEGER,
    CHECK ((amount_minor IS NULL) <> (percent_bp IS NULL)),
    UNIQUE (period_id, code)
);

CREATE TABLE process_instances (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    definition_id       BIGINT NOT NULL REFERENCES process_definitions (id),
    definition_key      TEXT NOT NULL,
    current_step_id     BIGINT REFERENCES process_steps (id),
    status              TEXT NOT NULL,
    start_time          TIMESTAMP NOT NULL,
    end_time            TIMESTAMP,
    related_entity_type TEXT NOT NULL,
    related_entity_id   BIGINT NOT NULL,
    organisation_id     BIGINT NOT NULL REFERENCES organisations (id),
    user_key            TEXT NOT NULL,
    selected_persons    TEXT NOT NULL DEFAULT '[]',
    version             BIGINT NOT NULL DEFAULT 1,
    updated_at          TIMESTAMP NOT NULL
);
-- At most one unfinished registration per user key, period and definition.
CREATE UNIQUE INDEX process_instances_one_open
    ON process_instances (user_key, related_entity_type, related_entity_id, definition_key)
    WHERE status NOT IN ('COMPLETED','CANCELLED','FAILED');

CREATE TABLE process_data (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL REFERENCES process_instances (id),
    step_id     BIGINT REFERENCES process_steps (id),
    person_id   BIGINT REFERENCES persons (id),
    data_key    TEXT NOT NULL,
    data_value  TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
-- step_id 0 is not a row: person selection is stored with step_id NULL, so the key uses COALESCE.
CREATE UNIQUE INDEX process_data_answer_key
    ON process_data (instance_id, COALESCE(step_id, 0), person_id, data_key);

CREATE TABLE memberships (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    person_id          BIGINT NOT NULL REFERENCES persons (id),
    period_id          BIGINT NOT NULL REFERENCES membership_periods (id),
    membership_type_id BIGINT NOT NULL REFERENCES membership_types (id),
    member_type        TEXT NOT NULL CHECK (member_type IN ('NEW','RENEWAL','TRANSFER')),
    status             TEXT NOT NULL CHECK (status IN ('Pending Payment','Active','Cancelled')),
    process_instance_id BIGINT REFERENCES process_instances (id),
    created_at         TIMESTAMP NOT NULL,
    activated_at       TIMESTAMP
);
-- One pending-or-active membership per person and period.
CREATE UNIQUE INDEX memberships_one_live
    ON memberships (person_id, period_id) WHERE status IN ('Pending Payment','Active');

CREATE TABLE orders (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    process_instance_id BIGINT NOT NULL REFERENCES process_instances (id),
    organisation_id     BIGINT NOT NULL REFERENCES organisations (id),
    period_id           BIGINT NOT NULL REFERENCES membership_periods (id),
    user_key            TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('Unpaid','Paid','Cancelled')),
    total_minor         BIGINT NOT NULL CHECK (total_minor >= 0),
    currency            TEXT NOT NULL CHECK (length(currency) = 3),
    created_at          TIMESTAMP NOT NULL,
    paid_at             TIMESTAMP
);
-- One live order per committed process instance (a reset cancels the old one).
CREATE UNIQUE INDEX orders_one_per_instance
    ON orders (process_instance_id) WHERE status <> 'Cancelled';

CREATE TABLE order_lines (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id     BIGINT NOT NULL REFERENCES orders (id),
    line_no      INTEGER NOT NULL,
    person_id    BIGINT REFERENCES persons (id),
    kind         TEXT NOT NULL,
    code         TEXT NOT NULL,
    description  TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency     TEXT NOT NULL CHECK (length(currency) = 3),
    UNIQUE (order_id, line_no)
);

-- Each payment attempt has its own reference, so a return for an old attempt is recognisable.
CREATE TABLE payments (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id       BIGINT NOT NULL REFERENCES orders (id),
    provider       TEXT NOT NULL,
    reference      TEXT NOT NULL UNIQUE,
    amount_minor   BIGINT NOT NULL,
    currency       TEXT NOT NULL CHECK (length(currency) = 3),
    status         TEXT NOT NULL CHECK (status IN ('PENDING','SUCCEEDED','FAILED','CANCELLED')),
    transaction_id TEXT,
    payment_url    TEXT NOT NULL DEFAULT '',
    created_at     TIMESTAMP NOT NULL,
    updated_at     TIMESTAMP NOT NULL
);
CREATE INDEX payments_order_idx ON payments (order_id);
CREATE UNIQUE INDEX payments_transaction_unique ON payments (provider, transaction_id) WHERE transaction_id IS NOT NULL;

-- Messages to send, written in the same transaction as the change they announce.
CREATE TABLE outbox_messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    dedup_key  TEXT NOT NULL UNIQUE,
    recipient  TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    sent_at    TIMESTAMP
);

-- Server-side sessions: the cookie holds a random token, the table only its SHA-256.
CREATE TABLE sessions (
    id_hash      TEXT PRIMARY KEY,
    user_key     TEXT NOT NULL DEFAULT '',
    data         TEXT NOT NULL DEFAULT '{}',
    created_at   TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL
);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);
