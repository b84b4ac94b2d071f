package engine_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/staff"
)

// TestStaffSearchFoldsAndEscapes: the registrations search matches names
// whatever their case, beyond ASCII, on both databases; a % or _ typed by
// staff matches itself, not any text.
func TestStaffSearchFoldsAndEscapes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		enginetest.SeedSeason(t, db, 6)
		ctx := context.Background()
		for key, name := range map[string][2]string{
			"bench-0": {"Jürgen", "Müller"},
			"bench-1": {"Anna", "Bell_Wood"},
			"bench-2": {"Zoë", "Rabatt 50%"},
			"bench-3": {"ÉLODIE", "ÇELIK"},
		} {
			if _, err := db.NewUpdate().Model((*engine.Person)(nil)).Set("first_name = ?, last_name = ?", name[0], name[1]).
				Where("email = ?", key+"@example.org").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		svc := engine.NewService(db, nil)
		for _, tc := range []struct {
			search string
			want   []string
		}{
			{"müller", []string{"bench-0"}},
			{"MÜLLER", []string{"bench-0"}},
			{"jürgen m", []string{"bench-0"}},
			{"élodie çelik", []string{"bench-3"}},
			{"Zoë", []string{"bench-2"}},
			{"_", []string{"bench-1"}},
			{"l_w", []string{"bench-1"}},
			{"%", []string{"bench-2"}},
			{"50%", []string{"bench-2"}},
			{"a%b", nil},
			{`\`, nil},
			{"BENCH-4@EXAMPLE.ORG", []string{"bench-4"}},
		} {
			page, err := staff.Of(svc).Registrations(ctx, staff.RegistrationQuery{OrganisationID: 1, Search: tc.search})
			if err != nil {
				t.Fatalf("%q: %v", tc.search, err)
			}
			var got []string
			for _, r := range page.Rows {
				got = append(got, r.UserKey)
			}
			if len(got) != len(tc.want) || page.Total != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("%q: %v (total %d), want %v", tc.search, got, page.Total, tc.want)
			}
		}
	})
}
