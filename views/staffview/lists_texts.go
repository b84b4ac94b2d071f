package staffview

import (
	"context"
	"fmt"

	"portal/views/lang"
)

// ListTexts are the texts the registrations list, the overview and
// the staff navigation added for the treasurer's season (issue 28): the
// amount owed and days unpaid, the members split by active and awaiting
// payment, the chart's scale and its table of busy days, and the compact
// menu on narrow screens.
type ListTexts struct {
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
func staffMenuLabel(ctx context.Context, nav []NavItem) string {
	for _, n := range nav {
		if n.Current {
			return fmt.Sprintf(ListTextIn(ctx).MenuCurrent, n.Label)
		}
	}
	return TextIn(ctx).Menu
}

// staffListTexts are the list pages' texts in every language: the group staff_lists of
// views/lang/locales/staff.<code>.json.
var staffListTexts = lang.LoadTexts[ListTexts]("staff_lists")

// ListText holds them in English.
var ListText = staffListTexts.For("en")

// ListTextIn is the list pages' texts in the language of ctx.
func ListTextIn(ctx context.Context) *ListTexts { return staffListTexts.In(ctx) }
