-- Membership cards: the token of a card's QR code, which /verify/{token}
-- resolves for a club volunteer. Random and unguessable (not derived from
-- ids), one per membership, created with the card.
CREATE TABLE membership_cards (
    membership_id BIGINT PRIMARY KEY REFERENCES memberships (id) ON DELETE CASCADE,
    token         TEXT NOT NULL UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL
);
