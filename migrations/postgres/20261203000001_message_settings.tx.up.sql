-- An organisation's message settings: when its reminders go out and how
-- its e-mail is signed. A NULL column means the portal's default, so that
-- a default changed later reaches every organisation that never chose.
CREATE TABLE organisation_message_settings (
    organisation_id      BIGINT PRIMARY KEY REFERENCES organisations (id),
    unpaid_reminder_days TEXT,    -- days after the commit, comma-separated: 3,10
    expiry_reminder_days INTEGER, -- days before a period ends
    resume_after_hours   INTEGER, -- idle hours before SUSPENDED and the resume link
    renewal_lead_days    INTEGER, -- days before the ending period's end that renewal prompts may start
    sender_name          TEXT,    -- the From name; NULL: the organisation's name
    reply_to             TEXT     -- Reply-To address; NULL: the organisation's contact address
);

-- Recipients who asked for no more messages of a category (reminders,
-- renewals) from an organisation: the one-click unsubscribe (RFC 8058).
-- Transactional messages (confirmations, payment links) are not affected.
CREATE TABLE message_opt_outs (
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    address         TEXT NOT NULL, -- lower case
    category        TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (organisation_id, address, category)
);
