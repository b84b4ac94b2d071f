package views

import (
	"context"
	"strings"
	"unicode"

	"portal/views/lang"
)

// StaffAuditTexts are the texts of the audit log's filters and entries
// (the rest of the page is in StaffTexts): who did what to which record,
// when, in words.
type StaffAuditTexts struct {
	Filter, Actor, Action, Record, RecordID, From, Until, Apply, Reset, Any, Newest, CommandLine, Filtered string
	// Kinds of record.
	KindRegistration, KindStaff, KindOrganisation, KindPeriod, KindMembershipType, KindDefinition, KindInvitation,
	KindJob, KindBankCredit, KindWebhook, KindWebhookDelivery, KindAPIKey, KindPerson, KindDataRequest, KindDebitRun string
	// Words of a change.
	Yes, No, Empty2, Removed, RefundDue, RefundDone string
}

// StaffAuditText holds those texts in English.
var StaffAuditText = StaffAuditTexts{
	Filter:              "Filter the log",
	Actor:               "Who",
	Action:              "Action",
	Record:              "Kind of record",
	RecordID:            "Record number",
	From:                "From",
	Until:               "Until",
	Apply:               "Apply",
	Reset:               "Show all",
	Any:                 "Any",
	Newest:              "Newest entries",
	CommandLine:         "Command line",
	Filtered:            "No entries match the filter.",
	KindRegistration:    "Registration %s",
	KindStaff:           "Staff member %s",
	KindOrganisation:    "Club settings",
	KindPeriod:          "Period %s",
	KindMembershipType:  "Membership type %s",
	KindDefinition:      "Registration form %s",
	KindInvitation:      "Invitation %s",
	KindJob:             "Background job %s",
	KindBankCredit:      "Bank credit %s",
	KindWebhook:         "Webhook %s",
	KindWebhookDelivery: "Webhook delivery %s",
	KindAPIKey:          "API key %s",
	KindPerson:          "Person %s",
	KindDataRequest:     "Data request %s",
	KindDebitRun:        "Direct debit collection run %s",
	Yes:                 "yes",
	No:                  "no",
	Empty2:              "(empty)",
	Removed:             "(none)",
	RefundDue:           "to be refunded",
	RefundDone:          "refunded",
}

// staffAuditTextDE are those texts in German (formal: Sie).
var staffAuditTextDE = StaffAuditTexts{
	Filter:              "Protokoll filtern",
	Actor:               "Wer",
	Action:              "Aktion",
	Record:              "Art des Eintrags",
	RecordID:            "Nummer",
	From:                "Von",
	Until:               "Bis",
	Apply:               "Anwenden",
	Reset:               "Alle zeigen",
	Any:                 "Alle",
	Newest:              "Neueste Einträge",
	CommandLine:         "Kommandozeile",
	Filtered:            "Keine Einträge passen zum Filter.",
	KindRegistration:    "Anmeldung %s",
	KindStaff:           "Mitarbeiter/in %s",
	KindOrganisation:    "Vereinseinstellungen",
	KindPeriod:          "Zeitraum %s",
	KindMembershipType:  "Mitgliedschaftsart %s",
	KindDefinition:      "Anmeldeformular %s",
	KindInvitation:      "Einladung %s",
	KindJob:             "Hintergrundaufgabe %s",
	KindBankCredit:      "Gutschrift %s",
	KindWebhook:         "Webhook %s",
	KindWebhookDelivery: "Webhook-Zustellung %s",
	KindAPIKey:          "API-Schlüssel %s",
	KindPerson:          "Person %s",
	KindDataRequest:     "Datenanfrage %s",
	KindDebitRun:        "Lastschrift-Einzug %s",
	Yes:                 "ja",
	No:                  "nein",
	Empty2:              "(leer)",
	Removed:             "(keiner)",
	RefundDue:           "zu erstatten",
	RefundDone:          "erstattet",
}

// staffAuditTextFR are those texts in French (formal: vous).
var staffAuditTextFR = StaffAuditTexts{
	Filter:              "Filtrer le journal",
	Actor:               "Qui",
	Action:              "Action",
	Record:              "Type d’objet",
	RecordID:            "Numéro",
	From:                "Du",
	Until:               "Au",
	Apply:               "Appliquer",
	Reset:               "Tout afficher",
	Any:                 "Tous",
	Newest:              "Entrées les plus récentes",
	CommandLine:         "Ligne de commande",
	Filtered:            "Aucune entrée ne correspond au filtre.",
	KindRegistration:    "Inscription %s",
	KindStaff:           "Membre du personnel %s",
	KindOrganisation:    "Paramètres du club",
	KindPeriod:          "Période %s",
	KindMembershipType:  "Type d’adhésion %s",
	KindDefinition:      "Formulaire d’inscription %s",
	KindInvitation:      "Invitation %s",
	KindJob:             "Tâche de fond %s",
	KindBankCredit:      "Crédit bancaire %s",
	KindWebhook:         "Webhook %s",
	KindWebhookDelivery: "Envoi de webhook %s",
	KindAPIKey:          "Clé d’API %s",
	KindPerson:          "Personne %s",
	KindDataRequest:     "Demande sur les données %s",
	KindDebitRun:        "Remise de prélèvements %s",
	Yes:                 "oui",
	No:                  "non",
	Empty2:              "(vide)",
	Removed:             "(aucun)",
	RefundDue:           "à rembourser",
	RefundDone:          "remboursé",
}

var staffAuditTexts = map[string]*StaffAuditTexts{"en": &StaffAuditText,
	"de": withEnglish(staffAuditTextDE, StaffAuditText), "fr": withEnglish(staffAuditTextFR, StaffAuditText)}

// StaffAuditTextIn is the audit log's texts in the language of ctx.
func StaffAuditTextIn(ctx context.Context) *StaffAuditTexts {
	if t, ok := staffAuditTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffAuditText
}

// auditActionWords name the audited actions (engine AuditEntry.Action)
// per language.
var auditActionWords = map[string]map[string]string{
	"en": {
		"credit.assign": "assigned a bank credit", "credit.ignore": "ignored a bank credit", "credit.return": "returned a bank credit",
		"credit.unmatched": "recorded an unmatched bank credit", "definition.activate": "activated a registration form",
		"definition.deactivate": "deactivated a registration form", "definition.import": "uploaded a registration form",
		"invitation.create": "sent an invitation", "invitation.revoke": "revoked an invitation", "mandate.revoke": "revoked a direct debit mandate", "job.retry": "retried a background job",
		"job.run": "ran a background job", "membership_type.add": "added a membership type", "membership_type.delete": "deleted a membership type",
		"membership_type.update": "changed a membership type", "message_settings.update": "changed the message settings",
		"organisation.update": "changed the club settings", "payment.capture": "recorded a payment received", "payment.debit_return": "imported a returned direct debit",
		"payment.refund": "refunded a payment", "payment.refund_paid_back": "marked a refund as paid back",
		"payment_settings.update": "changed the payment settings", "period.add": "added a period", "period.update": "changed a period",
		"persons.import": "imported persons", "persons.unlink": "unlinked persons", "price_rules.replace": "changed the prices",
		"registration.cancel": "cancelled a registration", "registration.resend_confirmation": "sent the confirmation again",
		"registration.resend_payment_link": "sent the payment link again", "registration.reset": "reset a registration",
		"staff.add": "added a staff member", "staff.bind": "linked a staff member's sign-in", "staff.enable": "enabled a staff member",
		"staff.remove": "disabled a staff member", "staff.role": "changed a staff member's role", "webhook.create": "added a webhook",
		"webhook.delete": "deleted a webhook", "webhook.replay": "sent a webhook delivery again", "webhook.rotate_secret": "renewed a webhook's secret",
		"webhook.update": "changed a webhook",
		"api_key.create": "made an API key", "api_key.revoke": "revoked an API key", "period.texts": "translated a period's names",
		"data_request.create": "asked about their data", "data_request.done": "answered a data request", "person.erase": "erased a person's data",
		"retention_settings.update": "changed how long data is kept",
		"debit_run.create":          "prepared a direct debit collection run", "debit_run.cancel": "cancelled a direct debit collection run",
		"debit_run.send": "marked a direct debit collection run as sent to the bank",
	},
	"de": {
		"credit.assign": "hat eine Gutschrift zugeordnet", "credit.ignore": "hat eine Gutschrift ignoriert", "credit.return": "hat eine Gutschrift zurücküberwiesen",
		"credit.unmatched": "hat eine nicht zuordenbare Gutschrift erfasst", "definition.activate": "hat ein Anmeldeformular aktiviert",
		"definition.deactivate": "hat ein Anmeldeformular deaktiviert", "definition.import": "hat ein Anmeldeformular hochgeladen",
		"invitation.create": "hat eine Einladung gesendet", "invitation.revoke": "hat eine Einladung zurückgezogen", "mandate.revoke": "hat ein Lastschriftmandat widerrufen", "job.retry": "hat eine Hintergrundaufgabe erneut versucht",
		"job.run": "hat eine Hintergrundaufgabe ausgeführt", "membership_type.add": "hat eine Mitgliedschaftsart hinzugefügt", "membership_type.delete": "hat eine Mitgliedschaftsart gelöscht",
		"membership_type.update": "hat eine Mitgliedschaftsart geändert", "message_settings.update": "hat die Nachrichteneinstellungen geändert",
		"organisation.update": "hat die Vereinseinstellungen geändert", "payment.capture": "hat einen Zahlungseingang erfasst", "payment.debit_return": "hat eine Rücklastschrift importiert",
		"payment.refund": "hat eine Zahlung erstattet", "payment.refund_paid_back": "hat eine Erstattung als zurücküberwiesen markiert",
		"payment_settings.update": "hat die Zahlungseinstellungen geändert", "period.add": "hat einen Zeitraum hinzugefügt", "period.update": "hat einen Zeitraum geändert",
		"persons.import": "hat Personen importiert", "persons.unlink": "hat Personen getrennt", "price_rules.replace": "hat die Preise geändert",
		"registration.cancel": "hat eine Anmeldung storniert", "registration.resend_confirmation": "hat die Bestätigung erneut gesendet",
		"registration.resend_payment_link": "hat den Zahlungslink erneut gesendet", "registration.reset": "hat eine Anmeldung zurückgesetzt",
		"staff.add": "hat eine/n Mitarbeiter/in hinzugefügt", "staff.bind": "hat die Anmeldung einer/s Mitarbeiter/in verknüpft", "staff.enable": "hat eine/n Mitarbeiter/in aktiviert",
		"staff.remove": "hat eine/n Mitarbeiter/in deaktiviert", "staff.role": "hat die Rolle einer/s Mitarbeiter/in geändert", "webhook.create": "hat einen Webhook hinzugefügt",
		"webhook.delete": "hat einen Webhook gelöscht", "webhook.replay": "hat eine Webhook-Zustellung erneut gesendet", "webhook.rotate_secret": "hat das Geheimnis eines Webhooks erneuert",
		"webhook.update": "hat einen Webhook geändert",
		"api_key.create": "hat einen API-Schlüssel erstellt", "api_key.revoke": "hat einen API-Schlüssel widerrufen", "period.texts": "hat die Texte eines Zeitraums übersetzt",
		"data_request.create": "hat eine Anfrage zu den eigenen Daten gestellt", "data_request.done": "hat eine Datenanfrage beantwortet", "person.erase": "hat die Daten einer Person gelöscht",
		"retention_settings.update": "hat die Aufbewahrungsfristen geändert",
		"debit_run.create":          "hat einen Lastschrift-Einzug vorbereitet", "debit_run.cancel": "hat einen Lastschrift-Einzug storniert",
		"debit_run.send": "hat einen Lastschrift-Einzug als bei der Bank eingereicht markiert",
	},
	"fr": {
		"credit.assign": "a attribué un crédit bancaire", "credit.ignore": "a ignoré un crédit bancaire", "credit.return": "a renvoyé un crédit bancaire",
		"credit.unmatched": "a enregistré un crédit bancaire non attribué", "definition.activate": "a activé un formulaire d’inscription",
		"definition.deactivate": "a désactivé un formulaire d’inscription", "definition.import": "a téléversé un formulaire d’inscription",
		"invitation.create": "a envoyé une invitation", "invitation.revoke": "a révoqué une invitation", "mandate.revoke": "a révoqué un mandat de prélèvement", "job.retry": "a relancé une tâche de fond",
		"job.run": "a exécuté une tâche de fond", "membership_type.add": "a ajouté un type d’adhésion", "membership_type.delete": "a supprimé un type d’adhésion",
		"membership_type.update": "a modifié un type d’adhésion", "message_settings.update": "a modifié les paramètres des messages",
		"organisation.update": "a modifié les paramètres du club", "payment.capture": "a enregistré un paiement reçu", "payment.debit_return": "a importé un prélèvement rejeté",
		"payment.refund": "a remboursé un paiement", "payment.refund_paid_back": "a marqué un remboursement comme effectué",
		"payment_settings.update": "a modifié les paramètres de paiement", "period.add": "a ajouté une période", "period.update": "a modifié une période",
		"persons.import": "a importé des personnes", "persons.unlink": "a dissocié des personnes", "price_rules.replace": "a modifié les prix",
		"registration.cancel": "a annulé une inscription", "registration.resend_confirmation": "a renvoyé la confirmation",
		"registration.resend_payment_link": "a renvoyé le lien de paiement", "registration.reset": "a réinitialisé une inscription",
		"staff.add": "a ajouté un membre du personnel", "staff.bind": "a lié la connexion d’un membre du personnel", "staff.enable": "a activé un membre du personnel",
		"staff.remove": "a désactivé un membre du personnel", "staff.role": "a modifié le rôle d’un membre du personnel", "webhook.create": "a ajouté un webhook",
		"webhook.delete": "a supprimé un webhook", "webhook.replay": "a renvoyé un envoi de webhook", "webhook.rotate_secret": "a renouvelé le secret d’un webhook",
		"webhook.update": "a modifié un webhook",
		"api_key.create": "a créé une clé d’API", "api_key.revoke": "a révoqué une clé d’API", "period.texts": "a traduit les textes d’une période",
		"data_request.create": "a fait une demande sur ses données", "data_request.done": "a répondu à une demande sur les données", "person.erase": "a effacé les données d’une personne",
		"retention_settings.update": "a modifié les durées de conservation",
		"debit_run.create":          "a préparé une remise de prélèvements", "debit_run.cancel": "a annulé une remise de prélèvements",
		"debit_run.send": "a marqué une remise de prélèvements comme envoyée à la banque",
	},
}

// AuditActionIn names an audited action in the language of ctx: in
// English when it has no translation, in words made of its code when it
// is not known at all.
func AuditActionIn(ctx context.Context, action string) string {
	if w, ok := auditActionWords[lang.Of(ctx).Code][action]; ok {
		return w
	}
	if w, ok := auditActionWords["en"][action]; ok {
		return w
	}
	return humanise(strings.ReplaceAll(action, ".", " "))
}

// auditFieldWords name the fields of changes per language.
var auditFieldWords = map[string]map[string]string{
	"en": {"status": "Status", "order_status": "Order status", "amount": "Amount", "note": "Note", "payment": "Payment", "reference": "Reference",
		"refund": "Refund", "refund_status": "Refund status", "role": "Role", "email": "E-mail", "name": "Name", "disabled": "Disabled",
		"active": "Active", "code": "Code", "label": "Label", "reason": "Reason", "subject": "Sign-in subject", "provider": "Payment provider",
		"version": "Version", "key": "Key", "persons": "Persons", "answers": "Answers", "mode": "Mode", "event": "Event", "kind": "Kind",
		"outcome": "Outcome", "from": "From", "error": "Error", "url": "Address", "events": "Events", "state": "State", "order": "Order"},
	"de": {"status": "Status", "order_status": "Bestellstatus", "amount": "Betrag", "note": "Notiz", "payment": "Zahlung", "reference": "Referenz",
		"refund": "Erstattung", "refund_status": "Erstattungsstatus", "role": "Rolle", "email": "E-Mail", "name": "Name", "disabled": "Deaktiviert",
		"active": "Aktiv", "code": "Code", "label": "Bezeichnung", "reason": "Grund", "subject": "Anmelde-Kennung", "provider": "Zahlungsanbieter",
		"version": "Version", "key": "Schlüssel", "persons": "Personen", "answers": "Antworten", "mode": "Modus", "event": "Ereignis", "kind": "Art",
		"outcome": "Ergebnis", "from": "Von", "error": "Fehler", "url": "Adresse", "events": "Ereignisse", "state": "Zustand", "order": "Bestellung"},
	"fr": {"status": "Statut", "order_status": "Statut de la commande", "amount": "Montant", "note": "Note", "payment": "Paiement", "reference": "Référence",
		"refund": "Remboursement", "refund_status": "Statut du remboursement", "role": "Rôle", "email": "E-mail", "name": "Nom", "disabled": "Désactivé",
		"active": "Actif", "code": "Code", "label": "Libellé", "reason": "Motif", "subject": "Identifiant de connexion", "provider": "Prestataire de paiement",
		"version": "Version", "key": "Clé", "persons": "Personnes", "answers": "Réponses", "mode": "Mode", "event": "Événement", "kind": "Type",
		"outcome": "Résultat", "from": "De", "error": "Erreur", "url": "Adresse", "events": "Événements", "state": "État", "order": "Commande"},
}

// AuditFieldIn names a changed field (its path "a.b" when nested) in the
// language of ctx; an unknown one in words made of its name.
func AuditFieldIn(ctx context.Context, field string) string {
	words := auditFieldWords[lang.Of(ctx).Code]
	var parts []string
	for _, p := range strings.Split(field, ".") {
		if w, ok := words[p]; ok {
			parts = append(parts, w)
		} else if w, ok := auditFieldWords["en"][p]; ok {
			parts = append(parts, w)
		} else {
			parts = append(parts, humanise(p))
		}
	}
	return strings.Join(parts, " › ")
}

// humanise writes a code as words: "order_status" and "orderStatus" as
// "Order status".
func humanise(code string) string {
	var b strings.Builder
	for i, r := range code {
		switch {
		case r == '_' || r == '-':
			b.WriteRune(' ')
		case unicode.IsUpper(r) && i > 0:
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	s := strings.TrimSpace(b.String())
	if s == "" {
		return code
	}
	rs := []rune(s)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}
