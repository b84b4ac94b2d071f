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

// StaffListText holds those texts in English.
var StaffListText = StaffListTexts{
	Owed:              "Owed",
	DaysUnpaid:        "Days unpaid",
	SortBy:            "Sort by %s",
	SortDesc:          "%s, largest first",
	SortAsc:           "%s, smallest first",
	SortedDesc:        "sorted, largest first",
	SortedAsc:         "sorted, smallest first",
	OpenRegistration:  "Registration %s",
	NoPersonsYet:      "No persons chosen yet",
	DaysCount:         "%d days",
	MembersTitle:      "Members by membership type",
	MembersIntro:      "Memberships of the period: active (paid) and awaiting payment (registered, not paid yet).",
	MembersType:       "Membership type",
	MembersActive:     "Active",
	MembersPending:    "Awaiting payment",
	MembersTotal:      "Total",
	AgeTitle:          "Members by age group (active and awaiting payment)",
	AgeGroup:          "Age group",
	AwaitingLink:      "Who owes what: the open payments",
	ChartScale:        "Scale: 0 to %d a day",
	ChartDays:         "Days with activity",
	ChartDay:          "Day",
	ChartNoActivity:   "No registrations started and no payments received in these days.",
	ChartTableSummary: "The days with activity as a table",
	MenuCurrent:       "Menu: %s",
}

// staffListTextDE are those texts in German (formal: Sie).
var staffListTextDE = StaffListTexts{
	Owed:              "Offen",
	DaysUnpaid:        "Tage unbezahlt",
	SortBy:            "Nach %s sortieren",
	SortDesc:          "%s, größte zuerst",
	SortAsc:           "%s, kleinste zuerst",
	SortedDesc:        "sortiert, größte zuerst",
	SortedAsc:         "sortiert, kleinste zuerst",
	OpenRegistration:  "Anmeldung %s",
	NoPersonsYet:      "Noch keine Personen gewählt",
	DaysCount:         "%d Tage",
	MembersTitle:      "Mitglieder nach Mitgliedschaftsart",
	MembersIntro:      "Mitgliedschaften des Zeitraums: aktiv (bezahlt) und Zahlung ausstehend (angemeldet, noch nicht bezahlt).",
	MembersType:       "Mitgliedschaftsart",
	MembersActive:     "Aktiv",
	MembersPending:    "Zahlung ausstehend",
	MembersTotal:      "Gesamt",
	AgeTitle:          "Mitglieder nach Altersgruppe (aktiv und Zahlung ausstehend)",
	AgeGroup:          "Altersgruppe",
	AwaitingLink:      "Wer was schuldet: die offenen Zahlungen",
	ChartScale:        "Skala: 0 bis %d pro Tag",
	ChartDays:         "Tage mit Aktivität",
	ChartDay:          "Tag",
	ChartNoActivity:   "In diesen Tagen wurden keine Anmeldungen begonnen und keine Zahlungen erhalten.",
	ChartTableSummary: "Die Tage mit Aktivität als Tabelle",
	MenuCurrent:       "Menü: %s",
}

// staffListTextFR are those texts in French (vous).
var staffListTextFR = StaffListTexts{
	Owed:              "Dû",
	DaysUnpaid:        "Jours impayés",
	SortBy:            "Trier par %s",
	SortDesc:          "%s, le plus grand d’abord",
	SortAsc:           "%s, le plus petit d’abord",
	SortedDesc:        "trié, le plus grand d’abord",
	SortedAsc:         "trié, le plus petit d’abord",
	OpenRegistration:  "Inscription %s",
	NoPersonsYet:      "Aucune personne choisie pour l’instant",
	DaysCount:         "%d jours",
	MembersTitle:      "Membres par type d’adhésion",
	MembersIntro:      "Adhésions de la période : actives (payées) et en attente de paiement (inscrites, pas encore payées).",
	MembersType:       "Type d’adhésion",
	MembersActive:     "Actives",
	MembersPending:    "En attente de paiement",
	MembersTotal:      "Total",
	AgeTitle:          "Membres par tranche d’âge (actives et en attente de paiement)",
	AgeGroup:          "Tranche d’âge",
	AwaitingLink:      "Qui doit quoi : les paiements en attente",
	ChartScale:        "Échelle : 0 à %d par jour",
	ChartDays:         "Jours avec activité",
	ChartDay:          "Jour",
	ChartNoActivity:   "Aucune inscription commencée et aucun paiement reçu ces jours-ci.",
	ChartTableSummary: "Les jours avec activité sous forme de tableau",
	MenuCurrent:       "Menu : %s",
}

var staffListTexts = map[string]*StaffListTexts{"en": &StaffListText,
	"de": withEnglish(staffListTextDE, StaffListText), "fr": withEnglish(staffListTextFR, StaffListText)}

// StaffListTextIn is those texts in the language of ctx.
func StaffListTextIn(ctx context.Context) *StaffListTexts {
	if t, ok := staffListTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffListText
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
