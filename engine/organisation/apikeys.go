package organisation

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// API keys authenticate the admin API (/api/admin/...). Each belongs to one
// organisation and has a scope; only a SHA-256 of the key is stored, so a
// leaked table yields no usable key. The key is shown once, when made.

// APIKeyScope is what a key may do.
type APIKeyScope string

// API key scopes.
const (
	ScopeRead  APIKeyScope = "read"  // GET only
	ScopeWrite APIKeyScope = "write" // everything, reads included
)

// APIKeyPrefix starts every key, so that a key found in a log or a
// repository is recognisable (secret scanners match on it).
const APIKeyPrefix = "ptl_"

// APIKey is a stored key, without the key itself.
type APIKey struct {
	bun.BaseModel  `bun:"table:api_keys"`
	ID             int64       `bun:"id,pk,autoincrement"`
	OrganisationID int64       `bun:"organisation_id,notnull"`
	Name           string      `bun:"name,notnull"`
	Prefix         string      `bun:"prefix,notnull"` // the key's first characters, to tell keys apart
	KeyHash        string      `bun:"key_hash,notnull"`
	Scope          APIKeyScope `bun:"scope,notnull"`
	CreatedAt      time.Time   `bun:"created_at,notnull"`
	LastUsedAt     *time.Time  `bun:"last_used_at"`
	RevokedAt      *time.Time  `bun:"revoked_at"`
}

// Allows reports whether the key may make a change (write) or only read.
func (k *APIKey) Allows(write bool) bool { return !write || k.Scope == ScopeWrite }

func hashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateAPIKey makes a key for an organisation and returns it in clear,
// the only time it is available.
func (s *Service) CreateAPIKey(ctx context.Context, orgID int64, name string, scope APIKeyScope) (key string, k *APIKey, err error) {
	return s.createAPIKey(ctx, nil, orgID, name, scope)
}

// StaffCreateAPIKey is CreateAPIKey by a staff member (the setup page),
// audited in its transaction ("api_key.create", without the key).
func (s *Service) StaffCreateAPIKey(ctx context.Context, actor engine.Actor, orgID int64, name string, scope APIKeyScope) (key string, k *APIKey, err error) {
	return s.createAPIKey(ctx, &actor, orgID, name, scope)
}

func (s *Service) createAPIKey(ctx context.Context, actor *engine.Actor, orgID int64, name string, scope APIKeyScope) (key string, k *APIKey, err error) {
	name = strings.TrimSpace(name)
	var fields []engine.FieldError
	if name == "" || !engine.Printable(name, 100) {
		fields = append(fields, engine.FieldError{Field: "name", Message: "must be 1 to 100 printable characters"})
	}
	if scope != ScopeRead && scope != ScopeWrite {
		fields = append(fields, engine.FieldError{Field: "scope", Message: "must be read or write"})
	}
	if len(fields) > 0 {
		return "", nil, &engine.Error{Code: engine.CodeValidation, Message: "The API key is not valid.", Fields: fields}
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw)
	k = &APIKey{OrganisationID: orgID, Name: name, Prefix: key[:len(APIKeyPrefix)+6], KeyHash: hashAPIKey(key),
		Scope: scope, CreatedAt: s.Clock()}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := engine.LoadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(k).Exec(ctx); err != nil {
			return fmt.Errorf("store api key: %w", err)
		}
		if actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "api_key.create", TargetType: "api_key",
			TargetID: fmt.Sprint(k.ID), After: map[string]any{"name": k.Name, "prefix": k.Prefix, "scope": string(k.Scope)}})
	})
	if err != nil {
		return "", nil, err
	}
	return key, k, nil
}

// APIKeys lists an organisation's keys, revoked ones included, newest first.
func (s *Service) APIKeys(ctx context.Context, orgID int64) (keys []APIKey, err error) {
	if err := s.DB().NewSelect().Model(&keys).Where("organisation_id = ?", orgID).Order("id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey ends a key of an organisation at once; revoking a revoked
// key changes nothing.
func (s *Service) RevokeAPIKey(ctx context.Context, orgID, id int64) (err error) {
	return s.revokeAPIKey(ctx, nil, orgID, id)
}

// StaffRevokeAPIKey is RevokeAPIKey by a staff member, audited in its
// transaction ("api_key.revoke").
func (s *Service) StaffRevokeAPIKey(ctx context.Context, actor engine.Actor, orgID, id int64) error {
	return s.revokeAPIKey(ctx, &actor, orgID, id)
}

func (s *Service) revokeAPIKey(ctx context.Context, actor *engine.Actor, orgID, id int64) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*APIKey)(nil)).Set("revoked_at = COALESCE(revoked_at, ?)", s.Clock()).
			Where("id = ? AND organisation_id = ?", id, orgID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return engine.Errorf(engine.CodeNotFound, "API key not found")
		}
		if actor == nil {
			return nil
		}
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "api_key.revoke", TargetType: "api_key",
			TargetID: fmt.Sprint(id), After: map[string]any{"revoked": true}})
	})
}

// apiKeyTouchEvery bounds how often a key's last use is written: a busy
// integration would otherwise write a row on every call.
const apiKeyTouchEvery = time.Minute

// AuthenticateAPIKey returns the live key for key, or an unauthorised
// error for one that is unknown, malformed or revoked (alike: which of
// them is not revealed).
func (s *Service) AuthenticateAPIKey(ctx context.Context, key string) (k *APIKey, err error) {
	denied := engine.Errorf(engine.CodeUnauthorized, "The API key is not valid.")
	if !strings.HasPrefix(key, APIKeyPrefix) || len(key) > 200 {
		return nil, denied
	}
	k = new(APIKey)
	err = s.DB().NewSelect().Model(k).Where("key_hash = ? AND revoked_at IS NULL", hashAPIKey(key)).Scan(ctx)
	if err != nil {
		if engine.ErrorCode(engine.NotFoundOr(err, "api key")) == engine.CodeNotFound {
			return nil, denied
		}
		return nil, fmt.Errorf("load api key: %w", err)
	}
	now := s.Clock()
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > apiKeyTouchEvery {
		if _, err := s.DB().NewUpdate().Model((*APIKey)(nil)).Set("last_used_at = ?", now).Where("id = ?", k.ID).Exec(ctx); err != nil {
			s.Log.Warn("api key: last use not recorded", "key", k.ID, "err", err)
		}
	}
	return k, nil
}
