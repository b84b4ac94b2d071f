package views

import (
	"context"
	"strings"

	"portal/views/lang"
)

// PaymentMethodTexts are the texts of the payment-method choice: on the
// review page, on the pay link of an unpaid order, and the staff setup's
// payment methods section (issue 29).
type PaymentMethodTexts struct {
	Legend, Stripe, StripeHint, BankTransfer, BankTransferHint, DirectDebit, DirectDebitHint, Test, TestHint,
	PayTitle, PayIntro, PayContinue, PayTotal, DebitTitle, DebitIntro, DebitCreditor, DebitCreditorID,
	MandateHeading, MandateHolder, MandateIBAN, MandateBIC, MandateText, MandateConsent, MandateSign, MandateGiven, MandateReference,
	MandateAccount, MandateErrors, MandateReferenceLater string
	// A household's mandate offered again (issue 29).
	MandateDue, MandateHeldIntro, MandateSigned, MandateKeep, MandateKeepHint, MandateChangeHeading, MandateChangeHint,
	MandateChangeConsent, MandateChange, MandateChangeErrors, MandateRevokeHeading, MandateRevokeHint, MandateRevoke string
	SetupTitle, SetupIntro, SetupMethods, SetupMethodsHint, SetupDefault, SetupCreditorID, SetupCreditorIDHint,
	SetupPrenotification, SetupPrenotificationHint, SetupFileVersion, SetupSave, SetupSaved string
}

// PaymentMethodText holds those texts in English.
var PaymentMethodText = PaymentMethodTexts{
	Legend:                   "How would you like to pay?",
	Stripe:                   "Online payment (card and other methods)",
	StripeHint:               "You pay now on the payment provider's secure page.",
	BankTransfer:             "Bank transfer",
	BankTransferHint:         "You transfer the amount to the club's account with the reference shown.",
	DirectDebit:              "SEPA Direct Debit",
	DirectDebitHint:          "You authorise the club to collect the amount from your account.",
	Test:                     "Test payment",
	TestHint:                 "The development portal's test gateway.",
	PayTitle:                 "Choose how to pay",
	PayIntro:                 "Your registration is waiting for payment. Choose how you would like to pay.",
	PayContinue:              "Continue",
	PayTotal:                 "Amount",
	DebitTitle:               "Payment by SEPA Direct Debit",
	DebitIntro:               "The club collects this amount from your account by SEPA Direct Debit. Until it is collected your registration waits for payment.",
	DebitCreditor:            "Creditor",
	DebitCreditorID:          "Creditor Identifier",
	MandateHeading:           "SEPA Direct Debit Mandate",
	MandateHolder:            "Account holder",
	MandateIBAN:              "IBAN",
	MandateBIC:               "BIC (optional)",
	MandateText:              "Mandate text",
	MandateConsent:           "I give this SEPA Direct Debit mandate.",
	MandateSign:              "Give the mandate",
	MandateGiven:             "Thank you: your mandate is recorded. The club collects the amount from your account.",
	MandateReference:         "Mandate reference",
	MandateAccount:           "Account",
	MandateErrors:            "The mandate cannot be given as entered:",
	MandateReferenceLater:    "(given when you sign)",
	MandateDue:               "Collected on",
	MandateHeldIntro:         "You gave this mandate for an earlier registration. The club may collect this registration under it too: choose below.",
	MandateSigned:            "Signed on",
	MandateKeep:              "Collect under this mandate",
	MandateKeepHint:          "The club collects this amount from the account above; you are told of the date by e-mail.",
	MandateChangeHeading:     "Change the account",
	MandateChangeHint:        "The mandate and its reference stay the same; the club collects from the new account from now on.",
	MandateChangeConsent:     "I authorise the club to collect from this account under the mandate above.",
	MandateChange:            "Change the account and collect",
	MandateChangeErrors:      "The account cannot be changed as entered:",
	MandateRevokeHeading:     "Revoke the mandate",
	MandateRevokeHint:        "The club no longer collects under this mandate. You may then give a new mandate or pay another way.",
	MandateRevoke:            "Revoke the mandate",
	SetupTitle:               "Payment methods",
	SetupIntro:               "The methods your members choose from when they confirm a registration. With one method they are not asked.",
	SetupMethods:             "Offered methods",
	SetupMethodsHint:         "Each method needs its settings: Stripe its keys, bank transfer and direct debit the club's account, direct debit also the Creditor Identifier.",
	SetupDefault:             "Default method",
	SetupCreditorID:          "SEPA Creditor Identifier",
	SetupCreditorIDHint:      "As your bank or the national authority issued it, for example DE98ZZZ09999999999.",
	SetupPrenotification:     "Pre-notification (calendar days)",
	SetupPrenotificationHint: "How long before a collection the member is told of it: 14 days unless you state a shorter period, which the mandate text then states.",
	SetupFileVersion:         "Collection file version",
	SetupSave:                "Save payment methods",
	SetupSaved:               "Payment methods saved.",
}

// paymentMethodTextDE are those texts in German (formal: Sie).
var paymentMethodTextDE = PaymentMethodTexts{
	Legend:                   "Wie möchten Sie bezahlen?",
	Stripe:                   "Online-Zahlung (Karte und weitere Verfahren)",
	StripeHint:               "Sie bezahlen jetzt auf der sicheren Seite des Zahlungsanbieters.",
	BankTransfer:             "Überweisung",
	BankTransferHint:         "Sie überweisen den Betrag mit der angegebenen Referenz auf das Konto des Vereins.",
	DirectDebit:              "SEPA-Lastschrift",
	DirectDebitHint:          "Sie ermächtigen den Verein, den Betrag von Ihrem Konto einzuziehen.",
	Test:                     "Testzahlung",
	TestHint:                 "Das Test-Gateway des Entwicklungsportals.",
	PayTitle:                 "Zahlungsart wählen",
	PayIntro:                 "Ihre Anmeldung wartet auf die Zahlung. Wählen Sie, wie Sie bezahlen möchten.",
	PayContinue:              "Weiter",
	PayTotal:                 "Betrag",
	DebitTitle:               "Zahlung per SEPA-Lastschrift",
	DebitIntro:               "Der Verein zieht diesen Betrag per SEPA-Lastschrift von Ihrem Konto ein. Bis dahin wartet Ihre Anmeldung auf die Zahlung.",
	DebitCreditor:            "Zahlungsempfänger",
	DebitCreditorID:          "Gläubiger-Identifikationsnummer",
	MandateHeading:           "SEPA-Lastschriftmandat",
	MandateHolder:            "Kontoinhaber",
	MandateIBAN:              "IBAN",
	MandateBIC:               "BIC (optional)",
	MandateText:              "Mandatstext",
	MandateConsent:           "Ich erteile dieses SEPA-Lastschriftmandat.",
	MandateSign:              "Mandat erteilen",
	MandateGiven:             "Vielen Dank: Ihr Mandat ist erfasst. Der Verein zieht den Betrag von Ihrem Konto ein.",
	MandateReference:         "Mandatsreferenz",
	MandateAccount:           "Konto",
	MandateErrors:            "Das Mandat kann so nicht erteilt werden:",
	MandateReferenceLater:    "(wird bei der Erteilung vergeben)",
	MandateDue:               "Einzug am",
	MandateHeldIntro:         "Dieses Mandat haben Sie für eine frühere Anmeldung erteilt. Der Verein kann auch diese Anmeldung darüber einziehen: Bitte wählen Sie.",
	MandateSigned:            "Erteilt am",
	MandateKeep:              "Über dieses Mandat einziehen",
	MandateKeepHint:          "Der Verein zieht den Betrag vom obigen Konto ein; das Datum erfahren Sie per E-Mail.",
	MandateChangeHeading:     "Konto ändern",
	MandateChangeHint:        "Mandat und Mandatsreferenz bleiben gleich; der Verein zieht künftig vom neuen Konto ein.",
	MandateChangeConsent:     "Ich ermächtige den Verein, unter dem obigen Mandat von diesem Konto einzuziehen.",
	MandateChange:            "Konto ändern und einziehen",
	MandateChangeErrors:      "Das Konto kann so nicht geändert werden:",
	MandateRevokeHeading:     "Mandat widerrufen",
	MandateRevokeHint:        "Der Verein zieht über dieses Mandat nichts mehr ein. Danach können Sie ein neues Mandat erteilen oder anders bezahlen.",
	MandateRevoke:            "Mandat widerrufen",
	SetupTitle:               "Zahlungsarten",
	SetupIntro:               "Die Zahlungsarten, zwischen denen Ihre Mitglieder beim Bestätigen einer Anmeldung wählen. Bei nur einer werden sie nicht gefragt.",
	SetupMethods:             "Angebotene Zahlungsarten",
	SetupMethodsHint:         "Jede Zahlungsart braucht ihre Einstellungen: Stripe die Schlüssel, Überweisung und Lastschrift das Vereinskonto, die Lastschrift auch die Gläubiger-Identifikationsnummer.",
	SetupDefault:             "Standard-Zahlungsart",
	SetupCreditorID:          "Gläubiger-Identifikationsnummer",
	SetupCreditorIDHint:      "Wie von der Bundesbank oder der nationalen Stelle vergeben, zum Beispiel DE98ZZZ09999999999.",
	SetupPrenotification:     "Vorabankündigung (Kalendertage)",
	SetupPrenotificationHint: "Wie lange vor dem Einzug das Mitglied davon erfährt: 14 Tage, außer Sie nennen eine kürzere Frist, die dann im Mandatstext steht.",
	SetupFileVersion:         "Version der Einzugsdatei",
	SetupSave:                "Zahlungsarten speichern",
	SetupSaved:               "Zahlungsarten gespeichert.",
}

// paymentMethodTextFR are those texts in French (formal: vous).
var paymentMethodTextFR = PaymentMethodTexts{
	Legend:                   "Comment souhaitez-vous payer ?",
	Stripe:                   "Paiement en ligne (carte et autres moyens)",
	StripeHint:               "Vous payez maintenant sur la page sécurisée du prestataire de paiement.",
	BankTransfer:             "Virement bancaire",
	BankTransferHint:         "Vous virez le montant sur le compte du club avec la référence indiquée.",
	DirectDebit:              "Prélèvement SEPA",
	DirectDebitHint:          "Vous autorisez le club à prélever le montant sur votre compte.",
	Test:                     "Paiement de test",
	TestHint:                 "La passerelle de test du portail de développement.",
	PayTitle:                 "Choisir le mode de paiement",
	PayIntro:                 "Votre inscription attend son paiement. Choisissez comment vous souhaitez payer.",
	PayContinue:              "Continuer",
	PayTotal:                 "Montant",
	DebitTitle:               "Paiement par prélèvement SEPA",
	DebitIntro:               "Le club prélève ce montant sur votre compte par prélèvement SEPA. D'ici là, votre inscription attend son paiement.",
	DebitCreditor:            "Créancier",
	DebitCreditorID:          "Identifiant créancier SEPA",
	MandateHeading:           "Mandat de prélèvement SEPA",
	MandateHolder:            "Titulaire du compte",
	MandateIBAN:              "IBAN",
	MandateBIC:               "BIC (facultatif)",
	MandateText:              "Texte du mandat",
	MandateConsent:           "Je donne ce mandat de prélèvement SEPA.",
	MandateSign:              "Donner le mandat",
	MandateGiven:             "Merci : votre mandat est enregistré. Le club prélève le montant sur votre compte.",
	MandateReference:         "Référence du mandat",
	MandateAccount:           "Compte",
	MandateErrors:            "Le mandat ne peut pas être donné tel quel :",
	MandateReferenceLater:    "(attribuée à la signature)",
	MandateDue:               "Prélevé le",
	MandateHeldIntro:         "Vous avez donné ce mandat pour une inscription précédente. Le club peut aussi prélever cette inscription avec lui : choisissez ci-dessous.",
	MandateSigned:            "Signé le",
	MandateKeep:              "Prélever avec ce mandat",
	MandateKeepHint:          "Le club prélève ce montant sur le compte ci-dessus ; la date vous est communiquée par e-mail.",
	MandateChangeHeading:     "Changer de compte",
	MandateChangeHint:        "Le mandat et sa référence restent les mêmes ; le club prélève désormais sur le nouveau compte.",
	MandateChangeConsent:     "J'autorise le club à prélever sur ce compte au titre du mandat ci-dessus.",
	MandateChange:            "Changer de compte et prélever",
	MandateChangeErrors:      "Le compte ne peut pas être changé tel quel :",
	MandateRevokeHeading:     "Révoquer le mandat",
	MandateRevokeHint:        "Le club ne prélève plus rien avec ce mandat. Vous pouvez ensuite donner un nouveau mandat ou payer autrement.",
	MandateRevoke:            "Révoquer le mandat",
	SetupTitle:               "Modes de paiement",
	SetupIntro:               "Les modes entre lesquels vos membres choisissent en confirmant une inscription. Avec un seul mode, la question n'est pas posée.",
	SetupMethods:             "Modes proposés",
	SetupMethodsHint:         "Chaque mode a besoin de ses réglages : Stripe ses clés, le virement et le prélèvement le compte du club, le prélèvement aussi l'identifiant créancier SEPA.",
	SetupDefault:             "Mode par défaut",
	SetupCreditorID:          "Identifiant créancier SEPA (ICS)",
	SetupCreditorIDHint:      "Tel que votre banque ou l'autorité nationale l'a attribué, par exemple FR72ZZZ123456.",
	SetupPrenotification:     "Pré-notification (jours calendaires)",
	SetupPrenotificationHint: "Combien de temps avant un prélèvement le membre en est informé : 14 jours sauf si vous indiquez un délai plus court, que le texte du mandat mentionne alors.",
	SetupFileVersion:         "Version du fichier de prélèvement",
	SetupSave:                "Enregistrer les modes de paiement",
	SetupSaved:               "Modes de paiement enregistrés.",
}

var paymentMethodTexts = map[string]*PaymentMethodTexts{"en": &PaymentMethodText,
	"de": withEnglish(paymentMethodTextDE, PaymentMethodText), "fr": withEnglish(paymentMethodTextFR, PaymentMethodText)}

// PaymentMethodTextIn is the payment-method texts in the language of ctx.
func PaymentMethodTextIn(ctx context.Context) *PaymentMethodTexts {
	if t, ok := paymentMethodTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &PaymentMethodText
}

// MethodName is a payment method's name and hint for members.
func (t *PaymentMethodTexts) MethodName(method string) (name, hint string) {
	switch method {
	case "stripe":
		return t.Stripe, t.StripeHint
	case "bank_transfer":
		return t.BankTransfer, t.BankTransferHint
	case "direct_debit":
		return t.DirectDebit, t.DirectDebitHint
	case "test":
		return t.Test, t.TestHint
	}
	return method, ""
}

// PaymentMethodChoiceModel is the radio group of the payment methods:
// shown only when there is something to choose.
type PaymentMethodChoiceModel struct {
	Methods []string // the club's, its default first
	Current string   // the method checked
}

// Shown says whether the member has a choice.
func (m PaymentMethodChoiceModel) Shown() bool { return len(m.Methods) > 1 }

// PayChooseModel is the pay link of an unpaid order whose club offers
// several methods: the choice again, then on to the chosen method.
type PayChooseModel struct {
	Chrome
	Action  string
	Total   string
	Methods PaymentMethodChoiceModel
}

// StaffPaymentMethodsForm is the setup page's payment methods form, as
// stored or as typed after a refused change.
type StaffPaymentMethodsForm struct {
	Action              string
	Options             []StaffPaymentMethodOption
	Default             string
	CreditorID          string
	PrenotificationDays int
	FileVersion         string
	// CollectionDay ("" for none) and ReturnFee (an amount, "" for none)
	// are as stored or as typed.
	CollectionDay, ReturnFee string
	Errors                   map[string]string
}

// StaffPaymentMethodOption is one method the club may offer.
type StaffPaymentMethodOption struct {
	Value, Label string
	Checked      bool
}

// PayByDebitModel is the pay link of an order paid by direct debit: what
// will be collected and by whom.
type PayByDebitModel struct {
	Chrome
	Total, Creditor, CreditorID string
	// Action is where the mandate form posts; "" once a mandate is given.
	Action string
	// Text is the mandate text (with its reference once given).
	Text string
	// Given: the mandate's reference and masked account.
	Reference, Account string
	// Due is the collection date once the order is collected under it.
	Due string
	// Holder, IBAN, BIC are as typed after a refusal; Errors by field.
	Holder, IBAN, BIC string
	Errors            map[string]string
	// Held is the household's mandate offered for this order (keep it,
	// change its account, revoke it); nil when there is none to offer.
	// The account change takes Holder, IBAN, BIC and Errors.
	Held *HeldMandateModel
}

// HeldMandateModel is a household's mandate offered again on the pay
// link of its next direct-debit order.
type HeldMandateModel struct {
	ID                                     string // the mandate's id, posted back with each choice
	Holder, Account, Reference, Signed     string
	Text                                   string // as signed
	KeepAction, ChangeAction, RevokeAction string
}

// StaffMandateModel is a registration's SEPA mandate as staff see it.
type StaffMandateModel struct {
	Reference, CreditorID, Holder, IBAN, BIC, Language, Signed, Version, Text string
	// Ended says when and why the mandate ended; "" while it holds.
	Ended string
	// RevokeAction is where staff revoke it (treasurers and
	// administrators, while it holds); "" otherwise. Registration is the
	// registration's id the form posts, to come back to its page.
	RevokeAction, Registration string
}

// StaffMandateTexts label a mandate on the staff registration page.
type StaffMandateTexts struct {
	Heading, Reference, CreditorID, Holder, IBAN, BIC, Language, Signed, Version, Text    string
	Ended, Revoke, RevokeHint, RevokeQuestion, RevokeDetail, RevokeYes, RevokeNo, Revoked string
	// EndReasons name engine.MandateEnd... (a return's reason code follows "return:").
	EndReasons map[string]string
}

var staffMandateTexts = map[string]*StaffMandateTexts{
	"en": {Heading: "SEPA Direct Debit mandate", Reference: "Mandate reference", CreditorID: "Creditor Identifier", Holder: "Account holder",
		IBAN: "IBAN", BIC: "BIC", Language: "Language", Signed: "Signed", Version: "Text version", Text: "Text as signed",
		Ended: "Ended", Revoke: "Revoke the mandate", RevokeHint: "When the member revokes it by letter or at the desk: nothing is collected under it any more.",
		RevokeQuestion: "Revoke mandate %s?", RevokeDetail: "Nothing is collected under it any more, and orders not yet in a collection run are no longer due; the member gives a new mandate or pays another way. This cannot be undone.",
		RevokeYes: "Yes, revoke the mandate", RevokeNo: "No, keep it", Revoked: "The mandate is revoked.",
		EndReasons: map[string]string{"revoked_by_member": "revoked by the member", "revoked_by_staff": "revoked by staff", "expired": "expired (36 months unused)", "return:": "ended by a returned debit"}},
	"de": {Heading: "SEPA-Lastschriftmandat", Reference: "Mandatsreferenz", CreditorID: "Gläubiger-ID", Holder: "Kontoinhaber",
		IBAN: "IBAN", BIC: "BIC", Language: "Sprache", Signed: "Erteilt", Version: "Textversion", Text: "Text wie erteilt",
		Ended: "Beendet", Revoke: "Mandat widerrufen", RevokeHint: "Wenn das Mitglied es schriftlich oder am Schalter widerruft: Darüber wird nichts mehr eingezogen.",
		RevokeQuestion: "Mandat %s widerrufen?", RevokeDetail: "Darüber wird nichts mehr eingezogen, und Bestellungen, die noch in keinem Einzugslauf sind, sind nicht mehr fällig; das Mitglied erteilt ein neues Mandat oder zahlt anders. Das lässt sich nicht rückgängig machen.",
		RevokeYes: "Ja, Mandat widerrufen", RevokeNo: "Nein, behalten", Revoked: "Das Mandat ist widerrufen.",
		EndReasons: map[string]string{"revoked_by_member": "vom Mitglied widerrufen", "revoked_by_staff": "vom Verein widerrufen", "expired": "abgelaufen (36 Monate ungenutzt)", "return:": "durch eine Rücklastschrift beendet"}},
	"fr": {Heading: "Mandat de prélèvement SEPA", Reference: "Référence du mandat", CreditorID: "Identifiant créancier", Holder: "Titulaire du compte",
		IBAN: "IBAN", BIC: "BIC", Language: "Langue", Signed: "Signé", Version: "Version du texte", Text: "Texte signé",
		Ended: "Fin", Revoke: "Révoquer le mandat", RevokeHint: "Quand le membre le révoque par courrier ou au guichet : plus rien n'est prélevé avec lui.",
		RevokeQuestion: "Révoquer le mandat %s ?", RevokeDetail: "Plus rien n'est prélevé avec lui, et les commandes qui ne sont pas encore dans un lot de prélèvement ne sont plus dues ; le membre donne un nouveau mandat ou paie autrement. C'est irréversible.",
		RevokeYes: "Oui, révoquer le mandat", RevokeNo: "Non, le garder", Revoked: "Le mandat est révoqué.",
		EndReasons: map[string]string{"revoked_by_member": "révoqué par le membre", "revoked_by_staff": "révoqué par le club", "expired": "expiré (36 mois sans usage)", "return:": "terminé par un prélèvement rejeté"}},
}

// EndReason names why a mandate ended (engine.MandateEnd...), with a
// returned debit's reason code.
func (t *StaffMandateTexts) EndReason(reason string) string {
	if code, ok := strings.CutPrefix(reason, "return:"); ok {
		return t.EndReasons["return:"] + " (" + code + ")"
	}
	if w, ok := t.EndReasons[reason]; ok {
		return w
	}
	return reason
}

// StaffMandateTextIn is those labels in the language of ctx.
func StaffMandateTextIn(ctx context.Context) *StaffMandateTexts {
	if t, ok := staffMandateTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return staffMandateTexts["en"]
}
