-- The club's time zone (an IANA name, checked with Go's time.LoadLocation):
-- the day a capture or a credit is booked on when no booking date is
-- given is the club's "today" there, not UTC's (issue 37). Every club so
-- far is in Germany, Austria or Switzerland: Europe/Berlin's day is theirs.
ALTER TABLE organisations ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'Europe/Berlin';
