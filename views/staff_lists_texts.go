package views

import (
	"context"
	"fmt"

	"portal/views/lang"
)

// StaffListTexts are the texts the registrations list, the overview and
// the staff navigation added for the treasurer's season (issue 28): the
// amount owed and days unpaid, the members split by active and awaiting
// payment, the chart's scale and its table of busy days, and the compact
// menu on narrow screens.
type StaffListTexts struct {
	// Registrations list
	Owed, DaysUnpaid, SortBy, SortDesc, SortAsc, SortedDesc, SortedAsc, OpenRegistration, NoPersonsYet, DaysCount string
	// Overview
	MembersTitle, MembersIntro, MembersType, MembersActive, MembersPending, MembersTotal, AgeTitle, AgeGroup string
	AwaitingLink, ChartScale, ChartDays, ChartDay, ChartNoActivity, ChartTableSummary                        string
	// Navigation
	MenuCurrent string
}

// staffMenuLabel is the compact menu's summary: "Menu: " and the current
// page's entry, or "Menu" on a page that has none.
func staffMenuLabel(ctx context.Context, nav []StaffNavItem) string {
	for _, n := range nav {
		if n.Current {
			return fmt.Sprintf(StaffListTextIn(ctx).MenuCurrent, n.Label)
		}
	}
	return StaffTextIn(ctx).Menu
}

// staffListTexts are the list pages' texts in every language: the group staff_lists of
// views/lang/locales/staff.<code>.json.
var staffListTexts = lang.LoadTexts[StaffListTexts]("staff_lists")

// StaffListText holds them in English.
var StaffListText = staffListTexts.For("en")

// StaffListTextIn is the list pages' texts in the language of ctx.
func StaffListTextIn(ctx context.Context) *StaffListTexts { return staffListTexts.In(ctx) }
