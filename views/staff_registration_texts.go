package views

import (
	"context"

	"portal/views/lang"
)

// StaffRegistrationTexts are the texts of one registration's page that
// make it read as a record: the household with its memberships, answers
// as the member saw them, the payment history in words, the capture's
// result and the questions before an action.
type StaffRegistrationTexts struct {
	// Household
	HouseholdIntro, Born, NoMembership string
	// Answers
	Yes, No, NotAsked, ArchivedKept, ArchivedRemoved string
	// Order
	TransferRefHint string
	// History
	History, HistoryIntro, HistoryEmpty, Reference,
	ProviderBank, ProviderCard, ProviderTest,
	AttemptStarted, EvReceived, EvPart, EvConfirmed, EvFailed, EvCancelled, EvPending, EvOpen, EvChecked, EvReturned,
	Booked, RecordedBy, RefundDue, RefundDone,
	MsgConfirmation, MsgPaymentLink, MsgReminder, MsgTransferRequest, MsgWelcome, MsgExpiry, MsgRenewal, MsgResume,
	MsgRefund, MsgDebitReturned, MsgMandate, MsgOther, MsgTo, MsgToRegistration string
	// Capture: what the treasurer's capture did, in words
	CapturedComplete, CapturedPart, CapturedSecond, CaptureOpen, CaptureOpenHint string
	// Questions before an action: what the buttons do
	CancelYes, CancelNo, ResetYes, ResetNo, RefundYes, RefundNo string
}

// StaffRegistrationText holds those texts in English.
var StaffRegistrationText = StaffRegistrationTexts{
	HouseholdIntro: "The persons of this registration, with the memberships it asked for.",
	Born:           "born %s",
	NoMembership:   "no membership yet",

	Yes:             "Yes",
	No:              "No",
	NotAsked:        "Not asked (did not apply)",
	ArchivedKept:    "On %s, %d answers of %d persons were moved to the archive. They are kept there and no longer shown here; the order and memberships are unchanged.",
	ArchivedRemoved: "On %s, %d answers of %d persons were deleted, as the club's data retention asks. The order and memberships are unchanged.",

	TransferRefHint: "Members write this reference on their bank transfer.",

	History:      "Payments and messages",
	HistoryIntro: "Everything that happened to the payment and every message sent, oldest first.",
	HistoryEmpty: "Nothing yet: the registration has not been confirmed.",
	Reference:    "reference %s",
	ProviderBank: "bank transfer",
	ProviderCard: "card",
	ProviderTest: "test payment",

	AttemptStarted: "Payment by %s asked for: %s",
	EvReceived:     "Bank transfer received: %s",
	EvPart:         "Part of the amount received: %s",
	EvConfirmed:    "Payment confirmed: %s",
	EvFailed:       "Payment failed",
	EvReturned:     "Direct debit returned by the bank: %s",
	EvCancelled:    "Payment cancelled",
	EvPending:      "Payment being processed",
	EvOpen:         "Not paid yet",
	EvChecked:      "checked with the payment provider",
	Booked:         "booked on %s",
	RecordedBy:     "recorded by %s",
	RefundDue:      "Owed back to the member: %s (listed to refund on the payments page)",
	RefundDone:     "Refunded to the member: %s",

	MsgConfirmation:    "Confirmation",
	MsgPaymentLink:     "Payment link",
	MsgReminder:        "Payment reminder",
	MsgTransferRequest: "Bank transfer details",
	MsgWelcome:         "Welcome",
	MsgExpiry:          "Membership expiry reminder",
	MsgRenewal:         "Renewal invitation",
	MsgResume:          "Link to continue the registration",
	MsgRefund:          "Refund",
	MsgDebitReturned:   "Returned direct debit",
	MsgMandate:         "Direct debit mandate and pre-notification",
	MsgOther:           "Message",
	MsgTo:              "to %s",
	MsgToRegistration:  "to the addresses of the registration",

	CapturedComplete: "The bank transfer is recorded: %s is paid in full and the registration is complete.",
	CapturedPart:     "Part of the amount arrived: %s so far; %s is still owed. The registration stays open until the rest arrives.",
	CapturedSecond:   "This registration was paid already: %s is owed back to the member and listed to refund on the payments page.",
	CaptureOpen:      "Record a transfer",
	CaptureOpenHint:  "Record the bank transfer of registration %s",

	CancelYes: "Cancel registration",
	CancelNo:  "Keep registration",
	ResetYes:  "Reset registration",
	ResetNo:   "Keep the answers",
	RefundYes: "Refund payment",
	RefundNo:  "Keep the payment",
}

// staffRegistrationTextDE are those texts in German (formal: Sie).
var staffRegistrationTextDE = StaffRegistrationTexts{
	HouseholdIntro: "Die Personen dieser Anmeldung mit den beantragten Mitgliedschaften.",
	Born:           "geboren am %s",
	NoMembership:   "noch keine Mitgliedschaft",

	Yes:             "Ja",
	No:              "Nein",
	NotAsked:        "Nicht gefragt (traf nicht zu)",
	ArchivedKept:    "Am %s wurden %d Antworten von %d Personen ins Archiv verschoben. Sie bleiben dort erhalten und werden hier nicht mehr gezeigt; Bestellung und Mitgliedschaften sind unverändert.",
	ArchivedRemoved: "Am %s wurden %d Antworten von %d Personen gelöscht, wie es die Aufbewahrungsregeln des Vereins verlangen. Bestellung und Mitgliedschaften sind unverändert.",

	TransferRefHint: "Diese Referenz geben Mitglieder bei ihrer Überweisung an.",

	History:      "Zahlungen und Nachrichten",
	HistoryIntro: "Alles, was mit der Zahlung geschah, und jede gesendete Nachricht, die älteste zuerst.",
	HistoryEmpty: "Noch nichts: Die Anmeldung wurde noch nicht bestätigt.",
	Reference:    "Referenz %s",
	ProviderBank: "Überweisung",
	ProviderCard: "Karte",
	ProviderTest: "Testzahlung",

	AttemptStarted: "Zahlung per %s angefordert: %s",
	EvReceived:     "Überweisung eingegangen: %s",
	EvPart:         "Teilbetrag eingegangen: %s",
	EvConfirmed:    "Zahlung bestätigt: %s",
	EvFailed:       "Zahlung fehlgeschlagen",
	EvReturned:     "Lastschrift von der Bank zurückgegeben: %s",
	EvCancelled:    "Zahlung abgebrochen",
	EvPending:      "Zahlung in Bearbeitung",
	EvOpen:         "Noch nicht bezahlt",
	EvChecked:      "beim Zahlungsanbieter abgefragt",
	Booked:         "gebucht am %s",
	RecordedBy:     "erfasst von %s",
	RefundDue:      "An das Mitglied zurückzuzahlen: %s (auf der Zahlungsseite zur Rückzahlung aufgeführt)",
	RefundDone:     "An das Mitglied zurückgezahlt: %s",

	MsgConfirmation:    "Bestätigung",
	MsgPaymentLink:     "Zahlungslink",
	MsgReminder:        "Zahlungserinnerung",
	MsgTransferRequest: "Überweisungsdaten",
	MsgWelcome:         "Willkommen",
	MsgExpiry:          "Erinnerung an das Ende der Mitgliedschaft",
	MsgRenewal:         "Einladung zur Verlängerung",
	MsgResume:          "Link zum Fortsetzen der Anmeldung",
	MsgRefund:          "Rückzahlung",
	MsgDebitReturned:   "Rücklastschrift",
	MsgMandate:         "Lastschriftmandat und Vorabankündigung",
	MsgOther:           "Nachricht",
	MsgTo:              "an %s",
	MsgToRegistration:  "an die Adressen der Anmeldung",

	CapturedComplete: "Die Überweisung ist erfasst: %s sind vollständig bezahlt, die Anmeldung ist abgeschlossen.",
	CapturedPart:     "Ein Teil ist eingegangen: bisher %s; noch offen sind %s. Die Anmeldung bleibt offen, bis der Rest eingeht.",
	CapturedSecond:   "Diese Anmeldung war bereits bezahlt: %s sind an das Mitglied zurückzuzahlen und auf der Zahlungsseite zur Rückzahlung aufgeführt.",
	CaptureOpen:      "Überweisung erfassen",
	CaptureOpenHint:  "Die Überweisung der Anmeldung %s erfassen",

	CancelYes: "Anmeldung stornieren",
	CancelNo:  "Anmeldung behalten",
	ResetYes:  "Anmeldung zurücksetzen",
	ResetNo:   "Antworten behalten",
	RefundYes: "Zahlung zurückerstatten",
	RefundNo:  "Zahlung behalten",
}

// staffRegistrationTextFR are those texts in French.
var staffRegistrationTextFR = StaffRegistrationTexts{
	HouseholdIntro: "Les personnes de cette inscription, avec les adhésions demandées.",
	Born:           "né·e le %s",
	NoMembership:   "pas encore d’adhésion",

	Yes:             "Oui",
	No:              "Non",
	NotAsked:        "Non demandé (ne s’appliquait pas)",
	ArchivedKept:    "Le %s, %d réponses de %d personnes ont été archivées. Elles y sont conservées et ne sont plus affichées ici ; la commande et les adhésions sont inchangées.",
	ArchivedRemoved: "Le %s, %d réponses de %d personnes ont été supprimées, comme le demandent les règles de conservation du club. La commande et les adhésions sont inchangées.",

	TransferRefHint: "Les membres indiquent cette référence sur leur virement.",

	History:      "Paiements et messages",
	HistoryIntro: "Tout ce qui est arrivé au paiement et chaque message envoyé, du plus ancien au plus récent.",
	HistoryEmpty: "Rien pour l’instant : l’inscription n’a pas encore été confirmée.",
	Reference:    "référence %s",
	ProviderBank: "virement",
	ProviderCard: "carte",
	ProviderTest: "paiement de test",

	AttemptStarted: "Paiement par %s demandé : %s",
	EvReceived:     "Virement reçu : %s",
	EvPart:         "Partie du montant reçue : %s",
	EvConfirmed:    "Paiement confirmé : %s",
	EvFailed:       "Paiement échoué",
	EvReturned:     "Prélèvement rejeté par la banque : %s",
	EvCancelled:    "Paiement annulé",
	EvPending:      "Paiement en cours de traitement",
	EvOpen:         "Pas encore payé",
	EvChecked:      "vérifié auprès du prestataire de paiement",
	Booked:         "comptabilisé le %s",
	RecordedBy:     "saisi par %s",
	RefundDue:      "À rembourser au membre : %s (listé à rembourser sur la page des paiements)",
	RefundDone:     "Remboursé au membre : %s",

	MsgConfirmation:    "Confirmation",
	MsgPaymentLink:     "Lien de paiement",
	MsgReminder:        "Relance de paiement",
	MsgTransferRequest: "Coordonnées du virement",
	MsgWelcome:         "Bienvenue",
	MsgExpiry:          "Rappel de fin d’adhésion",
	MsgRenewal:         "Invitation au renouvellement",
	MsgResume:          "Lien pour reprendre l’inscription",
	MsgRefund:          "Remboursement",
	MsgDebitReturned:   "Prélèvement rejeté",
	MsgMandate:         "Mandat de prélèvement et notification préalable",
	MsgOther:           "Message",
	MsgTo:              "à %s",
	MsgToRegistration:  "aux adresses de l’inscription",

	CapturedComplete: "Le virement est enregistré : %s sont payés en entier et l’inscription est terminée.",
	CapturedPart:     "Une partie est arrivée : %s jusqu’ici ; il reste %s à payer. L’inscription reste ouverte jusqu’à l’arrivée du reste.",
	CapturedSecond:   "Cette inscription était déjà payée : %s sont à rembourser au membre et listés à rembourser sur la page des paiements.",
	CaptureOpen:      "Enregistrer un virement",
	CaptureOpenHint:  "Enregistrer le virement de l’inscription %s",

	CancelYes: "Annuler l’inscription",
	CancelNo:  "Garder l’inscription",
	ResetYes:  "Réinitialiser l’inscription",
	ResetNo:   "Garder les réponses",
	RefundYes: "Rembourser le paiement",
	RefundNo:  "Garder le paiement",
}

var staffRegistrationTexts = map[string]*StaffRegistrationTexts{"en": &StaffRegistrationText,
	"de": withEnglish(staffRegistrationTextDE, StaffRegistrationText), "fr": withEnglish(staffRegistrationTextFR, StaffRegistrationText)}

// StaffRegistrationTextIn is the registration page's texts in the
// language of ctx.
func StaffRegistrationTextIn(ctx context.Context) *StaffRegistrationTexts {
	if t, ok := staffRegistrationTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffRegistrationText
}
