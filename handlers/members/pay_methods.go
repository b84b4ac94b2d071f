package members

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/handlers/server"
	"portal/views"
	"portal/views/memberview"
)

// payMethodChoice is the pay link of an unpaid order whose club offers
// several payment methods: the amount and the methods again, the order's
// current one checked (issue 29).
func (s *Server) payMethodChoice(c echo.Context, choice *payment.PayLinkChoice) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	m := memberview.PayChooseModel{Chrome: s.Chrome(views.PaymentMethodTextIn(c.Request().Context()).PayTitle),
		Action:  server.OrganisationPath(c, server.PayLinkPrefix+choice.Order.PayReference),
		Total:   server.LangOf(c).Money(choice.Order.TotalMinor, choice.Order.Currency),
		Methods: memberview.PaymentMethodChoiceModel{Methods: choice.Methods, Current: choice.Current}}
	return server.Render(c, http.StatusOK, memberview.PayChoose(m))
}

// ChoosePayMethod answers POST /pay/:reference: the member's choice on the
// pay link. The order is paid with that method from now on (an open
// attempt of another is closed), and the member goes on to its checkout.
func (s *Server) ChoosePayMethod(c echo.Context) error {
	p, err := payment.Of(s.engine).ChoosePaymentMethod(c.Request().Context(), c.Param("reference"), c.FormValue("paymentMethod"))
	if err != nil {
		return err
	}
	return s.toCheckout(c, p)
}

// payByDebit shows an attempt of direct debit: the amount the club
// collects, its name and Creditor Identifier, and the mandate: its form
// with the text in the page's language until it is given, then its
// reference and account.
func (s *Server) payByDebit(c echo.Context, p *engine.Payment) error {
	view, err := payment.Of(s.engine).PaymentForPage(c.Request().Context(), p.Reference)
	if err != nil {
		return err
	}
	return s.showDebitPage(c, http.StatusOK, view.Order.PayReference, nil, nil)
}

// showDebitPage renders the direct-debit page of an order; typed and
// errs are a refused mandate's input and field errors.
func (s *Server) showDebitPage(c echo.Context, status int, orderReference string, typed *directdebit.MandateInput, errs map[string]string) error {
	page, err := directdebit.Of(s.engine).DebitPageFor(c.Request().Context(), orderReference)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	t := views.PaymentMethodTextIn(c.Request().Context())
	m := memberview.PayByDebitModel{Chrome: s.Chrome(t.DebitTitle), Total: server.LangOf(c).Money(page.Order.TotalMinor, page.Order.Currency),
		Creditor: page.Terms.CreditorName, CreditorID: page.Terms.CreditorID, Errors: errs}
	// A refused form: its title starts with "Error:" (docs/MEMBER-PAGES.md),
	// and a missing consent is said at its box in the page's language.
	m.Chrome.Error = len(errs) > 0
	if errs["consent"] != "" {
		errs["consent"] = t.MandateConsentMissing
		if page.Held != nil {
			errs["consent"] = t.MandateChangeConsentMissing
		}
	}
	switch {
	case page.Mandate != nil:
		mandate := page.Mandate
		m.Text, m.Reference, m.Account = mandate.Text, mandate.Reference, directdebit.MaskedIBAN(mandate.IBAN)
		if due := page.Order.DebitDueOn; due != nil {
			m.Due = server.LangOf(c).Date(due.UTC())
		}
	case page.Held != nil:
		held, base := page.Held, server.OrganisationPath(c, server.PayLinkPrefix+page.Order.PayReference+"/mandate/")
		m.Held = &memberview.HeldMandateModel{ID: strconv.FormatInt(held.ID, 10), Holder: held.Holder, Account: directdebit.MaskedIBAN(held.IBAN),
			Reference: held.Reference, Signed: server.LangOf(c).Date(held.SignedAt.UTC()), Text: held.Text,
			KeepAction: base + "keep", ChangeAction: base + "change", RevokeAction: base + "revoke"}
		m.Holder = held.Holder
		if typed != nil {
			m.Holder, m.IBAN, m.BIC = typed.Holder, typed.IBAN, typed.BIC
		}
	default:
		terms := page.Terms
		terms.Reference = t.MandateReferenceLater
		m.Text, _ = directdebit.MandateText(server.LangOf(c).Code, terms)
		m.Action = server.OrganisationPath(c, server.PayLinkPrefix+page.Order.PayReference+"/mandate")
		if typed != nil {
			m.Holder, m.IBAN, m.BIC = typed.Holder, typed.IBAN, typed.BIC
		}
	}
	return server.Render(c, status, memberview.PayByDebit(m))
}

// GiveMandate answers POST /pay/:reference/mandate: the member signs the
// SEPA mandate of a direct-debit order in the page's language; a refusal
// shows the form again as typed, each problem at its field.
func (s *Server) GiveMandate(c echo.Context) error {
	in := mandateForm(c)
	_, err := directdebit.Of(s.engine).GiveMandate(c.Request().Context(), c.Param("reference"), in)
	return s.mandateAnswered(c, &in, err)
}

// mandateForm is the account and consent a member typed on the pay link,
// in the page's language.
func mandateForm(c echo.Context) directdebit.MandateInput {
	return directdebit.MandateInput{Holder: c.FormValue("holder"), IBAN: c.FormValue("iban"), BIC: c.FormValue("bic"),
		Consent: c.FormValue("consent") == "1", Language: server.LangOf(c).Code}
}

// mandateAnswered ends a mandate form of the pay link: back to the pay
// link (POST, 303, GET), or, for a form the member typed (in) that was
// refused, the page again as typed with each problem at its field.
func (s *Server) mandateAnswered(c echo.Context, in *directdebit.MandateInput, err error) error {
	ref := c.Param("reference")
	if err != nil {
		if errs, ok := server.FieldErrors(err); ok && in != nil && engine.ErrorCode(err) == engine.CodeValidation {
			return s.showDebitPage(c, http.StatusUnprocessableEntity, ref, in, errs)
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, server.OrganisationPath(c, server.PayLinkPrefix+ref))
}
