package views

import (
	"context"

	"portal/views/lang"
)

// StaffSetupSectionTexts are the texts of the setup's sections: their
// names and intros (the section list and navigation), the API keys
// section, the club texts per language of periods and price rules, and
// the texts still missing in an enabled language.
type StaffSetupSectionTexts struct {
	// Sections and their one-sentence intros.
	Organisation, OrganisationIntro, Languages, LanguagesIntro, Payments, PaymentsIntro, Messages, MessagesIntro,
	Memberships, MembershipsIntro, Staff, StaffIntro, APIKeys, APIKeysIntro, DataProtection, DataProtectionIntro string
	// API keys
	KeyName, KeyScope, KeyScopeRead, KeyScopeWrite, KeyCreated, KeyLastUsed, KeyNever, KeyRevoked, KeyRevoke, KeyRevokeQuestion,
	KeyRevokeDetail, KeyAdd, KeyAddButton, KeyShownOnce, KeyRevokedDone, KeysEmpty string
	// Club texts per language: TextsTitle (%s: the period's name),
	// RuleLabelIn (%s: a language's name), TextsHint.
	TextsTitle, TextsHint, RuleLabelIn, TextsSave, TextsSaved string
	// Texts missing in an enabled language: the to-do list.
	ToDoTitle, ToDoIntro, ToDoTypeName, ToDoPeriodName, ToDoRuleLabel string
}

// StaffSetupSectionText holds those texts in English.
var StaffSetupSectionText = StaffSetupSectionTexts{
	Organisation:        "Organisation",
	OrganisationIntro:   "Name, contact address, logo, colour and the secret of the members' links.",
	Languages:           "Languages",
	LanguagesIntro:      "The languages members can choose, and the default among them.",
	Payments:            "Payments",
	PaymentsIntro:       "How members pay: the provider, the Stripe account, the bank account.",
	Messages:            "Reminders and e-mail",
	MessagesIntro:       "When reminders go out, and the sender of the organisation's e-mail.",
	Memberships:         "Memberships and prices",
	MembershipsIntro:    "Periods, membership types, price rules with their texts per language, and the price calculator.",
	Staff:               "Staff members",
	StaffIntro:          "Who may sign in to these pages, and with which role.",
	APIKeys:             "API keys",
	APIKeysIntro:        "Keys of the admin API for the club's other systems: make one, revoke one.",
	DataProtection:      "Data protection",
	DataProtectionIntro: "How long the club keeps members' data once it is no longer needed.",

	KeyName:           "Name",
	KeyScope:          "Access",
	KeyScopeRead:      "Read only",
	KeyScopeWrite:     "Read and change",
	KeyCreated:        "Made",
	KeyLastUsed:       "Last used",
	KeyNever:          "never",
	KeyRevoked:        "Revoked",
	KeyRevoke:         "Revoke",
	KeyRevokeQuestion: "Revoke this API key?",
	KeyRevokeDetail:   "Systems using it are refused from their next call. A revoked key cannot be used again.",
	KeyAdd:            "Make an API key",
	KeyAddButton:      "Make the key",
	KeyShownOnce:      "The new key, shown this once only: copy it into the system that uses it now.",
	KeyRevokedDone:    "The API key was revoked.",
	KeysEmpty:         "No API keys yet.",

	TextsTitle:  "Texts of %s in each language",
	TextsHint:   "Leave every other language empty to show a text in all languages, or give it in each. Members see the texts of their registration's language.",
	RuleLabelIn: "in %s",
	TextsSave:   "Save the texts",
	TextsSaved:  "The texts were saved.",

	ToDoTitle:      "Texts to translate",
	ToDoIntro:      "These texts are given per language but not yet in every language offered; members in that language see the default language's text until they are.",
	ToDoTypeName:   "Membership type",
	ToDoPeriodName: "Period",
	ToDoRuleLabel:  "Price rule",
}

var staffSetupSectionTextDE = StaffSetupSectionTexts{
	Organisation:        "Organisation",
	OrganisationIntro:   "Name, Kontaktadresse, Logo, Farbe und das Geheimnis der Mitglieder-Links.",
	Languages:           "Sprachen",
	LanguagesIntro:      "Die Sprachen, die Mitglieder wählen können, und die Standardsprache.",
	Payments:            "Zahlungen",
	PaymentsIntro:       "Wie Mitglieder bezahlen: Anbieter, Stripe-Konto, Bankkonto.",
	Messages:            "Erinnerungen und E-Mail",
	MessagesIntro:       "Wann Erinnerungen verschickt werden, und der Absender der E-Mails.",
	Memberships:         "Mitgliedschaften und Preise",
	MembershipsIntro:    "Perioden, Mitgliedschaftsarten, Preisregeln mit ihren Texten je Sprache und der Preisrechner.",
	Staff:               "Mitarbeitende",
	StaffIntro:          "Wer sich auf diesen Seiten anmelden darf, und mit welcher Rolle.",
	APIKeys:             "API-Schlüssel",
	APIKeysIntro:        "Schlüssel der Admin-API für die anderen Systeme des Vereins: erstellen, widerrufen.",
	DataProtection:      "Datenschutz",
	DataProtectionIntro: "Wie lange der Verein Daten seiner Mitglieder aufbewahrt, wenn sie nicht mehr gebraucht werden.",

	KeyName:           "Name",
	KeyScope:          "Zugriff",
	KeyScopeRead:      "Nur lesen",
	KeyScopeWrite:     "Lesen und ändern",
	KeyCreated:        "Erstellt",
	KeyLastUsed:       "Zuletzt verwendet",
	KeyNever:          "nie",
	KeyRevoked:        "Widerrufen",
	KeyRevoke:         "Widerrufen",
	KeyRevokeQuestion: "Diesen API-Schlüssel widerrufen?",
	KeyRevokeDetail:   "Systeme, die ihn verwenden, werden ab ihrem nächsten Aufruf abgewiesen. Ein widerrufener Schlüssel gilt nie wieder.",
	KeyAdd:            "API-Schlüssel erstellen",
	KeyAddButton:      "Schlüssel erstellen",
	KeyShownOnce:      "Der neue Schlüssel, nur dieses eine Mal angezeigt: Kopieren Sie ihn jetzt in das System, das ihn verwendet.",
	KeyRevokedDone:    "Der API-Schlüssel wurde widerrufen.",
	KeysEmpty:         "Noch keine API-Schlüssel.",

	TextsTitle:  "Texte von %s in jeder Sprache",
	TextsHint:   "Lassen Sie alle anderen Sprachen leer, um einen Text in allen Sprachen zu zeigen, oder geben Sie ihn in jeder an. Mitglieder sehen die Texte in der Sprache ihrer Anmeldung.",
	RuleLabelIn: "auf %s",
	TextsSave:   "Texte speichern",
	TextsSaved:  "Die Texte wurden gespeichert.",

	ToDoTitle:      "Zu übersetzende Texte",
	ToDoIntro:      "Diese Texte sind je Sprache angegeben, aber noch nicht in jeder angebotenen Sprache; Mitglieder in dieser Sprache sehen bis dahin den Text der Standardsprache.",
	ToDoTypeName:   "Mitgliedschaftsart",
	ToDoPeriodName: "Periode",
	ToDoRuleLabel:  "Preisregel",
}

var staffSetupSectionTextFR = StaffSetupSectionTexts{
	Organisation:        "Organisation",
	OrganisationIntro:   "Nom, adresse de contact, logo, couleur et le secret des liens des membres.",
	Languages:           "Langues",
	LanguagesIntro:      "Les langues que les membres peuvent choisir, et la langue par défaut.",
	Payments:            "Paiements",
	PaymentsIntro:       "Comment les membres paient : le prestataire, le compte Stripe, le compte bancaire.",
	Messages:            "Rappels et e-mail",
	MessagesIntro:       "Quand partent les rappels, et l’expéditeur des e-mails de l’organisation.",
	Memberships:         "Adhésions et prix",
	MembershipsIntro:    "Périodes, types d’adhésion, règles de prix avec leurs textes par langue, et le calculateur de prix.",
	Staff:               "Membres du personnel",
	StaffIntro:          "Qui peut se connecter à ces pages, et avec quel rôle.",
	APIKeys:             "Clés d’API",
	APIKeysIntro:        "Les clés de l’API d’administration pour les autres systèmes du club : en créer, en révoquer.",
	DataProtection:      "Protection des données",
	DataProtectionIntro: "Combien de temps le club garde les données de ses membres lorsqu’elles ne sont plus nécessaires.",

	KeyName:           "Nom",
	KeyScope:          "Accès",
	KeyScopeRead:      "Lecture seule",
	KeyScopeWrite:     "Lecture et modification",
	KeyCreated:        "Créée",
	KeyLastUsed:       "Dernière utilisation",
	KeyNever:          "jamais",
	KeyRevoked:        "Révoquée",
	KeyRevoke:         "Révoquer",
	KeyRevokeQuestion: "Révoquer cette clé d’API ?",
	KeyRevokeDetail:   "Les systèmes qui l’utilisent sont refusés dès leur prochain appel. Une clé révoquée ne sert plus jamais.",
	KeyAdd:            "Créer une clé d’API",
	KeyAddButton:      "Créer la clé",
	KeyShownOnce:      "La nouvelle clé, affichée cette seule fois : copiez-la maintenant dans le système qui l’utilise.",
	KeyRevokedDone:    "La clé d’API a été révoquée.",
	KeysEmpty:         "Aucune clé d’API pour l’instant.",

	TextsTitle:  "Textes de %s dans chaque langue",
	TextsHint:   "Laissez toutes les autres langues vides pour montrer un texte dans toutes les langues, ou donnez-le dans chacune. Les membres voient les textes dans la langue de leur inscription.",
	RuleLabelIn: "en %s",
	TextsSave:   "Enregistrer les textes",
	TextsSaved:  "Les textes ont été enregistrés.",

	ToDoTitle:      "Textes à traduire",
	ToDoIntro:      "Ces textes sont donnés par langue mais pas encore dans chaque langue proposée ; les membres dans cette langue voient d’ici là le texte de la langue par défaut.",
	ToDoTypeName:   "Type d’adhésion",
	ToDoPeriodName: "Période",
	ToDoRuleLabel:  "Règle de prix",
}

var staffSetupSectionTexts = map[string]*StaffSetupSectionTexts{"en": &StaffSetupSectionText,
	"de": withEnglish(staffSetupSectionTextDE, StaffSetupSectionText), "fr": withEnglish(staffSetupSectionTextFR, StaffSetupSectionText)}

// StaffSetupSectionTextIn is the sections' texts in the language of ctx.
func StaffSetupSectionTextIn(ctx context.Context) *StaffSetupSectionTexts {
	if t, ok := staffSetupSectionTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffSetupSectionText
}
