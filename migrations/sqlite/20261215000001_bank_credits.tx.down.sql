DROP TABLE bank_credits;
