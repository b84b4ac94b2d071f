package views

import (
	"context"

	"portal/views/lang"
)

// PersonalDataTexts are the texts of the "Your data" page, of the staff
// pages of a person's data and of members' requests, and of the two
// request e-mails (issue 30), in one language.
type PersonalDataTexts struct {
	Title, Intro, Download, DownloadHint, Empty string
	// Table headings and columns.
	Persons, Name, Born, Email, ExternalID, Created, Erased             string
	Answers, Registration, Person, Question, Answer, Household          string
	Memberships, Period, Type, Status, Activated                        string
	Orders, Order, Line, Amount, Paid, Payments, Reference, Provider    string
	BankCredits, Debtor, Account, Booked                                string
	Messages, Kind, Recipient, Sent, OptOuts, Address, Category, Since  string
	Invitations, Expires, Opened, Revoked, Sessions, LastSeen, Requests string
	RequestTitle, RequestIntro, RequestKind, Correction, Erasure, About string
	WholeHousehold, RequestText, RequestHint, RequestSend, RequestSent  string
	RequestInvalid, LinkFromOverview                                    string
	// Staff.
	NavRequests, StaffTitle, StaffExport, EraseTitle, EraseIntro, Force, ForceHint, EraseButton string
	ConfirmErase, ConfirmEraseDetail, DoneErased, RequestsTitle, RequestsIntro, MarkDone, Note  string
	DoneRequest, Open, Done, OpenPerson                                                         string
	// E-mails: to the club (a new request) and to the household (done).
	MailNewSubject, MailNewBody, MailDoneSubject, MailDoneBody, MailNote string
}

// PersonalDataText holds those texts in English.
var PersonalDataText = PersonalDataTexts{
	Title:        "Your data",
	Intro:        "This is everything the club holds about your household in this portal. You can download it as a file (JSON) or ask for a correction or an erasure below.",
	Download:     "Download as JSON",
	DownloadHint: "A machine-readable file in the documented format portal-personal-data/1.",
	Empty:        "None.",
	Persons:      "Persons", Name: "Name", Born: "Date of birth", Email: "E-mail", ExternalID: "Member number", Created: "Recorded", Erased: "Erased",
	Answers: "Answers", Registration: "Registration", Person: "Person", Question: "Question", Answer: "Answer", Household: "Household",
	Memberships: "Memberships", Period: "Period", Type: "Type", Status: "Status", Activated: "Active since",
	Orders: "Orders", Order: "Order", Line: "Item", Amount: "Amount", Paid: "Paid", Payments: "Payments", Reference: "Reference", Provider: "Paid by",
	BankCredits: "Bank transfers", Debtor: "From", Account: "Account", Booked: "Booked",
	Messages: "E-mails sent", Kind: "Kind", Recipient: "To", Sent: "Sent", OptOuts: "Unsubscribed", Address: "Address", Category: "Messages", Since: "Since",
	Invitations: "Invitations", Expires: "Expires", Opened: "Opened", Revoked: "Revoked", Sessions: "Sign-ins", LastSeen: "Last seen", Requests: "Your requests",
	RequestTitle:       "Ask for a correction or an erasure",
	RequestIntro:       "The club's staff receive your request by e-mail and tell you by e-mail when it is done. Memberships and payments stay in the club's books as the law requires, without your name.",
	RequestKind:        "What do you ask for?",
	Correction:         "Correct my data",
	Erasure:            "Erase my data",
	About:              "About whom?",
	WholeHousehold:     "The whole household",
	RequestText:        "What should change?",
	RequestHint:        "For a correction, say what is wrong and what is right (at most 2000 characters).",
	RequestSend:        "Send the request",
	RequestSent:        "Thank you. Your request was sent to the club; you will be told by e-mail when it is done.",
	RequestInvalid:     "The request could not be sent: choose what you ask for, and for a correction say what should change.",
	LinkFromOverview:   "Your data",
	NavRequests:        "Data requests",
	StaffTitle:         "Personal data",
	StaffExport:        "Download the export (JSON)",
	EraseTitle:         "Erase this person",
	EraseIntro:         "Replaces or removes the person's data everywhere it is stored; orders, payments and their amounts stay for the books with the name replaced. Refused while a membership is active or a payment open.",
	Force:              "Erase even with an active membership or an open payment",
	ForceHint:          "Administrators only; the audit log records that the erasure was forced and why.",
	EraseButton:        "Erase…",
	ConfirmErase:       "Erase this person's data?",
	ConfirmEraseDetail: "This cannot be undone. Names, address, date of birth and answers are replaced everywhere; the books keep the amounts.",
	DoneErased:         "The person's data was erased.",
	RequestsTitle:      "Data requests",
	RequestsIntro:      "Members' requests for a correction or an erasure of their data, from their \"Your data\" page. Mark one done when you have answered it: the household is told by e-mail.",
	MarkDone:           "Mark done",
	Note:               "Note to the member (optional)",
	DoneRequest:        "The request is marked done; the household is told by e-mail.",
	Open:               "open",
	Done:               "done",
	OpenPerson:         "Personal data",
	MailNewSubject:     "Data request from a member ({{.Kind}})",
	MailNewBody:        "A member asked for: {{.Kind}}.\nAbout: {{.About}}\nHousehold: {{.Household}}\n\n{{.Message}}\n\nThe request is listed on the staff page {{.URL}}",
	MailDoneSubject:    "Your request to {{.Club}} is done",
	MailDoneBody:       "Hello,\n\nyour request about your data ({{.Kind}}) was answered by {{.Club}}.",
	MailNote:           "Note from the club:",
}

// PersonalDataTextDE holds those texts in German.
var PersonalDataTextDE = PersonalDataTexts{
	Title:        "Ihre Daten",
	Intro:        "Das ist alles, was der Verein in diesem Portal über Ihren Haushalt gespeichert hat. Sie können es als Datei (JSON) herunterladen oder unten eine Berichtigung oder Löschung verlangen.",
	Download:     "Als JSON herunterladen",
	DownloadHint: "Eine maschinenlesbare Datei im dokumentierten Format portal-personal-data/1.",
	Empty:        "Keine.",
	Persons:      "Personen", Name: "Name", Born: "Geburtsdatum", Email: "E-Mail", ExternalID: "Mitgliedsnummer", Created: "Erfasst", Erased: "Gelöscht",
	Answers: "Antworten", Registration: "Anmeldung", Person: "Person", Question: "Frage", Answer: "Antwort", Household: "Haushalt",
	Memberships: "Mitgliedschaften", Period: "Saison", Type: "Art", Status: "Status", Activated: "Aktiv seit",
	Orders: "Bestellungen", Order: "Bestellung", Line: "Posten", Amount: "Betrag", Paid: "Bezahlt", Payments: "Zahlungen", Reference: "Referenz", Provider: "Bezahlt mit",
	BankCredits: "Überweisungen", Debtor: "Von", Account: "Konto", Booked: "Gebucht",
	Messages: "Gesendete E-Mails", Kind: "Art", Recipient: "An", Sent: "Gesendet", OptOuts: "Abgemeldet", Address: "Adresse", Category: "Nachrichten", Since: "Seit",
	Invitations: "Einladungen", Expires: "Gültig bis", Opened: "Geöffnet", Revoked: "Widerrufen", Sessions: "Anmeldungen im Portal", LastSeen: "Zuletzt aktiv", Requests: "Ihre Anfragen",
	RequestTitle:       "Berichtigung oder Löschung verlangen",
	RequestIntro:       "Der Verein erhält Ihre Anfrage per E-Mail und teilt Ihnen per E-Mail mit, wenn sie erledigt ist. Mitgliedschaften und Zahlungen bleiben, wie gesetzlich vorgeschrieben, ohne Ihren Namen in der Buchhaltung.",
	RequestKind:        "Was verlangen Sie?",
	Correction:         "Meine Daten berichtigen",
	Erasure:            "Meine Daten löschen",
	About:              "Für wen?",
	WholeHousehold:     "Den ganzen Haushalt",
	RequestText:        "Was soll sich ändern?",
	RequestHint:        "Für eine Berichtigung: was ist falsch und was ist richtig (höchstens 2000 Zeichen).",
	RequestSend:        "Anfrage senden",
	RequestSent:        "Danke. Ihre Anfrage wurde an den Verein gesendet; Sie erhalten eine E-Mail, wenn sie erledigt ist.",
	RequestInvalid:     "Die Anfrage konnte nicht gesendet werden: Wählen Sie, was Sie verlangen, und sagen Sie bei einer Berichtigung, was sich ändern soll.",
	LinkFromOverview:   "Ihre Daten",
	NavRequests:        "Datenanfragen",
	StaffTitle:         "Personendaten",
	StaffExport:        "Export herunterladen (JSON)",
	EraseTitle:         "Diese Person löschen",
	EraseIntro:         "Ersetzt oder entfernt die Daten der Person überall, wo sie gespeichert sind; Bestellungen, Zahlungen und Beträge bleiben mit ersetztem Namen für die Buchhaltung. Abgelehnt, solange eine Mitgliedschaft aktiv oder eine Zahlung offen ist.",
	Force:              "Auch bei aktiver Mitgliedschaft oder offener Zahlung löschen",
	ForceHint:          "Nur für Administratoren; das Protokoll hält fest, dass und warum die Löschung erzwungen wurde.",
	EraseButton:        "Löschen…",
	ConfirmErase:       "Die Daten dieser Person löschen?",
	ConfirmEraseDetail: "Das kann nicht rückgängig gemacht werden. Namen, Adresse, Geburtsdatum und Antworten werden überall ersetzt; die Buchhaltung behält die Beträge.",
	DoneErased:         "Die Daten der Person wurden gelöscht.",
	RequestsTitle:      "Datenanfragen",
	RequestsIntro:      "Anfragen von Mitgliedern zur Berichtigung oder Löschung ihrer Daten, von ihrer Seite „Ihre Daten“. Markieren Sie eine als erledigt, wenn Sie sie beantwortet haben: der Haushalt erhält eine E-Mail.",
	MarkDone:           "Als erledigt markieren",
	Note:               "Notiz an das Mitglied (optional)",
	DoneRequest:        "Die Anfrage ist erledigt; der Haushalt erhält eine E-Mail.",
	Open:               "offen",
	Done:               "erledigt",
	OpenPerson:         "Personendaten",
	MailNewSubject:     "Datenanfrage eines Mitglieds ({{.Kind}})",
	MailNewBody:        "Ein Mitglied verlangt: {{.Kind}}.\nBetrifft: {{.About}}\nHaushalt: {{.Household}}\n\n{{.Message}}\n\nDie Anfrage steht auf der Seite {{.URL}}",
	MailDoneSubject:    "Ihre Anfrage an {{.Club}} ist erledigt",
	MailDoneBody:       "Guten Tag,\n\nIhre Anfrage zu Ihren Daten ({{.Kind}}) wurde von {{.Club}} erledigt.",
	MailNote:           "Notiz des Vereins:",
}

// PersonalDataTextFR holds those texts in French.
var PersonalDataTextFR = PersonalDataTexts{
	Title:        "Vos données",
	Intro:        "Voici tout ce que le club conserve sur votre foyer dans ce portail. Vous pouvez le télécharger sous forme de fichier (JSON) ou demander ci-dessous une rectification ou un effacement.",
	Download:     "Télécharger en JSON",
	DownloadHint: "Un fichier lisible par machine au format documenté portal-personal-data/1.",
	Empty:        "Aucune.",
	Persons:      "Personnes", Name: "Nom", Born: "Date de naissance", Email: "E-mail", ExternalID: "Numéro de membre", Created: "Enregistré", Erased: "Effacé",
	Answers: "Réponses", Registration: "Inscription", Person: "Personne", Question: "Question", Answer: "Réponse", Household: "Foyer",
	Memberships: "Adhésions", Period: "Saison", Type: "Type", Status: "Statut", Activated: "Active depuis",
	Orders: "Commandes", Order: "Commande", Line: "Poste", Amount: "Montant", Paid: "Payée", Payments: "Paiements", Reference: "Référence", Provider: "Payé par",
	BankCredits: "Virements", Debtor: "De", Account: "Compte", Booked: "Comptabilisé",
	Messages: "E-mails envoyés", Kind: "Type", Recipient: "À", Sent: "Envoyé", OptOuts: "Désabonnements", Address: "Adresse", Category: "Messages", Since: "Depuis",
	Invitations: "Invitations", Expires: "Expire", Opened: "Ouverte", Revoked: "Révoquée", Sessions: "Connexions", LastSeen: "Dernière activité", Requests: "Vos demandes",
	RequestTitle:       "Demander une rectification ou un effacement",
	RequestIntro:       "Le club reçoit votre demande par e-mail et vous informe par e-mail lorsqu'elle est traitée. Les adhésions et les paiements restent dans la comptabilité du club, comme la loi l'exige, sans votre nom.",
	RequestKind:        "Que demandez-vous ?",
	Correction:         "Rectifier mes données",
	Erasure:            "Effacer mes données",
	About:              "Pour qui ?",
	WholeHousehold:     "Tout le foyer",
	RequestText:        "Que faut-il changer ?",
	RequestHint:        "Pour une rectification, indiquez ce qui est faux et ce qui est juste (2000 caractères au plus).",
	RequestSend:        "Envoyer la demande",
	RequestSent:        "Merci. Votre demande a été envoyée au club ; vous serez informé par e-mail lorsqu'elle sera traitée.",
	RequestInvalid:     "La demande n'a pas pu être envoyée : choisissez ce que vous demandez et, pour une rectification, indiquez ce qui doit changer.",
	LinkFromOverview:   "Vos données",
	NavRequests:        "Demandes de données",
	StaffTitle:         "Données personnelles",
	StaffExport:        "Télécharger l'export (JSON)",
	EraseTitle:         "Effacer cette personne",
	EraseIntro:         "Remplace ou supprime les données de la personne partout où elles sont conservées ; les commandes, paiements et montants restent dans la comptabilité avec le nom remplacé. Refusé tant qu'une adhésion est active ou un paiement ouvert.",
	Force:              "Effacer malgré une adhésion active ou un paiement ouvert",
	ForceHint:          "Administrateurs seulement ; le journal d'audit enregistre que l'effacement a été forcé et pourquoi.",
	EraseButton:        "Effacer…",
	ConfirmErase:       "Effacer les données de cette personne ?",
	ConfirmEraseDetail: "C'est irréversible. Noms, adresse, date de naissance et réponses sont remplacés partout ; la comptabilité garde les montants.",
	DoneErased:         "Les données de la personne ont été effacées.",
	RequestsTitle:      "Demandes de données",
	RequestsIntro:      "Les demandes de rectification ou d'effacement des membres, depuis leur page « Vos données ». Marquez-en une comme traitée quand vous y avez répondu : le foyer en est informé par e-mail.",
	MarkDone:           "Marquer comme traitée",
	Note:               "Note au membre (facultative)",
	DoneRequest:        "La demande est traitée ; le foyer en est informé par e-mail.",
	Open:               "ouverte",
	Done:               "traitée",
	OpenPerson:         "Données personnelles",
	MailNewSubject:     "Demande de données d'un membre ({{.Kind}})",
	MailNewBody:        "Un membre demande : {{.Kind}}.\nConcerne : {{.About}}\nFoyer : {{.Household}}\n\n{{.Message}}\n\nLa demande figure sur la page {{.URL}}",
	MailDoneSubject:    "Votre demande à {{.Club}} est traitée",
	MailDoneBody:       "Bonjour,\n\nvotre demande concernant vos données ({{.Kind}}) a été traitée par {{.Club}}.",
	MailNote:           "Note du club :",
}

var personalDataTexts = map[string]*PersonalDataTexts{"en": &PersonalDataText, "de": &PersonalDataTextDE, "fr": &PersonalDataTextFR}

// PersonalDataTextIn returns the texts in ctx's language, else English.
func PersonalDataTextIn(ctx context.Context) *PersonalDataTexts {
	return PersonalDataTextFor(lang.Of(ctx).Code)
}

// PersonalDataTextFor returns the texts in the language code, else English.
func PersonalDataTextFor(code string) *PersonalDataTexts {
	if t, ok := personalDataTexts[code]; ok {
		return t
	}
	return &PersonalDataText
}
