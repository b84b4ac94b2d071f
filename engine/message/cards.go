package message

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// MembershipCard holds the verification token of a membership's card.
type MembershipCard struct {
	bun.BaseModel `bun:"table:membership_cards"`
	MembershipID  int64     `bun:"membership_id,pk"`
	Token         string    `bun:"token,notnull"`
	CreatedAt     time.Time `bun:"created_at,notnull"`
}

// CardTokens returns the card token of each membership, creating the
// missing ones: 32 random bytes, so a card cannot be guessed from another.
// A token once made stays, so a card sent again shows the same QR code.
func CardTokens(ctx context.Context, db bun.IDB, membershipIDs []int64, now time.Time) (map[int64]string, error) {
	out := map[int64]string{}
	if len(membershipIDs) == 0 {
		return out, nil
	}
	cards := make([]MembershipCard, len(membershipIDs))
	for i, id := range membershipIDs {
		b := make([]byte, 32)
		rand.Read(b)
		cards[i] = MembershipCard{MembershipID: id, Token: base64.RawURLEncoding.EncodeToString(b), CreatedAt: now.UTC()}
	}
	if _, err := db.NewInsert().Model(&cards).On("CONFLICT (membership_id) DO NOTHING").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create card tokens: %w", err)
	}
	var stored []MembershipCard
	if err := db.NewSelect().Model(&stored).Where("membership_id IN (?)", bun.List(membershipIDs)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load card tokens: %w", err)
	}
	for _, c := range stored {
		out[c.MembershipID] = c.Token
	}
	return out, nil
}

// CardCheck is what a card's verification shows: nothing beyond the name,
// the type, the period and whether the membership is valid today.
type CardCheck struct {
	Name       string
	Type       string
	Period     string
	StartDate  time.Time
	EndDate    time.Time
	Valid      bool
	Status     engine.MembershipStatus
	NotStarted bool // active, but the period has not begun
	Expired    bool // active, but the period has ended
}

// VerifyCard resolves a card token; an unknown token is not found.
func (s *Service) VerifyCard(ctx context.Context, token string) (_ *CardCheck, err error) {
	if len(token) < 20 || len(token) > 64 {
		return nil, engine.Errorf(engine.CodeNotFound, "card not found")
	}
	var row struct {
		FirstName string                  `bun:"first_name"`
		LastName  string                  `bun:"last_name"`
		Type      string                  `bun:"type_name"`
		TypeTexts engine.Texts            `bun:"type_texts"`
		Period    string                  `bun:"period_name"`
		PeriodTx  engine.Texts            `bun:"period_texts"`
		Start     time.Time               `bun:"start_date"`
		End       time.Time               `bun:"end_date"`
		Status    engine.MembershipStatus `bun:"status"`
		OrgID     int64                   `bun:"organisation_id"`
	}
	err = s.DB().NewSelect().TableExpr("membership_cards AS c").
		ColumnExpr("p.first_name, p.last_name, t.name AS type_name, t.name_texts AS type_texts, mp.name AS period_name, mp.name_texts AS period_texts, mp.start_date, mp.end_date, m.status, mp.organisation_id").
		Join("JOIN memberships AS m ON m.id = c.membership_id").
		Join("JOIN persons AS p ON p.id = m.person_id").
		Join("JOIN membership_types AS t ON t.id = m.membership_type_id").
		Join("JOIN membership_periods AS mp ON mp.id = m.period_id").
		Where("c.token = ?", token).Limit(1).Scan(ctx, &row)
	if err != nil {
		return nil, engine.NotFoundOr(err, "card")
	}
	if !engine.InScope(ctx, row.OrgID) {
		// Another club's address (or /o/ prefix) never shows this club's
		// member under its own branding: the card is none there.
		return nil, engine.Errorf(engine.CodeNotFound, "card not found")
	}
	today := s.Clock().Truncate(24 * time.Hour)
	// The checking page names the type and period in its reader's language.
	lang := engine.LanguageOf(ctx)
	c := &CardCheck{Name: row.FirstName + " " + row.LastName, Type: row.TypeTexts.In(lang, row.Type), Period: row.PeriodTx.In(lang, row.Period),
		StartDate: row.Start, EndDate: row.End, Status: row.Status}
	active := row.Status == engine.MembershipActive
	c.NotStarted = active && today.Before(row.Start)
	c.Expired = active && today.After(row.End)
	c.Valid = active && !c.NotStarted && !c.Expired
	return c, nil
}
