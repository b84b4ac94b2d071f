package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Consent records (issue 30): what a member consented to, provably. A
// consent step of a definition is an accept step (ITC) or a step marked
// `consent: <kind>` (engine/definition/definition.go); when a registration commits, every
// consent given on its path ("1") is recorded with the exact text the
// member was shown, in their language, stored once per version
// (consent_texts: a changed text is a new row, so the records given under
// the old text keep it). RecordConsent records a consent given elsewhere
// (a SEPA mandate). docs/DATA-PROTECTION.md, "Consent records".

// ConsentKind says what a consent is for.
type ConsentKind string

// Kinds of consent a definition step may be marked with.
const (
	ConsentClubRules ConsentKind = "club_rules"
	ConsentPrivacy   ConsentKind = "privacy_notice"
	ConsentGuardian  ConsentKind = "guardian"
	ConsentMandate   ConsentKind = "mandate"
	// ConsentOther is any other consent, and an accept step's without a mark.
	ConsentOther ConsentKind = "other"
)

// ConsentKinds lists the valid consent kinds.
var ConsentKinds = []ConsentKind{ConsentClubRules, ConsentPrivacy, ConsentGuardian, ConsentMandate, ConsentOther}

// ValidConsentKind reports whether k is one of ConsentKinds.
func ValidConsentKind(k ConsentKind) bool { return slices.Contains(ConsentKinds, k) }

// ConsentKindOf is the consent kind of a step; false when it records none.
func ConsentKindOf(s *ProcessStep) (ConsentKind, bool) {
	if s.ConsentKind != nil && *s.ConsentKind != "" {
		return ConsentKind(*s.ConsentKind), true
	}
	if s.QuestionType == TypeAccept {
		return ConsentOther, true
	}
	return "", false
}

// ConsentText is one version of a consent's text as shown.
type ConsentText struct {
	bun.BaseModel  `bun:"table:consent_texts"`
	ID             int64     `bun:"id,pk,autoincrement"`
	OrganisationID int64     `bun:"organisation_id,notnull"`
	Hash           string    `bun:"hash,notnull"`
	Language       string    `bun:"language,notnull"`
	Body           string    `bun:"body,notnull"`
	CreatedAt      time.Time `bun:"created_at,notnull"`
}

// ConsentRecord is one consent given.
type ConsentRecord struct {
	bun.BaseModel  `bun:"table:consent_records"`
	ID             int64       `bun:"id,pk,autoincrement"`
	OrganisationID int64       `bun:"organisation_id,notnull"`
	PersonID       int64       `bun:"person_id,notnull"`
	InstanceID     *int64      `bun:"instance_id"`
	StepID         *int64      `bun:"step_id"`
	Source         string      `bun:"source,notnull"`
	Kind           ConsentKind `bun:"kind,notnull"`
	TextID         int64       `bun:"text_id,notnull"`
	Language       string      `bun:"language,notnull"`
	GivenAt        time.Time   `bun:"given_at,notnull"`
	CreatedAt      time.Time   `bun:"created_at,notnull"`
}

// consentHash is the version of a text: language and text, hashed.
func consentHash(language, text string) string {
	sum := sha256.Sum256([]byte(language + "\x00" + text))
	return hex.EncodeToString(sum[:])
}

// consentTextID stores a text once per organisation and version and
// returns its id.
func consentTextID(ctx context.Context, db bun.IDB, orgID int64, language, text string, now time.Time) (int64, error) {
	row := &ConsentText{OrganisationID: orgID, Hash: consentHash(language, text), Language: language, Body: text, CreatedAt: now.UTC()}
	if _, err := db.NewInsert().Model(row).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
		return 0, fmt.Errorf("store consent text: %w", err)
	}
	var id int64
	if err := db.NewSelect().Model((*ConsentText)(nil)).Column("id").Where("organisation_id = ? AND hash = ?", orgID, row.Hash).Scan(ctx, &id); err != nil {
		return 0, fmt.Errorf("load consent text: %w", err)
	}
	return id, nil
}

// ConsentGiven is a consent to record with RecordConsent.
type ConsentGiven struct {
	OrganisationID int64
	PersonID       int64
	// InstanceID and StepID are the registration and its step; nil for a
	// consent given elsewhere (a mandate).
	InstanceID, StepID *int64
	// Source names where it was given: "membership/terms", "mandate".
	Source   string
	Kind     ConsentKind
	Language string
	// Text is exactly what the person was shown.
	Text    string
	GivenAt time.Time
}

// RecordConsent records one consent in the caller's transaction: its text
// stored once per version. A consent of a registration's step recorded
// before under the same text is not recorded twice.
func RecordConsent(ctx context.Context, db bun.IDB, c ConsentGiven) error {
	if !ValidConsentKind(c.Kind) {
		return Errorf(CodeInvalid, "consent kind %q is not one of %s", c.Kind, ConsentKindNames())
	}
	if strings.TrimSpace(c.Text) == "" || c.PersonID == 0 || c.OrganisationID == 0 {
		return Errorf(CodeInvalid, "a consent needs its organisation, person and text")
	}
	now := c.GivenAt.UTC()
	textID, err := consentTextID(ctx, db, c.OrganisationID, c.Language, c.Text, now)
	if err != nil {
		return err
	}
	rec := &ConsentRecord{OrganisationID: c.OrganisationID, PersonID: c.PersonID, InstanceID: c.InstanceID, StepID: c.StepID,
		Source: c.Source, Kind: c.Kind, TextID: textID, Language: c.Language, GivenAt: now, CreatedAt: now}
	if _, err := db.NewInsert().Model(rec).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("record consent: %w", err)
	}
	return nil
}

func ConsentKindNames() string {
	names := make([]string, len(ConsentKinds))
	for i, k := range ConsentKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ConsentView is a consent record with its text, for the staff page and
// the export.
type ConsentView struct {
	ID         int64       `json:"id"`
	PersonID   int64       `json:"personId"`
	InstanceID *int64      `json:"registrationId,omitempty"`
	Source     string      `json:"source"`
	Kind       ConsentKind `json:"kind"`
	Language   string      `json:"language"`
	Text       string      `json:"text"`
	// TextVersion is the text's hash: the same text in the same language
	// is the same version wherever it was shown.
	TextVersion string    `json:"textVersion"`
	GivenAt     time.Time `json:"givenAt"`
}

// consentViews selects consent records with their texts, where where
// narrows them, oldest first.
func consentViews(ctx context.Context, db bun.IDB, where func(*bun.SelectQuery) *bun.SelectQuery) ([]ConsentView, error) {
	var out []ConsentView
	q := db.NewSelect().TableExpr("consent_records AS r").Join("JOIN consent_texts AS t ON t.id = r.text_id").
		ColumnExpr("r.id, r.person_id, r.instance_id, r.source, r.kind, r.language, t.body AS text, t.hash AS text_version, r.given_at")
	if err := where(q).OrderExpr("r.given_at, r.id").Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("load consent records: %w", err)
	}
	return out, nil
}

// RegistrationConsents are the consents recorded for a registration of
// the organisation, for its staff page.
func (s *Service) RegistrationConsents(ctx context.Context, orgID, instanceID int64) (_ []ConsentView, err error) {
	if !InScope(ctx, orgID) {
		return nil, Errorf(CodeNotFound, "organisation not found")
	}
	return consentViews(ctx, s.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("r.organisation_id = ? AND r.instance_id = ?", orgID, instanceID)
	})
}

// PersonConsents are the consents recorded for the persons of the
// organisation, for a person's or household's export; on db (a
// transaction's or the pool).
func PersonConsents(ctx context.Context, db bun.IDB, orgID int64, personIDs []int64) ([]ConsentView, error) {
	if len(personIDs) == 0 {
		return nil, nil
	}
	return consentViews(ctx, db, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("r.organisation_id = ? AND r.person_id IN (?)", orgID, bun.List(personIDs))
	})
}
