package message

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
)

// The language of a message is the one its member registered in: the
// registration's (ProcessInstance.Language) when the message is about one,
// else that of the household's last registration with the organisation
// that recorded one. "" leaves it to the organisation's default.

// RegistrationLanguage is the language registration instanceID was last
// used in, "" when it recorded none.
func RegistrationLanguage(ctx context.Context, db bun.IDB, instanceID int64) (string, error) {
	var codes []string
	if err := db.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("language").
		Where("id = ?", instanceID).Scan(ctx, &codes); err != nil {
		return "", fmt.Errorf("load the language of registration %d: %w", instanceID, err)
	}
	if len(codes) == 0 {
		return "", nil
	}
	return codes[0], nil
}

// HouseholdLanguage is the language of userKey's last registration with
// orgID that recorded one, "" when none did.
func HouseholdLanguage(ctx context.Context, db bun.IDB, orgID int64, userKey string) (string, error) {
	return lastLanguage(ctx, db.NewSelect().Model((*engine.ProcessInstance)(nil)).
		Where("organisation_id = ? AND user_key = ?", orgID, userKey))
}

// personLanguage is the language of the last registration with orgID, of
// any household personID belongs to, that recorded one.
func personLanguage(ctx context.Context, db bun.IDB, orgID, personID int64) (string, error) {
	households := db.NewSelect().Table("user_persons").Column("user_key").
		Where("organisation_id = ? AND person_id = ?", orgID, personID)
	return lastLanguage(ctx, db.NewSelect().Model((*engine.ProcessInstance)(nil)).
		Where("organisation_id = ? AND user_key IN (?)", orgID, households))
}

// lastLanguage is the language of the latest registration q selects that
// recorded one.
func lastLanguage(ctx context.Context, q *bun.SelectQuery) (string, error) {
	var codes []string
	if err := q.Column("language").Where("language <> ''").OrderExpr("updated_at DESC, id DESC").Limit(1).Scan(ctx, &codes); err != nil {
		return "", fmt.Errorf("load the household's language: %w", err)
	}
	if len(codes) == 0 {
		return "", nil
	}
	return codes[0], nil
}
