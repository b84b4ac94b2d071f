package staff

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"portal/engine"
)

// PersonWithKeys is a person of an organisation and the user keys that
// may register them.
type PersonWithKeys struct {
	Person   engine.Person
	UserKeys []string
}

// PersonsPage lists an organisation's persons by name, limit a page from
// offset, with their user keys; more reports whether another page follows.
// A search narrows to the persons whose name contains it or whose e-mail
// or external id it is, whatever the case (engine/search_text.go).
func (s *Service) PersonsPage(ctx context.Context, orgID int64, search string, offset, limit int) (_ []PersonWithKeys, more bool, err error) {
	var persons []engine.Person
	sel := s.DB().NewSelect().Model(&persons).Where("organisation_id = ?", orgID)
	if search = strings.TrimSpace(search); search != "" {
		folded := engine.FoldText(search)
		sel = sel.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			return w.Where(engine.FoldSQL(s.DB(), "first_name || ' ' || last_name")+" LIKE ?"+engine.LikeEscape, engine.ContainsPattern(folded)).
				WhereOr(engine.FoldSQL(s.DB(), "email")+" = ?", folded).
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
	var links []engine.UserPerson
	if err := s.DB().NewSelect().Model(&links).Where("organisation_id = ? AND person_id IN (?)", orgID, bun.List(ids)).
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
