package session_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine/dbtest"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func testKeyring(t testing.TB, keys ...[]byte) *session.Keyring {
	t.Helper()
	if len(keys) == 0 {
		keys = [][]byte{randomKey()}
	}
	kr, err := session.NewKeyring(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func randomKey() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}

func errorsIsUnavailable(err error) bool { return errors.Is(err, session.ErrUnavailable) }

func TestParseKeyring(t *testing.T) {
	key := randomKey()
	tests := []struct {
		name  string
		value string
		ok    bool
	}{
		{"hex", hex.EncodeToString(key), true},
		{"base64", base64.StdEncoding.EncodeToString(key), true},
		{"base64url raw", base64.RawURLEncoding.EncodeToString(key), true},
		{"generated", session.GenerateKey(), true},
		{"two keys", session.GenerateKey() + "," + session.GenerateKey(), true},
		{"empty", "", false},
		{"empty second", session.GenerateKey() + ",", false},
		{"passphrase", "correct horse battery staple", false},
		{"16 bytes", base64.StdEncoding.EncodeToString(key[:16]), false},
		{"64 bytes", base64.StdEncoding.EncodeToString(append(key, key...)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := session.ParseKeyring(tt.value)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseKeyring(%q) error = %v, want ok %v", tt.value, err, tt.ok)
			}
		})
	}
}

func TestSealer(t *testing.T) {
	k1, k2 := randomKey(), randomKey()
	sealer := testKeyring(t, k1).Sealer("test")
	sealed := sealer.Seal([]byte("secret value"), []byte("aad-1"))
	if strings.Contains(sealed, "secret") {
		t.Fatalf("sealed text %q shows the plaintext", sealed)
	}
	if sealed == sealer.Seal([]byte("secret value"), []byte("aad-1")) {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	got, err := sealer.Open(sealed, []byte("aad-1"))
	if err != nil || string(got) != "secret value" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	fails := map[string]func() ([]byte, error){
		"other aad":     func() ([]byte, error) { return sealer.Open(sealed, []byte("aad-2")) },
		"other purpose": func() ([]byte, error) { return testKeyring(t, k1).Sealer("other").Open(sealed, []byte("aad-1")) },
		"other key":     func() ([]byte, error) { return testKeyring(t, k2).Sealer("test").Open(sealed, []byte("aad-1")) },
		"altered": func() ([]byte, error) {
			b := []byte(sealed)
			b[len(b)-5] ^= 1
			return sealer.Open(string(b), []byte("aad-1"))
		},
		"truncated": func() ([]byte, error) { return sealer.Open(sealed[:10], []byte("aad-1")) },
		"plain":     func() ([]byte, error) { return sealer.Open(`{"a":"b"}`, []byte("aad-1")) },
	}
	for name, open := range fails {
		if _, err := open(); !errors.Is(err, session.ErrUnsealable) {
			t.Errorf("%s: Open error = %v, want ErrUnsealable", name, err)
		}
	}
	rotated := testKeyring(t, k2, k1).Sealer("test")
	if got, err := rotated.Open(sealed, []byte("aad-1")); err != nil || string(got) != "secret value" {
		t.Fatalf("a keyring with the old key second cannot open old values: %q, %v", got, err)
	}
}

func TestEncryptedDBStore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		kr := testKeyring(t)
		if db.Dialect().Name() == dialect.SQLite {
			// The codec is the same for every dialect, and a fresh
			// PostgreSQL schema per case is slow: the conformance suite
			// runs encrypted on SQLite here, and on Redis.
			t.Run("conformance", func(t *testing.T) {
				sessiontest.RunStoreConformance(t, func(t *testing.T) session.Store {
					return session.NewDBStore(dbtest.SQLite(t), session.Encrypted(kr))
				})
			})
		}
		t.Run("data column is ciphertext bound to the row", func(t *testing.T) {
			ctx := context.Background()
			st := session.NewDBStore(db, session.Encrypted(kr))
			jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJl"
			a := newSession("user-1", map[string]string{session.AttrBackendJWT: jwt})
			b := newSession("user-2", map[string]string{session.AttrBackendJWT: "other"})
			for _, s := range []*session.Session{a, b} {
				if err := st.Create(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			var data []string
			if err := db.NewSelect().Table("sessions").Column("data").Scan(ctx, &data); err != nil {
				t.Fatal(err)
			}
			for _, d := range data {
				if strings.Contains(d, jwt) || strings.Contains(d, session.AttrBackendJWT) {
					t.Fatalf("data column %q shows session contents", d)
				}
			}
			// Copying a's data onto b's row must not give b a's token.
			if _, err := db.NewRaw("UPDATE sessions SET data = (SELECT data FROM sessions WHERE user_key = 'user-1') WHERE user_key = 'user-2'").Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Load(ctx, b.ID); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Load of a row with another row's data: error = %v, want ErrNotFound", err)
			}
			// Another key cannot read the sessions: they are gone, not an outage.
			if _, err := session.NewDBStore(db, session.Encrypted(testKeyring(t))).Load(ctx, a.ID); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Load with another key: error = %v, want ErrNotFound", err)
			}
			if _, err := session.NewDBStore(db).Load(ctx, a.ID); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Load without a key: error = %v, want ErrNotFound", err)
			}
		})
		t.Run("plain rows are refused once a key is set", func(t *testing.T) {
			ctx := context.Background()
			s := newSession("user-3", map[string]string{session.AttrBackendJWT: "planted"})
			if err := session.NewDBStore(db).Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			if _, err := session.NewDBStore(db, session.Encrypted(kr)).Load(ctx, s.ID); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Load of a plain row with a key: error = %v, want ErrNotFound", err)
			}
		})
	})
}

func TestDBStoreSharedConformance(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		// These cases use fresh ids and count nothing, so one database serves them all.
		sessiontest.RunSharedStoreConformance(t, func(t *testing.T) sessiontest.SharedStore {
			return session.NewDBStore(db)
		})
	})
}

func newSession(userKey string, values map[string]string) *session.Session {
	now := time.Now().UTC()
	return &session.Session{ID: sessiontest.NewID(), UserKey: userKey, Values: values,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(30 * time.Minute)}
}
