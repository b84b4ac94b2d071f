package views

import (
	"context"

	"portal/views/lang"
)

// StaffOpenPaymentTexts are the texts of the open payments page: who
// still owes money, and the payment link sent again to many at once.
type StaffOpenPaymentTexts struct {
	NavOpenPayments, Title, Intro, Period, All, MinDays, MinReminders, Sort, SortOldest, SortNewest, SortOwed,
	SortReminders, Apply, Export, Empty, Count, Select, Registration, Household, Owed, OwedOf, RF,
	Days, Reminders, LastMessage, None, Resend, ResendHint, NoneSelected, Sent string
}

// StaffOpenPaymentText holds those texts in English.
var StaffOpenPaymentText = StaffOpenPaymentTexts{
	NavOpenPayments: "Open payments",
	Title:           "Open payments",
	Intro:           "Every registration whose order is not paid yet, with what is still owed after the parts that arrived.",
	Period:          "Period",
	All:             "All",
	MinDays:         "Unpaid for more than (days)",
	MinReminders:    "Reminded at least (times)",
	Sort:            "Sort by",
	SortOldest:      "Longest unpaid first",
	SortNewest:      "Most recent first",
	SortOwed:        "Largest amount owed first",
	SortReminders:   "Most reminders first",
	Apply:           "Apply",
	Export:          "Download CSV",
	Empty:           "No unpaid orders match.",
	Count:           "%d unpaid orders",
	Select:          "Select registration %s",
	Registration:    "No.",
	Household:       "Household",
	Owed:            "Owed",
	OwedOf:          "of %s",
	RF:              "RF reference",
	Days:            "Days unpaid",
	Reminders:       "Reminders",
	LastMessage:     "Last message",
	None:            "–",
	Resend:          "Send the payment link again",
	ResendHint:      "To the selected registrations; one that was paid or cancelled meanwhile is skipped.",
	NoneSelected:    "Select at least one registration to send the payment link to.",
	Sent:            "Payment link sent again: %d; skipped (no longer waiting for payment): %d.",
}

// staffOpenPaymentTextDE are those texts in German (formal: Sie).
var staffOpenPaymentTextDE = StaffOpenPaymentTexts{
	NavOpenPayments: "Offene Zahlungen",
	Title:           "Offene Zahlungen",
	Intro:           "Alle Anmeldungen, deren Bestellung noch nicht bezahlt ist, mit dem Betrag, der nach bereits eingegangenen Teilzahlungen noch offen ist.",
	Period:          "Zeitraum",
	All:             "Alle",
	MinDays:         "Unbezahlt seit mehr als (Tagen)",
	MinReminders:    "Mindestens erinnert (mal)",
	Sort:            "Sortieren nach",
	SortOldest:      "Am längsten unbezahlt zuerst",
	SortNewest:      "Neueste zuerst",
	SortOwed:        "Höchster offener Betrag zuerst",
	SortReminders:   "Meiste Erinnerungen zuerst",
	Apply:           "Anwenden",
	Export:          "CSV herunterladen",
	Empty:           "Keine unbezahlten Bestellungen gefunden.",
	Count:           "%d unbezahlte Bestellungen",
	Select:          "Anmeldung %s auswählen",
	Registration:    "Nr.",
	Household:       "Haushalt",
	Owed:            "Offen",
	OwedOf:          "von %s",
	RF:              "RF-Referenz",
	Days:            "Tage unbezahlt",
	Reminders:       "Erinnerungen",
	LastMessage:     "Letzte Nachricht",
	None:            "–",
	Resend:          "Zahlungslink erneut senden",
	ResendHint:      "An die ausgewählten Anmeldungen; eine inzwischen bezahlte oder stornierte wird übersprungen.",
	NoneSelected:    "Wählen Sie mindestens eine Anmeldung aus, an die der Zahlungslink gesendet werden soll.",
	Sent:            "Zahlungslink erneut gesendet: %d; übersprungen (keine Zahlung mehr offen): %d.",
}

// staffOpenPaymentTextFR are those texts in French (formal: vous).
var staffOpenPaymentTextFR = StaffOpenPaymentTexts{
	NavOpenPayments: "Paiements en attente",
	Title:           "Paiements en attente",
	Intro:           "Toutes les inscriptions dont la commande n’est pas encore payée, avec le montant restant dû après les paiements partiels reçus.",
	Period:          "Période",
	All:             "Toutes",
	MinDays:         "Impayée depuis plus de (jours)",
	MinReminders:    "Relancée au moins (fois)",
	Sort:            "Trier par",
	SortOldest:      "Impayées depuis le plus longtemps d’abord",
	SortNewest:      "Plus récentes d’abord",
	SortOwed:        "Montant dû le plus élevé d’abord",
	SortReminders:   "Plus de relances d’abord",
	Apply:           "Appliquer",
	Export:          "Télécharger le CSV",
	Empty:           "Aucune commande impayée ne correspond.",
	Count:           "%d commandes impayées",
	Select:          "Sélectionner l’inscription %s",
	Registration:    "N°",
	Household:       "Foyer",
	Owed:            "Dû",
	OwedOf:          "sur %s",
	RF:              "Référence RF",
	Days:            "Jours impayés",
	Reminders:       "Relances",
	LastMessage:     "Dernier message",
	None:            "–",
	Resend:          "Renvoyer le lien de paiement",
	ResendHint:      "Aux inscriptions sélectionnées ; celles payées ou annulées entre-temps sont ignorées.",
	NoneSelected:    "Sélectionnez au moins une inscription à laquelle renvoyer le lien de paiement.",
	Sent:            "Lien de paiement renvoyé : %d ; ignorées (plus en attente de paiement) : %d.",
}

var staffOpenPaymentTexts = map[string]*StaffOpenPaymentTexts{"en": &StaffOpenPaymentText,
	"de": withEnglish(staffOpenPaymentTextDE, StaffOpenPaymentText), "fr": withEnglish(staffOpenPaymentTextFR, StaffOpenPaymentText)}

// StaffOpenPaymentTextIn is the open payments page's texts in the
// language of ctx.
func StaffOpenPaymentTextIn(ctx context.Context) *StaffOpenPaymentTexts {
	if t, ok := staffOpenPaymentTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffOpenPaymentText
}
