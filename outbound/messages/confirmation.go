package messages

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/text/language"

	"portal/engine"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/outbound/mail"
	"portal/views"
	"portal/views/card"
	"portal/views/lang"
	"portal/views/mailview"
)

// confirmation composes the confirmation after payment of the order in
// msg's payload: to every member's address once, with the order, the
// period, the members and their types.
func confirmation(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	orderID, err := message.ConfirmationOrder(msg)
	if err != nil {
		return nil, jobs.Permanent(err)
	}
	c, err := message.LoadConfirmation(ctx, d.DB, orderID)
	if e, ok := engine.AsError(err); ok && e.Code == engine.CodeConflict {
		// Not paid any more: a returned direct debit took the payment back
		// before this went out; the member was told of the return instead.
		return nil, errSkip
	}
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	base, err := engine.OrganisationAddress(ctx, d.DB, d.BaseURL, c.Period.OrganisationID)
	if err != nil {
		return nil, err
	}
	l := memberLanguage(c.Language, c.Organisation.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.ConfirmationModel{
		Club:      c.Organisation.Name,
		Subject:   l.T("mail_confirmation_subject", map[string]any{"Club": c.Organisation.Name, "Period": c.Period.Name}),
		Reference: c.Reference,
		Order:     strconv.FormatInt(c.Order.ID, 10),
		Period:    periodText(l, c.Period),
		Total:     l.Money(c.Order.TotalMinor, c.Order.Currency),
		PortalURL: base + "/membership/register/" + strconv.FormatInt(c.Period.ID, 10),
	}
	if c.Order.PaymentMethod == payment.DirectDebitProvider {
		// Settled when its run was marked sent: the money is collected on
		// the debit's due date, which the file asked the bank for.
		var debit payment.Debit
		err := d.DB.NewSelect().Model(&debit).Where("order_id = ? AND status = ?", c.Order.ID, payment.DebitCollected).Order("id DESC").Limit(1).Scan(ctx)
		switch {
		case err == nil:
			m.CollectedOn = l.Date(debit.DueOn)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("load the collected debit: %w", err)
		}
	}
	for _, mem := range c.Members {
		m.Members = append(m.Members, mailview.Member{Name: mem.Person.FirstName + " " + mem.Person.LastName, Type: mem.Type.Name})
	}
	for _, line := range c.Order.Lines {
		m.Lines = append(m.Lines, views.OrderLineModel{Description: line.Description, Amount: l.Money(line.AmountMinor, line.Currency)})
	}
	out, err := envelope(ctx, d, c.Organisation, "", c.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	if out.Attachments, err = cards(ctx, d, c, l, base); err != nil {
		return nil, err
	}
	m.CardsAttached = len(out.Attachments) > 0
	return withBodies(ctx, out, m, mailview.ConfirmationText, mailview.Confirmation)
}

// periodText is a period's name and dates, as members read them.
func periodText(l lang.Language, p engine.MembershipPeriod) string {
	return fmt.Sprintf("%s (%s – %s)", p.Name, l.Date(p.StartDate), l.Date(p.EndDate))
}

// memberLanguage is the language of a member's messages: the one they
// registered in, else the organisation's default, with the default's
// region for money when it is the same language (de-CH).
func memberLanguage(registered, orgDefault string) lang.Language {
	code := registered
	if code == "" {
		code, _, _ = strings.Cut(orgDefault, "-")
	}
	return lang.New(code, language.Make(orgDefault))
}

// permanentIfFinal makes the engine's not-found and conflict (an order
// that is not paid) permanent: retrying cannot change them.
func permanentIfFinal(err error) error {
	if e, ok := engine.AsError(err); ok && (e.Code == engine.CodeNotFound || e.Code == engine.CodeConflict) {
		return jobs.Permanent(err)
	}
	return err
}

// cards renders a membership card per member, its QR code linking to the
// card's verification page on the club's own address (base): the check
// answers only there (or on the portal's address that serves no club).
func cards(ctx context.Context, d Deps, c *message.Confirmation, l lang.Language, base string) ([]mail.Attachment, error) {
	ids := make([]int64, len(c.Members))
	for i, mem := range c.Members {
		ids[i] = mem.Membership.ID
	}
	tokens, err := message.CardTokens(ctx, d.DB, ids, d.Now())
	if err != nil {
		return nil, err
	}
	var out []mail.Attachment
	for _, mem := range c.Members {
		issued := mem.Membership.CreatedAt
		if mem.Membership.ActivatedAt != nil {
			issued = *mem.Membership.ActivatedAt
		}
		pdf, err := renderCard(ctx, card.Model{
			Club: c.Organisation.Name, Name: mem.Person.FirstName + " " + mem.Person.LastName, Type: mem.Type.Name,
			Period: c.Period.Name, ValidFrom: c.Period.StartDate, ValidTo: c.Period.EndDate,
			VerifyURL: base + "/verify/" + tokens[mem.Membership.ID], Issued: issued,
			Texts: card.Texts{Title: l.T("title_verify"), Membership: l.T("verify_membership"), Period: l.T("verify_period"),
				Valid: l.T("card_valid"), Scan: l.T("card_scan")},
			Dates: l.Date(c.Period.StartDate) + " – " + l.Date(c.Period.EndDate),
		})
		if err != nil {
			return nil, err
		}
		out = append(out, mail.Attachment{Name: cardFileName(mem.Person), ContentType: "application/pdf", Data: pdf})
	}
	return out, nil
}

// cardRenderers admits one card at a time per two cores of this instance
// (as GOMAXPROCS says when the process starts). A paid household gets a
// card per member: when a card was 13 ms of CPU and 10 MB of garbage and
// every job worker rendered cards, a season opening's confirmations took
// the cores the member pages answer on (the step p99 of issue 42's
// opening doubled). Now about 1 ms, a card still should not crowd out a
// member's page: confirmations wait a little in the queue instead.
var cardRenderers = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// renderCard renders m once a renderer is free, or gives up with ctx (the
// job tries again). A card that does not render never will: that error is
// permanent.
func renderCard(ctx context.Context, m card.Model) ([]byte, error) {
	select {
	case cardRenderers <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-cardRenderers }()
	pdf, err := card.Render(m)
	if err != nil {
		return nil, jobs.Permanent(err)
	}
	return pdf, nil
}

// cardFileName is a plain ASCII file name for a person's card.
func cardFileName(p engine.Person) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, p.FirstName+"-"+p.LastName)
	return "membership-card-" + strings.Trim(name, "-") + ".pdf"
}
