package directdebit

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// SEPA Direct Debit mandates (issue 29): the member of an order paid by
// direct debit authorises the club to collect from their account. The
// mandate text carries every element the EPC SDD Core rulebook requires
// (creditor name and identifier, mandate reference, the authorisation to
// the creditor and to the debtor's bank, the eight-week refund right) in
// the registration's language, and is stored exactly as signed.

// DebitMandate is a signed mandate.
type DebitMandate struct {
	bun.BaseModel  `bun:"table:debit_mandates"`
	ID             int64  `bun:"id,pk,autoincrement"`
	OrganisationID int64  `bun:"organisation_id,notnull"`
	UserKey        string `bun:"user_key,notnull"`
	CreditorID     string `bun:"creditor_id,notnull"`
	Reference      string `bun:"reference,notnull"`
	Holder         string `bun:"holder,notnull"`
	// HolderPersonID is the person of the household the holder is, when
	// the name given is one of theirs (engine.HouseholdPersonNamed, at
	// the write); nil for a holder outside the household. The holder's
	// data is theirs: their export lists it, their erasure takes it.
	HolderPersonID *int64     `bun:"holder_person_id"`
	IBAN           string     `bun:"iban,notnull"`
	BIC            string     `bun:"bic,notnull"`
	Language       string     `bun:"language,notnull"`
	Text           string     `bun:"text,notnull"`
	TextVersion    string     `bun:"text_version,notnull"`
	SignedAt       time.Time  `bun:"signed_at,notnull"`
	RevokedAt      *time.Time `bun:"revoked_at"`
	// EndReason says why a mandate ended (MandateEnd...); "" while it holds.
	EndReason string `bun:"end_reason,notnull"`
	// PreviousIBAN and PreviousBIC are the account before the member
	// changed it (AmendedAt), stated once in the next collection file
	// and cleared when that file is sent.
	PreviousIBAN string     `bun:"previous_iban,notnull"`
	PreviousBIC  string     `bun:"previous_bic,notnull"`
	AmendedAt    *time.Time `bun:"amended_at"`
	// LastCollectedAt is when a debit under the mandate was last sent to
	// the bank: a mandate unused for 36 months expires.
	LastCollectedAt *time.Time `bun:"last_collected_at"`
}

// Why a mandate ended (DebitMandate.EndReason).
const (
	MandateEndRevokedByMember = "revoked_by_member"
	MandateEndRevokedByStaff  = "revoked_by_staff"
	MandateEndExpired         = "expired"
	// MandateEndReturnPrefix is followed by the return reason code
	// (AC04, AC06, MD01) of a returned debit that ends the mandate.
	MandateEndReturnPrefix = "return:"
)

// MandateTextVersion names the wording of the mandate texts below; a
// stored mandate keeps the version it was signed in.
const MandateTextVersion = "sdd-core-2026-12"

// MandateTerms are what a mandate text names.
type MandateTerms struct {
	CreditorName, CreditorID, Reference string
	// PrenotificationDays is the club's pre-notification period; the text
	// states it when it is shorter than the rulebook's 14 days.
	PrenotificationDays int
}

// mandateTexts are the mandate's wording per language: %[1]s creditor
// name, %[2]s Creditor Identifier, %[3]s mandate reference.
var mandateTexts = map[string]string{
	"en": "SEPA Direct Debit Mandate. Creditor: %[1]s, Creditor Identifier %[2]s. Mandate reference: %[3]s. " +
		"By signing this mandate form, you authorise (A) %[1]s to send instructions to your bank to debit your account and " +
		"(B) your bank to debit your account in accordance with the instructions from %[1]s. As part of your rights, you are " +
		"entitled to a refund from your bank under the terms and conditions of your agreement with your bank. A refund must be " +
		"claimed within eight weeks starting from the date on which your account was debited. Your rights are explained in a " +
		"statement that you can obtain from your bank.",
	"de": "SEPA-Lastschriftmandat. Zahlungsempfänger: %[1]s, Gläubiger-Identifikationsnummer %[2]s. Mandatsreferenz: %[3]s. " +
		"Ich ermächtige %[1]s, Zahlungen von meinem Konto mittels Lastschrift einzuziehen. Zugleich weise ich mein " +
		"Kreditinstitut an, die von %[1]s auf mein Konto gezogenen Lastschriften einzulösen. Hinweis: Ich kann innerhalb von " +
		"acht Wochen, beginnend mit dem Belastungsdatum, die Erstattung des belasteten Betrages verlangen. Es gelten dabei die " +
		"mit meinem Kreditinstitut vereinbarten Bedingungen.",
	"fr": "Mandat de prélèvement SEPA. Créancier : %[1]s, identifiant créancier SEPA %[2]s. Référence unique du mandat : %[3]s. " +
		"En signant ce formulaire de mandat, vous autorisez (A) %[1]s à envoyer des instructions à votre banque pour débiter " +
		"votre compte, et (B) votre banque à débiter votre compte conformément aux instructions de %[1]s. Vous bénéficiez du " +
		"droit d'être remboursé par votre banque selon les conditions décrites dans la convention que vous avez passée avec " +
		"elle. Une demande de remboursement doit être présentée dans les huit semaines suivant la date de débit de votre compte.",
}

// prenotificationTexts state a pre-notification period shorter than 14 days.
var prenotificationTexts = map[string]string{
	"en": " You will be told of each debit at least %d calendar days before it is collected.",
	"de": " Die Vorabankündigung (Pre-Notification) erfolgt mindestens %d Kalendertage vor dem Einzug.",
	"fr": " Chaque prélèvement vous est notifié au moins %d jours calendaires avant son exécution.",
}

// MandateText is the mandate text in a language (en, de, fr; English for
// others) and the version of its wording.
func MandateText(language string, t MandateTerms) (text, version string) {
	f, ok := mandateTexts[language]
	if !ok {
		language, f = "en", mandateTexts["en"]
	}
	text = fmt.Sprintf(f, t.CreditorName, t.CreditorID, t.Reference)
	if t.PrenotificationDays > 0 && t.PrenotificationDays < payment.DefaultPrenotificationDays {
		text += fmt.Sprintf(prenotificationTexts[language], t.PrenotificationDays)
	}
	return text, MandateTextVersion
}

// MandateInput is what the member gives for a mandate.
type MandateInput struct {
	Holder, IBAN, BIC string
	// Consent is the explicit tick of the mandate text.
	Consent bool
	// Language is the registration's language, the text's.
	Language string
}

// DebitPage is what the pay link of a direct-debit order shows: the
// order, the terms, and either its mandate once the order is collected
// under it (Mandate, due on Order.DebitDueOn), or the household's mandate
// that holds, offered for this order (Held: keep it, change its account
// or revoke it), or neither (the form for a new mandate).
type DebitPage struct {
	Order   *engine.Order
	Terms   MandateTerms
	Mandate *DebitMandate
	Held    *DebitMandate
}

// debitTerms are the creditor's terms of an organisation's direct debit.
func debitTerms(ctx context.Context, db bun.IDB, orgID int64) (MandateTerms, error) {
	ps, err := payment.LoadPaymentSettings(ctx, db, orgID)
	if err != nil {
		return MandateTerms{}, err
	}
	if ps.DebitCreditorID == "" {
		return MandateTerms{}, engine.Errorf(engine.CodeConflict, "this club does not collect by direct debit")
	}
	return MandateTerms{CreditorName: ps.BankCreditorName, CreditorID: ps.DebitCreditorID, PrenotificationDays: ps.DebitPrenotificationDays}, nil
}

// DebitPageFor returns what the pay link of an unpaid direct-debit order shows.
func (s *Service) DebitPageFor(ctx context.Context, orderReference string) (_ *DebitPage, err error) {
	order, err := payment.Of(s.Service).UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	terms, err := debitTerms(ctx, s.DB(), order.OrganisationID)
	if err != nil {
		return nil, err
	}
	page := &DebitPage{Order: order, Terms: terms}
	if order.DebitMandateID != nil && order.DebitDueOn != nil {
		m := &DebitMandate{ID: *order.DebitMandateID}
		if err := s.DB().NewSelect().Model(m).WherePK().Scan(ctx); err != nil {
			return nil, fmt.Errorf("load mandate: %w", err)
		}
		if m.RevokedAt == nil {
			page.Mandate = m
			return page, nil
		}
	}
	if page.Held, err = heldMandate(ctx, s.DB(), order.OrganisationID, order.UserKey); err != nil {
		return nil, err
	}
	return page, nil
}

// GiveMandate stores the mandate the member of an unpaid direct-debit
// order signs: the account holder, a valid IBAN of a SEPA country, an
// optional BIC and the explicit consent, each problem named by its field
// and nothing stored. The mandate reference is derived from the
// mandate's id (unique per creditor identifier); the text is stored in
// the registration's language exactly as signed, and the order is
// collected under it, due on its collection day; the member is sent the
// mandate e-mail (queueMandateNotice). A household that holds a mandate
// keeps, changes or revokes it instead (debit_mandate_life.go); an order
// whose mandate ended takes a new one.
func (s *Service) GiveMandate(ctx context.Context, orderReference string, in MandateInput) (_ *DebitMandate, err error) {
	order, err := payment.Of(s.Service).UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	acct, fields := checkMandateAccount(in)
	if !in.Consent {
		fields = append(fields, engine.FieldError{Field: "consent", Message: "the mandate must be agreed to explicitly"})
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "The mandate cannot be given as entered.", Fields: fields}
	}
	now := s.Clock()
	m := &DebitMandate{OrganisationID: order.OrganisationID, UserKey: order.UserKey, Holder: acct.Holder, IBAN: acct.IBAN, BIC: acct.BIC,
		Language: in.Language, SignedAt: now}
	if _, ok := mandateTexts[m.Language]; !ok {
		m.Language = "en"
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if err := checkNoHeldMandate(ctx, tx, order); err != nil {
			return err
		}
		holder, ok, err := store.HouseholdPersonNamed(ctx, tx, order.OrganisationID, order.UserKey, m.Holder)
		if err != nil {
			return err
		}
		m.HolderPersonID = store.PersonRef(holder, ok)
		terms, err := debitTerms(ctx, tx, order.OrganisationID)
		if err != nil {
			return err
		}
		org, err := engine.LoadOrganisation(ctx, tx, order.OrganisationID)
		if err != nil {
			return err
		}
		m.CreditorID = terms.CreditorID
		m.Reference = "PENDING-" + engine.NewReference("") // unique until the id is known
		if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
			return fmt.Errorf("store mandate: %w", err)
		}
		m.Reference = banking.MandateReference(org.Slug, m.ID)
		terms.Reference = m.Reference
		m.Text, m.TextVersion = MandateText(m.Language, terms)
		if _, err := tx.NewUpdate().Model(m).Column("reference", "text", "text_version").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store mandate: %w", err)
		}
		due, err := payment.DebitDueFor(ctx, tx, order.OrganisationID, now)
		if err != nil {
			return err
		}
		res, err := clearDebitProblem(tx.NewUpdate().Model((*engine.Order)(nil))).Set("debit_mandate_id = ?", m.ID).Set("debit_due_on = ?", due).
			Where("id = ? AND status = ?", order.ID, engine.OrderUnpaid).Where("(debit_mandate_id IS NULL OR debit_mandate_id IN (?))", endedMandates(tx)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("link mandate: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return engine.Errorf(engine.CodeConflict, "this registration changed meanwhile; load the page again")
		}
		return queueMandateNotice(ctx, tx, MandateGiven, m, order.ID, due, now)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// MaskedIBAN shows an account as people recognise it without the whole
// number: country, check digits and the last four.
func MaskedIBAN(iban string) string {
	if len(iban) < 8 {
		return iban
	}
	return iban[:4] + " … " + iban[len(iban)-4:]
}
