package views

import (
	"context"

	"portal/views/lang"
)

// StaffPrivacyTexts are the texts of the data protection parts of the
// staff pages (issue 30): a registration's consents, the access log page
// and the retention settings on the setup page.
type StaffPrivacyTexts struct {
	ConsentsTitle, ConsentsEmpty, ConsentPerson, ConsentKind, ConsentText, ConsentGiven, ConsentVersion string
	KindClubRules, KindPrivacy, KindGuardian, KindMandate, KindOther                                    string
	NavAccessLog, AccessTitle, AccessIntro, AccessWho, AccessAll, AccessKind, AccessRecord, AccessWhen, AccessApply,
	AccessEmpty, AccessOlder, AccessRegistration, AccessPerson, AccessExport string
	RetentionTitle, RetentionIntro, RetentionPersons, RetentionAnswers, RetentionMessages, RetentionAccessLog,
	RetentionSaved, NotANumber string
}

// StaffPrivacyText holds those texts in English.
var StaffPrivacyText = StaffPrivacyTexts{
	ConsentsTitle:  "Consents",
	ConsentsEmpty:  "No consent recorded for this registration.",
	ConsentPerson:  "Person",
	ConsentKind:    "Consent",
	ConsentText:    "Text shown",
	ConsentGiven:   "Given",
	ConsentVersion: "Text version",
	KindClubRules:  "Club rules",
	KindPrivacy:    "Privacy notice",
	KindGuardian:   "Parent's consent",
	KindMandate:    "Direct debit mandate",
	KindOther:      "Consent",

	NavAccessLog:       "Access log",
	AccessTitle:        "Access log",
	AccessIntro:        "Who of the staff opened whose data: a registration, a person or an export. Entries are kept for the retention set on the setup page.",
	AccessWho:          "Staff member",
	AccessAll:          "All",
	AccessKind:         "Opened",
	AccessRecord:       "Record",
	AccessWhen:         "When",
	AccessApply:        "Apply",
	AccessEmpty:        "No entries match.",
	AccessOlder:        "Older entries",
	AccessRegistration: "Registration",
	AccessPerson:       "Person",
	AccessExport:       "Export",

	RetentionTitle:     "Retention",
	RetentionIntro:     "How long personal data is kept once it is no longer needed. A daily job anonymises what is past it; orders and payments stay for the books. Leave a field empty for the default.",
	RetentionPersons:   "Seasons without a membership before a person is anonymised (default 3)",
	RetentionAnswers:   "Months after archiving before a registration's answers are removed (default 12)",
	RetentionMessages:  "Days after sending before a message's content is removed (default 90)",
	RetentionAccessLog: "Days the access log is kept (default 730)",
	RetentionSaved:     "Retention settings saved.",
	NotANumber:         "Enter a whole number.",
}

// staffPrivacyTextDE are those texts in German (formal: Sie).
var staffPrivacyTextDE = StaffPrivacyTexts{
	ConsentsTitle:  "Einwilligungen",
	ConsentsEmpty:  "Für diese Anmeldung ist keine Einwilligung erfasst.",
	ConsentPerson:  "Person",
	ConsentKind:    "Einwilligung",
	ConsentText:    "Angezeigter Text",
	ConsentGiven:   "Erteilt",
	ConsentVersion: "Textversion",
	KindClubRules:  "Vereinsstatuten",
	KindPrivacy:    "Datenschutzerklärung",
	KindGuardian:   "Einwilligung der Eltern",
	KindMandate:    "Lastschriftmandat",
	KindOther:      "Einwilligung",

	NavAccessLog:       "Zugriffsprotokoll",
	AccessTitle:        "Zugriffsprotokoll",
	AccessIntro:        "Wer vom Personal wessen Daten geöffnet hat: eine Anmeldung, eine Person oder einen Export. Einträge werden so lange aufbewahrt, wie in der Einrichtung festgelegt.",
	AccessWho:          "Person vom Personal",
	AccessAll:          "Alle",
	AccessKind:         "Geöffnet",
	AccessRecord:       "Datensatz",
	AccessWhen:         "Wann",
	AccessApply:        "Anwenden",
	AccessEmpty:        "Keine passenden Einträge.",
	AccessOlder:        "Ältere Einträge",
	AccessRegistration: "Anmeldung",
	AccessPerson:       "Person",
	AccessExport:       "Export",

	RetentionTitle:     "Aufbewahrung",
	RetentionIntro:     "Wie lange Personendaten aufbewahrt werden, wenn sie nicht mehr gebraucht werden. Eine tägliche Aufgabe anonymisiert, was darüber hinaus ist; Bestellungen und Zahlungen bleiben für die Buchhaltung. Leer lassen für den Standardwert.",
	RetentionPersons:   "Saisons ohne Mitgliedschaft, bis eine Person anonymisiert wird (Standard 3)",
	RetentionAnswers:   "Monate nach der Archivierung, bis die Antworten einer Anmeldung entfernt werden (Standard 12)",
	RetentionMessages:  "Tage nach dem Versand, bis der Inhalt einer Nachricht entfernt wird (Standard 90)",
	RetentionAccessLog: "Tage, die das Zugriffsprotokoll aufbewahrt wird (Standard 730)",
	RetentionSaved:     "Aufbewahrungseinstellungen gespeichert.",
	NotANumber:         "Geben Sie eine ganze Zahl ein.",
}

// staffPrivacyTextFR are those texts in French (vous).
var staffPrivacyTextFR = StaffPrivacyTexts{
	ConsentsTitle:  "Consentements",
	ConsentsEmpty:  "Aucun consentement enregistré pour cette inscription.",
	ConsentPerson:  "Personne",
	ConsentKind:    "Consentement",
	ConsentText:    "Texte affiché",
	ConsentGiven:   "Donné le",
	ConsentVersion: "Version du texte",
	KindClubRules:  "Statuts du club",
	KindPrivacy:    "Déclaration de protection des données",
	KindGuardian:   "Consentement parental",
	KindMandate:    "Mandat de prélèvement",
	KindOther:      "Consentement",

	NavAccessLog:       "Journal des accès",
	AccessTitle:        "Journal des accès",
	AccessIntro:        "Qui, parmi le personnel, a ouvert les données de qui : une inscription, une personne ou un export. Les entrées sont conservées selon la durée fixée dans la configuration.",
	AccessWho:          "Membre du personnel",
	AccessAll:          "Tous",
	AccessKind:         "Ouvert",
	AccessRecord:       "Enregistrement",
	AccessWhen:         "Quand",
	AccessApply:        "Appliquer",
	AccessEmpty:        "Aucune entrée ne correspond.",
	AccessOlder:        "Entrées plus anciennes",
	AccessRegistration: "Inscription",
	AccessPerson:       "Personne",
	AccessExport:       "Export",

	RetentionTitle:     "Conservation",
	RetentionIntro:     "Combien de temps les données personnelles sont conservées lorsqu’elles ne sont plus nécessaires. Une tâche quotidienne anonymise ce qui dépasse ce délai ; les commandes et paiements restent pour la comptabilité. Laissez vide pour la valeur par défaut.",
	RetentionPersons:   "Saisons sans adhésion avant qu’une personne soit anonymisée (défaut 3)",
	RetentionAnswers:   "Mois après l’archivage avant que les réponses d’une inscription soient supprimées (défaut 12)",
	RetentionMessages:  "Jours après l’envoi avant que le contenu d’un message soit supprimé (défaut 90)",
	RetentionAccessLog: "Jours de conservation du journal des accès (défaut 730)",
	RetentionSaved:     "Paramètres de conservation enregistrés.",
	NotANumber:         "Saisissez un nombre entier.",
}

var staffPrivacyTexts = map[string]*StaffPrivacyTexts{"en": &StaffPrivacyText,
	"de": withEnglish(staffPrivacyTextDE, StaffPrivacyText), "fr": withEnglish(staffPrivacyTextFR, StaffPrivacyText)}

// StaffPrivacyTextIn is StaffPrivacyTexts in the request's language.
func StaffPrivacyTextIn(ctx context.Context) *StaffPrivacyTexts {
	if t, ok := staffPrivacyTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffPrivacyText
}

// StaffConsentRow is one consent of a registration, ready to print.
type StaffConsentRow struct {
	Person, Kind, Text, Language, Given, Version string
}

// StaffAccessLogModel is the access log page.
type StaffAccessLogModel struct {
	StaffChrome
	Action string
	// Actors are the filter's staff members; Actor the chosen one.
	Actors []StaffOption
	Kinds  []StaffOption
	Record string
	Rows   []StaffAccessRow
	// OlderURL pages on, "" at the end.
	OlderURL string
}

// StaffAccessRow is one access log entry, ready to print.
type StaffAccessRow struct {
	When, Who, Kind, Record, RecordURL string
}

// StaffRetentionForm is the retention settings form of the setup page.
type StaffRetentionForm struct {
	Action                                         string
	PersonSeasons, AnswerMonths, MessageDays, Logs string
	Errors                                         map[string]string
}
