DROP TABLE IF EXISTS membership_cards;
