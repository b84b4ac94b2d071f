package views

import (
	"context"

	"portal/views/lang"
)

// StaffDebitTexts are the texts of the treasurer's direct-debit
// collection runs (issue 29): the list, the form that prepares a run, one
// run with its debits and actions, and the two collection settings of the
// setup page's payments section.
type StaffDebitTexts struct {
	NavDebits, Title, Intro, PaymentsLink, PaymentsLinkHint string
	// Preparing a run.
	PrepareTitle, Until, UntilHint, Prepare, NoCreditor, NothingDue, NothingDueInRun, BadUntil string
	// The list of runs.
	RunsTitle, Empty, Run, Created, By, UntilCol, Count, Total, Version, Status, Open string
	StatusPrepared, StatusSent, StatusCancelled, SentAt, CancelledAt                  string
	// One run.
	RunTitle, RunIntro, DebitsTitle, EndToEnd, Registration, Mandate, Holder, Account, Amount, Due, Sequence,
	SeqFirst, SeqRecurring, DebitStatus, DebitInRun, DebitCollected, DebitReturned, DebitCancelled, Amended, MandateEnded, NoDebits, Back string
	// The run's actions and their confirmations.
	ActionsTitle, Download, DownloadHint, MarkSent, MarkSentHint, Cancel, CancelHint,
	SentQuestion, SentDetail, SentYes, SentNo, CancelQuestion, CancelDetail, CancelYes, CancelNo string
	// What an action did (after the redirect) and why it could not.
	DonePrepared, DoneSent, DoneSentProblems, DoneAlreadySent, DoneCancelled, DoneAlreadyCancelled, IsSent, IsCancelled string
	// The setup page's collection settings.
	SetupCollectionDay, SetupCollectionDayHint, SetupReturnFee, SetupReturnFeeHint string
}

// StaffDebitText holds those texts in English.
var StaffDebitText = StaffDebitTexts{
	NavDebits:        "Direct debits",
	Title:            "Direct debit collection runs",
	Intro:            "A collection run gathers the club's due direct debits into one file for the club's bank. Download the file, upload it in your online banking, then mark the run as sent: that settles its payments.",
	PaymentsLink:     "Direct debit collection runs",
	PaymentsLinkHint: "Prepare the file of due direct debits for the club's bank, and mark it as sent.",

	PrepareTitle:    "Prepare a collection run",
	Until:           "Gather debits due by",
	UntilHint:       "Debits due on or before this date are gathered; each is collected on its own due date.",
	Prepare:         "Prepare the run",
	NoCreditor:      "This club does not collect by direct debit yet: an administrator enters its Creditor Identifier in the payment settings of the setup page.",
	NothingDue:      "No direct debit is due on or before %s. No run was prepared.",
	NothingDueInRun: "Debits already in a prepared run are not gathered again: send or cancel that run first.",
	BadUntil:        "Enter the date as a valid date (year, month, day).",

	RunsTitle:       "Collection runs",
	Empty:           "No collection run yet.",
	Run:             "Run",
	Created:         "Created",
	By:              "by %s",
	UntilCol:        "Due by",
	Count:           "Debits",
	Total:           "Total",
	Version:         "File version",
	Status:          "Status",
	Open:            "Open run %s",
	StatusPrepared:  "Prepared, not sent yet",
	StatusSent:      "Sent to the bank",
	StatusCancelled: "Cancelled",
	SentAt:          "sent on %s",
	CancelledAt:     "cancelled on %s",

	RunTitle:       "Collection run %s",
	RunIntro:       "Prepared %s by %s, with the debits due by %s. Debits: %d, total %s, file version %s.",
	DebitsTitle:    "Debits",
	EndToEnd:       "End-to-end id",
	Registration:   "Registration",
	Mandate:        "Mandate reference",
	Holder:         "Account holder",
	Account:        "Account",
	Amount:         "Amount",
	Due:            "Collected on",
	Sequence:       "Sequence",
	SeqFirst:       "First debit under the mandate (FRST)",
	SeqRecurring:   "Recurring debit (RCUR)",
	DebitStatus:    "Status",
	DebitInRun:     "In this run",
	DebitCollected: "Collected",
	DebitReturned:  "Returned by the bank",
	DebitCancelled: "Withdrawn with the run",
	Amended:        "The account changed since the last debit; the file states it.",
	MandateEnded:   "The mandate ended after this run was prepared: do not send this file; cancel the run and prepare it again without this debit.",
	NoDebits:       "This run has no debits.",
	Back:           "All collection runs",

	ActionsTitle:   "What to do with this run",
	Download:       "Download the file",
	DownloadHint:   "The same file every time, to upload in the bank's online banking.",
	MarkSent:       "Mark as sent to the bank",
	MarkSentHint:   "Once the bank has the file: its payments are then settled as paid.",
	Cancel:         "Cancel this run",
	CancelHint:     "Only before it is sent: its debits are due again for the next run.",
	SentQuestion:   "Mark collection run %s as sent to the bank?",
	SentDetail:     "This settles the run's payments as paid (%d): their registrations complete and the members get their confirmation. Do it once the bank has the file.",
	SentYes:        "Mark as sent",
	SentNo:         "Not yet",
	CancelQuestion: "Cancel collection run %s?",
	CancelDetail:   "Its %d debits are due again for the next run. Do not upload this file to the bank any more.",
	CancelYes:      "Cancel the run",
	CancelNo:       "Keep the run",

	DonePrepared:         "Collection run prepared. Download the file and upload it to the club's bank.",
	DoneSent:             "Collection run marked as sent. Registrations completed: %d.",
	DoneSentProblems:     "%d debits did not settle; they are among the payments needing attention.",
	DoneAlreadySent:      "This collection run was marked as sent already; nothing changed.",
	DoneCancelled:        "Collection run cancelled: its debits are due again for the next run.",
	DoneAlreadyCancelled: "This collection run was cancelled already; nothing changed.",
	IsSent:               "This collection run was sent to the bank; it can no longer be cancelled. A debit the bank returns shows up in the statement.",
	IsCancelled:          "This collection run was cancelled; it can no longer be sent. Prepare a new run for its debits.",

	SetupCollectionDay:     "Collection day of the month",
	SetupCollectionDayHint: "1 to 28. Empty or 0: the first business day after the pre-notification period.",
	SetupReturnFee:         "Bank's fee for a returned debit",
	SetupReturnFeeHint:     "An amount such as 3.50, added to the order when the bank returns its debit; empty or 0 for none.",
}

// staffDebitTextDE are those texts in German (formal: Sie).
var staffDebitTextDE = StaffDebitTexts{
	NavDebits:        "Lastschriften",
	Title:            "Lastschrift-Einzüge",
	Intro:            "Ein Einzug fasst die fälligen Lastschriften des Vereins in einer Datei für die Bank des Vereins zusammen. Laden Sie die Datei herunter, reichen Sie sie im Online-Banking ein und markieren Sie den Einzug dann als eingereicht: damit gelten seine Zahlungen als bezahlt.",
	PaymentsLink:     "Lastschrift-Einzüge",
	PaymentsLinkHint: "Die Datei der fälligen Lastschriften für die Bank des Vereins erstellen und als eingereicht markieren.",

	PrepareTitle:    "Einzug vorbereiten",
	Until:           "Lastschriften fällig bis",
	UntilHint:       "Lastschriften, die an oder vor diesem Datum fällig sind, werden gesammelt; jede wird an ihrem eigenen Fälligkeitstag eingezogen.",
	Prepare:         "Einzug vorbereiten",
	NoCreditor:      "Dieser Verein zieht noch keine Lastschriften ein: Seine Gläubiger-Identifikationsnummer wird in den Zahlungseinstellungen der Einrichtung eingetragen (Rolle Administration).",
	NothingDue:      "An oder vor dem %s ist keine Lastschrift fällig. Es wurde kein Einzug vorbereitet.",
	NothingDueInRun: "Lastschriften in einem vorbereiteten Einzug werden nicht erneut gesammelt: Reichen Sie diesen Einzug zuerst ein oder stornieren Sie ihn.",
	BadUntil:        "Geben Sie ein gültiges Datum ein (Jahr, Monat, Tag).",

	RunsTitle:       "Einzüge",
	Empty:           "Noch kein Einzug.",
	Run:             "Einzug",
	Created:         "Erstellt",
	By:              "von %s",
	UntilCol:        "Fällig bis",
	Count:           "Lastschriften",
	Total:           "Summe",
	Version:         "Dateiversion",
	Status:          "Status",
	Open:            "Einzug %s öffnen",
	StatusPrepared:  "Vorbereitet, noch nicht eingereicht",
	StatusSent:      "Bei der Bank eingereicht",
	StatusCancelled: "Storniert",
	SentAt:          "eingereicht %s",
	CancelledAt:     "storniert %s",

	RunTitle:       "Einzug %s",
	RunIntro:       "Vorbereitet am %s von %s, mit den bis %s fälligen Lastschriften. Lastschriften: %d, Summe %s, Dateiversion %s.",
	DebitsTitle:    "Lastschriften",
	EndToEnd:       "End-to-End-Referenz",
	Registration:   "Anmeldung",
	Mandate:        "Mandatsreferenz",
	Holder:         "Kontoinhaber/in",
	Account:        "Konto",
	Amount:         "Betrag",
	Due:            "Eingezogen am",
	Sequence:       "Sequenz",
	SeqFirst:       "Erste Lastschrift des Mandats (FRST)",
	SeqRecurring:   "Folgelastschrift (RCUR)",
	DebitStatus:    "Status",
	DebitInRun:     "In diesem Einzug",
	DebitCollected: "Eingezogen",
	DebitReturned:  "Von der Bank zurückgegeben",
	DebitCancelled: "Mit dem Einzug zurückgezogen",
	Amended:        "Das Konto hat sich seit der letzten Lastschrift geändert; die Datei gibt es an.",
	MandateEnded:   "Das Mandat endete, nachdem dieser Lauf vorbereitet wurde: Senden Sie diese Datei nicht; brechen Sie den Lauf ab und bereiten Sie ihn ohne diese Lastschrift neu vor.",
	NoDebits:       "Dieser Einzug enthält keine Lastschriften.",
	Back:           "Alle Einzüge",

	ActionsTitle:   "Was mit diesem Einzug geschieht",
	Download:       "Datei herunterladen",
	DownloadHint:   "Jedes Mal dieselbe Datei, zum Einreichen im Online-Banking der Bank.",
	MarkSent:       "Als bei der Bank eingereicht markieren",
	MarkSentHint:   "Sobald die Bank die Datei hat: Seine Zahlungen gelten dann als bezahlt.",
	Cancel:         "Diesen Einzug stornieren",
	CancelHint:     "Nur vor dem Einreichen: Seine Lastschriften sind dann für den nächsten Einzug wieder fällig.",
	SentQuestion:   "Einzug %s als bei der Bank eingereicht markieren?",
	SentDetail:     "Damit gelten die Zahlungen des Einzugs als bezahlt (%d): Die Anmeldungen werden abgeschlossen und die Mitglieder erhalten ihre Bestätigung. Tun Sie das, sobald die Bank die Datei hat.",
	SentYes:        "Als eingereicht markieren",
	SentNo:         "Noch nicht",
	CancelQuestion: "Einzug %s stornieren?",
	CancelDetail:   "Seine %d Lastschriften sind für den nächsten Einzug wieder fällig. Reichen Sie diese Datei nicht mehr bei der Bank ein.",
	CancelYes:      "Einzug stornieren",
	CancelNo:       "Einzug behalten",

	DonePrepared:         "Einzug vorbereitet. Laden Sie die Datei herunter und reichen Sie sie bei der Bank des Vereins ein.",
	DoneSent:             "Einzug als eingereicht markiert. Abgeschlossene Anmeldungen: %d.",
	DoneSentProblems:     "%d Lastschriften konnten nicht verbucht werden; sie stehen bei den Zahlungen, die Aufmerksamkeit brauchen.",
	DoneAlreadySent:      "Dieser Einzug war bereits als eingereicht markiert; nichts wurde geändert.",
	DoneCancelled:        "Einzug storniert: Seine Lastschriften sind für den nächsten Einzug wieder fällig.",
	DoneAlreadyCancelled: "Dieser Einzug war bereits storniert; nichts wurde geändert.",
	IsSent:               "Dieser Einzug wurde bei der Bank eingereicht und kann nicht mehr storniert werden. Eine Rücklastschrift erscheint im Kontoauszug.",
	IsCancelled:          "Dieser Einzug wurde storniert und kann nicht mehr eingereicht werden. Bereiten Sie für seine Lastschriften einen neuen Einzug vor.",

	SetupCollectionDay:     "Einzugstag im Monat",
	SetupCollectionDayHint: "1 bis 28. Leer oder 0: der erste Bankarbeitstag nach der Vorabankündigungsfrist.",
	SetupReturnFee:         "Gebühr der Bank für eine Rücklastschrift",
	SetupReturnFeeHint:     "Ein Betrag wie 3.50, der der Bestellung hinzugefügt wird, wenn die Bank ihre Lastschrift zurückgibt; leer oder 0 für keine.",
}

// staffDebitTextFR are those texts in French (formal: vous).
var staffDebitTextFR = StaffDebitTexts{
	NavDebits:        "Prélèvements",
	Title:            "Remises de prélèvements",
	Intro:            "Une remise rassemble les prélèvements SEPA échus du club dans un fichier pour la banque du club. Téléchargez le fichier, déposez-le dans votre banque en ligne, puis marquez la remise comme envoyée : ses paiements sont alors réglés.",
	PaymentsLink:     "Remises de prélèvements",
	PaymentsLinkHint: "Préparer le fichier des prélèvements échus pour la banque du club, et le marquer comme envoyé.",

	PrepareTitle:    "Préparer une remise",
	Until:           "Prélèvements échus au plus tard le",
	UntilHint:       "Les prélèvements échus à cette date ou avant sont rassemblés ; chacun est prélevé à sa propre date d’échéance.",
	Prepare:         "Préparer la remise",
	NoCreditor:      "Ce club ne prélève pas encore : un administrateur saisit son identifiant créancier SEPA dans les paramètres de paiement de la configuration.",
	NothingDue:      "Aucun prélèvement n’est échu le %s ou avant. Aucune remise n’a été préparée.",
	NothingDueInRun: "Les prélèvements déjà dans une remise préparée ne sont pas rassemblés à nouveau : envoyez ou annulez d’abord cette remise.",
	BadUntil:        "Saisissez une date valide (année, mois, jour).",

	RunsTitle:       "Remises",
	Empty:           "Aucune remise pour l’instant.",
	Run:             "Remise",
	Created:         "Créée",
	By:              "par %s",
	UntilCol:        "Échus au plus tard le",
	Count:           "Prélèvements",
	Total:           "Total",
	Version:         "Version du fichier",
	Status:          "Statut",
	Open:            "Ouvrir la remise %s",
	StatusPrepared:  "Préparée, pas encore envoyée",
	StatusSent:      "Envoyée à la banque",
	StatusCancelled: "Annulée",
	SentAt:          "envoyée le %s",
	CancelledAt:     "annulée le %s",

	RunTitle:       "Remise %s",
	RunIntro:       "Préparée le %s par %s, avec les prélèvements échus au plus tard le %s. Prélèvements : %d, total %s, version du fichier %s.",
	DebitsTitle:    "Prélèvements",
	EndToEnd:       "Référence de bout en bout",
	Registration:   "Inscription",
	Mandate:        "Référence du mandat",
	Holder:         "Titulaire du compte",
	Account:        "Compte",
	Amount:         "Montant",
	Due:            "Prélevé le",
	Sequence:       "Séquence",
	SeqFirst:       "Premier prélèvement du mandat (FRST)",
	SeqRecurring:   "Prélèvement récurrent (RCUR)",
	DebitStatus:    "Statut",
	DebitInRun:     "Dans cette remise",
	DebitCollected: "Prélevé",
	DebitReturned:  "Rejeté par la banque",
	DebitCancelled: "Retiré avec la remise",
	Amended:        "Le compte a changé depuis le dernier prélèvement ; le fichier l’indique.",
	MandateEnded:   "Le mandat a pris fin après la préparation de ce lot : n’envoyez pas ce fichier ; annulez le lot et préparez-le à nouveau sans ce prélèvement.",
	NoDebits:       "Cette remise ne contient aucun prélèvement.",
	Back:           "Toutes les remises",

	ActionsTitle:   "Que faire de cette remise",
	Download:       "Télécharger le fichier",
	DownloadHint:   "Toujours le même fichier, à déposer dans la banque en ligne.",
	MarkSent:       "Marquer comme envoyée à la banque",
	MarkSentHint:   "Une fois que la banque a le fichier : ses paiements sont alors réglés.",
	Cancel:         "Annuler cette remise",
	CancelHint:     "Seulement avant l’envoi : ses prélèvements sont de nouveau dus pour la prochaine remise.",
	SentQuestion:   "Marquer la remise %s comme envoyée à la banque ?",
	SentDetail:     "Cela règle les paiements de la remise (%d) : leurs inscriptions sont finalisées et les membres reçoivent leur confirmation. Faites-le une fois que la banque a le fichier.",
	SentYes:        "Marquer comme envoyée",
	SentNo:         "Pas encore",
	CancelQuestion: "Annuler la remise %s ?",
	CancelDetail:   "Ses %d prélèvements sont de nouveau dus pour la prochaine remise. Ne déposez plus ce fichier à la banque.",
	CancelYes:      "Annuler la remise",
	CancelNo:       "Garder la remise",

	DonePrepared:         "Remise préparée. Téléchargez le fichier et déposez-le à la banque du club.",
	DoneSent:             "Remise marquée comme envoyée. Inscriptions finalisées : %d.",
	DoneSentProblems:     "%d prélèvements n’ont pas pu être réglés ; ils figurent parmi les paiements à examiner.",
	DoneAlreadySent:      "Cette remise était déjà marquée comme envoyée ; rien n’a changé.",
	DoneCancelled:        "Remise annulée : ses prélèvements sont de nouveau dus pour la prochaine remise.",
	DoneAlreadyCancelled: "Cette remise était déjà annulée ; rien n’a changé.",
	IsSent:               "Cette remise a été envoyée à la banque ; elle ne peut plus être annulée. Un prélèvement rejeté apparaît dans le relevé.",
	IsCancelled:          "Cette remise a été annulée ; elle ne peut plus être envoyée. Préparez une nouvelle remise pour ses prélèvements.",

	SetupCollectionDay:     "Jour de prélèvement du mois",
	SetupCollectionDayHint: "De 1 à 28. Vide ou 0 : le premier jour ouvré après le délai de pré-notification.",
	SetupReturnFee:         "Frais bancaires d’un prélèvement rejeté",
	SetupReturnFeeHint:     "Un montant comme 3.50, ajouté à la commande quand la banque rejette son prélèvement ; vide ou 0 pour aucun.",
}

var staffDebitTexts = map[string]*StaffDebitTexts{"en": &StaffDebitText,
	"de": withEnglish(staffDebitTextDE, StaffDebitText), "fr": withEnglish(staffDebitTextFR, StaffDebitText)}

// StaffDebitTextIn is the collection runs' texts in the language of ctx.
func StaffDebitTextIn(ctx context.Context) *StaffDebitTexts {
	if t, ok := staffDebitTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffDebitText
}
