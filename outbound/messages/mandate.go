package messages

import (
	"context"
	"fmt"
	"strings"

	"portal/engine"
	"portal/engine/directdebit"
	"portal/engine/jobs"
	"portal/outbound/mail"
	"portal/views/lang"
	"portal/views/mailview"
	"portal/views/mandatepdf"
)

// mandateNotice composes the mandate e-mail (issue 29): the mandate given,
// kept or changed for a registration, and the debit's pre-notification,
// with the member's copy of the signed mandate as a PDF. A message whose
// order was paid or cancelled, whose mandate ended, or that a later change
// superseded (it has its own message) gets nothing (errSkip).
func mandateNotice(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	n, err := directdebit.LoadMandateNotice(ctx, d.DB, msg)
	if engine.ErrorCode(err) == engine.CodeValidation { // a payload no retry mends
		return nil, jobs.Permanent(err)
	}
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	if !n.Due {
		return nil, errSkip
	}
	base, err := engine.OrganisationAddress(ctx, d.DB, d.BaseURL, n.Organisation.ID)
	if err != nil {
		return nil, err
	}
	l := memberLanguage(n.Language, n.Organisation.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.MandateModel{Club: n.Organisation.Name, Event: n.Event, Period: n.Period.Name,
		Total: l.Money(n.Order.TotalMinor, n.Order.Currency), Due: l.Date(n.DueOn), Creditor: n.CreditorName, CreditorID: n.Mandate.CreditorID,
		Reference: n.Mandate.Reference, Account: directdebit.MaskedIBAN(n.Mandate.IBAN), Link: base + "/pay/" + n.Order.PayReference}
	for _, person := range n.Persons {
		m.Persons = append(m.Persons, person.FirstName+" "+person.LastName)
	}
	m.Subject = l.T("mail_mandate_subject", map[string]any{"Club": m.Club, "Total": m.Total, "Due": m.Due})
	out, err := envelope(ctx, d, n.Organisation, "", n.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	pdf, err := mandatepdf.Render(mandateCopy(l, n))
	if err != nil {
		return nil, jobs.Permanent(err)
	}
	out.Attachments = append(out.Attachments, mail.Attachment{Name: mandateFileName(n.Mandate.Reference), ContentType: "application/pdf", Data: pdf})
	return withBodies(ctx, out, m, mailview.MandateText, mailview.Mandate)
}

// mandateCopy is the member's copy of the signed mandate: its text
// exactly as signed, the creditor, reference, account and signature, the
// labels in the member's language.
func mandateCopy(l lang.Language, n *directdebit.MandateNotice) mandatepdf.Model {
	md := n.Mandate
	dated := md.SignedAt
	bic := md.BIC
	if bic == "" {
		bic = "–"
	}
	m := mandatepdf.Model{Title: l.T("mail_mandate_heading"), TextHeading: l.T("mandate_pdf_text"), Text: md.Text,
		Fields: []mandatepdf.Field{
			{Label: l.T("mail_mandate_creditor"), Value: n.CreditorName},
			{Label: l.T("mail_mandate_creditor_id"), Value: md.CreditorID},
			{Label: l.T("mail_mandate_reference"), Value: md.Reference},
			{Label: l.T("mandate_pdf_holder"), Value: md.Holder},
			{Label: l.T("mandate_pdf_iban"), Value: md.IBAN},
			{Label: l.T("mandate_pdf_bic"), Value: bic},
			{Label: l.T("mandate_pdf_signed"), Value: l.Date(md.SignedAt.UTC()) + " " + md.SignedAt.UTC().Format("15:04") + " UTC"},
			{Label: l.T("mandate_pdf_language"), Value: fmt.Sprintf("%s · %s", md.Language, md.TextVersion)},
		}}
	if md.AmendedAt != nil {
		dated = *md.AmendedAt
		m.Note = l.T("mandate_pdf_amended", map[string]any{"Date": l.Date(md.AmendedAt.UTC())})
	}
	m.Dated = dated
	return m
}

// mandateFileName is a plain ASCII file name for a mandate's copy.
func mandateFileName(reference string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '-'
	}, reference)
	return "sepa-mandate-" + strings.Trim(name, "-") + ".pdf"
}
