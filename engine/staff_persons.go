package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// PersonWithKeys is a person of an organisation and the user keys that
// may register them.
type PersonWithKeys struct {
	Person   Person
	UserKeys []string
}

// PersonsPage lists an organisation's persons by name, limit a page from
// offset, with their user keys; more reports whether another page follows.
// A search narrows to the persons whose name contains it or whose e-mail
// or external id it is, whatever the case (search_text.go).
func (s *Service) PersonsPage(ctx context.Context, orgID int64, search string, offset, limit int) (_ []PersonWithKeys, more bool, err error) {
	defer ClassifyUnavailable(&err)
	var persons []Person
	sel := s.db.NewSelect().Model(&persons).Where("organisation_id = ?", orgID)
	if search = strings.TrimSpace(search); search != "" {
		folded := foldText(search)
		sel = sel.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			return w.Where(FoldSQL(s.db, "first_name || ' ' || last_name")+" LIKE ?"+LikeEscape, ContainsPattern(folded)).
				WhereOr(FoldSQL(s.db, "email")+" = ?", folded).
				WhereOr("external_id = ?", search)
		})
	}
	if err := sel.OrderExpr("last_name, first_name, id").Offset(int64(offset)).Limit(int64(limit + 1)).Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("list persons: %w", err)
	}
	if len(persons) > limit {
		persons, more = persons[:limit], true
	}
	if len(persons) == 0 {
		return nil, false, nil
	}
	ids := make([]int64, len(persons))
	for i, p := range persons {
		ids[i] = p.ID
	}
	var links []UserPerson
	if err := s.db.NewSelect().Model(&links).Where("organisation_id = ? AND person_id IN (?)", orgID, bun.List(ids)).
		Order("user_key").Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("list user keys: %w", err)
	}
	keys := map[int64][]string{}
	for _, l := range links {
		keys[l.PersonID] = append(keys[l.PersonID], l.UserKey)
	}
	out := make([]PersonWithKeys, len(persons))
	for i, p := range persons {
		out[i] = PersonWithKeys{Person: p, UserKeys: keys[p.ID]}
	}
	return out, more, nil
}
