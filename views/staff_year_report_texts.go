package views

import (
	"context"

	"portal/views/lang"
)

// StaffYearReportTexts are the texts of the year-end report: the staff
// page, its CSV and its PDF.
type StaffYearReportTexts struct {
	NavYearReport, Title, Intro, Period, Show, CSV, PDF, Generated, Dates string
	// Sections and their columns.
	Summary, ByType, ByRule, ByMethod, MembersByType, MembersByAge, Item, Count, Amount, Lines, Payments,
	Received, Refunded, OwedBack, Net, Active, Pending, Members, Total string
	// Summary rows.
	PaidOrders, PartPayments, ReceivedAll, LessRefunded, LessOwedBack, Income, Outstanding string
	// Labels of rows that are not a type or rule of the club.
	WholeOrder, Unitemised, MethodBankTransfer, MethodStripe, MethodTest string
	// CSV headings.
	CSVSection, CSVItem, CSVMeasure, CSVValue, CSVCurrency string
	// Notes say what the figures mean.
	NotePeriod, NoteIncome, NotePartial, NoteOutstanding, NoteMembers string
}

// StaffYearReportText holds those texts in English.
var StaffYearReportText = StaffYearReportTexts{
	NavYearReport: "Year-end report",
	Title:         "Year-end report",
	Intro:         "The period's money and members for the general meeting: as a page, a spreadsheet (CSV) and a printable PDF, all with the same figures.",
	Period:        "Period",
	Show:          "Show",
	CSV:           "Download CSV",
	PDF:           "Download PDF",
	Generated:     "Figures as of %s",
	Dates:         "%s – %s",
	Summary:       "Summary",
	ByType:        "Paid orders by membership type",
	ByRule:        "Paid orders by price rule",
	ByMethod:      "Money by payment method",
	MembersByType: "Members by membership type",
	MembersByAge:  "Members by age group (at the period's start)",
	Item:          "Item",
	Count:         "Count",
	Amount:        "Amount",
	Lines:         "Lines",
	Payments:      "Payments",
	Received:      "Received",
	Refunded:      "Refunded",
	OwedBack:      "Owed back",
	Net:           "Kept",
	Active:        "Active (paid)",
	Pending:       "Pending payment",
	Members:       "Total",
	Total:         "Total",
	PaidOrders:    "Paid orders",
	PartPayments:  "Part payments of orders not yet paid",
	ReceivedAll:   "Money received",
	LessRefunded:  "less refunded",
	LessOwedBack:  "less owed back (refunds due)",
	Income:        "Income",
	Outstanding:   "Outstanding (open orders)",
	WholeOrder:    "For the whole order (fees)",
	Unitemised:    "Not itemised",

	MethodBankTransfer: "Bank transfer",
	MethodStripe:       "Card and online (Stripe)",
	MethodTest:         "Test payments",
	CSVSection:         "section",
	CSVItem:            "item",
	CSVMeasure:         "measure",
	CSVValue:           "value",
	CSVCurrency:        "currency",
	NotePeriod:         "All figures belong to the membership period of the order, whatever the day the money arrived.",
	NoteIncome:         "Income is the money received for the period's orders less what was refunded and what is owed back; paid orders are the totals of the orders paid in full, split by membership type and by price rule.",
	NotePartial:        "Part payments of an order not yet paid count as received and lower what it owes; once the order is paid they are part of its payment and are not counted twice.",
	NoteOutstanding:    "Outstanding is what the orders waiting for payment still owe after their part payments, as on the open payments list.",
	NoteMembers:        "Members are the period's memberships: active ones are paid, pending ones wait for payment.",
}

// staffYearReportTextDE are those texts in German (formal: Sie).
var staffYearReportTextDE = StaffYearReportTexts{
	NavYearReport: "Jahresbericht",
	Title:         "Jahresbericht",
	Intro:         "Einnahmen und Mitglieder des Zeitraums für die Mitgliederversammlung: als Seite, Tabelle (CSV) und druckbares PDF, überall mit denselben Zahlen.",
	Period:        "Zeitraum",
	Show:          "Anzeigen",
	CSV:           "CSV herunterladen",
	PDF:           "PDF herunterladen",
	Generated:     "Stand: %s",
	Dates:         "%s – %s",
	Summary:       "Übersicht",
	ByType:        "Bezahlte Bestellungen nach Mitgliedschaftsart",
	ByRule:        "Bezahlte Bestellungen nach Preisregel",
	ByMethod:      "Geld nach Zahlungsart",
	MembersByType: "Mitglieder nach Mitgliedschaftsart",
	MembersByAge:  "Mitglieder nach Altersgruppe (zu Beginn des Zeitraums)",
	Item:          "Posten",
	Count:         "Anzahl",
	Amount:        "Betrag",
	Lines:         "Positionen",
	Payments:      "Zahlungen",
	Received:      "Eingegangen",
	Refunded:      "Erstattet",
	OwedBack:      "Zu erstatten",
	Net:           "Verbleibt",
	Active:        "Aktiv (bezahlt)",
	Pending:       "Zahlung ausstehend",
	Members:       "Gesamt",
	Total:         "Summe",
	PaidOrders:    "Bezahlte Bestellungen",
	PartPayments:  "Teilzahlungen noch nicht bezahlter Bestellungen",
	ReceivedAll:   "Eingegangenes Geld",
	LessRefunded:  "abzüglich erstattet",
	LessOwedBack:  "abzüglich zu erstatten",
	Income:        "Einnahmen",
	Outstanding:   "Ausstehend (offene Bestellungen)",
	WholeOrder:    "Für die ganze Bestellung (Gebühren)",
	Unitemised:    "Ohne Positionen",

	MethodBankTransfer: "Überweisung",
	MethodStripe:       "Karte und online (Stripe)",
	MethodTest:         "Testzahlungen",
	CSVSection:         "Abschnitt",
	CSVItem:            "Posten",
	CSVMeasure:         "Größe",
	CSVValue:           "Wert",
	CSVCurrency:        "Währung",
	NotePeriod:         "Alle Zahlen gehören zum Mitgliedschaftszeitraum der Bestellung, unabhängig vom Tag des Zahlungseingangs.",
	NoteIncome:         "Einnahmen sind das für die Bestellungen des Zeitraums eingegangene Geld abzüglich Erstattungen und noch zu erstattender Beträge; bezahlte Bestellungen sind die Summen der vollständig bezahlten Bestellungen, aufgeteilt nach Mitgliedschaftsart und Preisregel.",
	NotePartial:        "Teilzahlungen einer noch nicht bezahlten Bestellung zählen als eingegangen und mindern den offenen Betrag; ist die Bestellung bezahlt, sind sie Teil ihrer Zahlung und werden nicht doppelt gezählt.",
	NoteOutstanding:    "Ausstehend ist, was die auf Zahlung wartenden Bestellungen nach Teilzahlungen noch schulden, wie in der Liste der offenen Zahlungen.",
	NoteMembers:        "Mitglieder sind die Mitgliedschaften des Zeitraums: aktive sind bezahlt, ausstehende warten auf die Zahlung.",
}

// staffYearReportTextFR are those texts in French (formal: vous).
var staffYearReportTextFR = StaffYearReportTexts{
	NavYearReport: "Rapport annuel",
	Title:         "Rapport annuel",
	Intro:         "L’argent et les membres de la période pour l’assemblée générale : en page, en tableur (CSV) et en PDF imprimable, avec les mêmes chiffres.",
	Period:        "Période",
	Show:          "Afficher",
	CSV:           "Télécharger le CSV",
	PDF:           "Télécharger le PDF",
	Generated:     "Chiffres au %s",
	Dates:         "%s – %s",
	Summary:       "Synthèse",
	ByType:        "Commandes payées par type d’adhésion",
	ByRule:        "Commandes payées par règle de prix",
	ByMethod:      "Argent par moyen de paiement",
	MembersByType: "Membres par type d’adhésion",
	MembersByAge:  "Membres par tranche d’âge (au début de la période)",
	Item:          "Poste",
	Count:         "Nombre",
	Amount:        "Montant",
	Lines:         "Lignes",
	Payments:      "Paiements",
	Received:      "Reçu",
	Refunded:      "Remboursé",
	OwedBack:      "À rembourser",
	Net:           "Conservé",
	Active:        "Actifs (payés)",
	Pending:       "En attente de paiement",
	Members:       "Total",
	Total:         "Total",
	PaidOrders:    "Commandes payées",
	PartPayments:  "Paiements partiels de commandes pas encore payées",
	ReceivedAll:   "Argent reçu",
	LessRefunded:  "moins remboursé",
	LessOwedBack:  "moins à rembourser",
	Income:        "Recettes",
	Outstanding:   "Restant dû (commandes ouvertes)",
	WholeOrder:    "Pour toute la commande (frais)",
	Unitemised:    "Sans lignes",

	MethodBankTransfer: "Virement",
	MethodStripe:       "Carte et en ligne (Stripe)",
	MethodTest:         "Paiements de test",
	CSVSection:         "section",
	CSVItem:            "poste",
	CSVMeasure:         "mesure",
	CSVValue:           "valeur",
	CSVCurrency:        "devise",
	NotePeriod:         "Tous les chiffres appartiennent à la période d’adhésion de la commande, quel que soit le jour où l’argent est arrivé.",
	NoteIncome:         "Les recettes sont l’argent reçu pour les commandes de la période, moins les remboursements faits et dus ; les commandes payées sont les totaux des commandes payées en entier, répartis par type d’adhésion et par règle de prix.",
	NotePartial:        "Les paiements partiels d’une commande pas encore payée comptent comme reçus et réduisent ce qu’elle doit ; une fois la commande payée, ils font partie de son paiement et ne sont pas comptés deux fois.",
	NoteOutstanding:    "Le restant dû est ce que les commandes en attente de paiement doivent encore après leurs paiements partiels, comme dans la liste des paiements en attente.",
	NoteMembers:        "Les membres sont les adhésions de la période : actives si payées, en attente sinon.",
}

var staffYearReportTexts = map[string]*StaffYearReportTexts{"en": &StaffYearReportText,
	"de": withEnglish(staffYearReportTextDE, StaffYearReportText), "fr": withEnglish(staffYearReportTextFR, StaffYearReportText)}

// StaffYearReportTextIn is the year-end report's texts in the language
// of ctx.
func StaffYearReportTextIn(ctx context.Context) *StaffYearReportTexts {
	if t, ok := staffYearReportTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffYearReportText
}
