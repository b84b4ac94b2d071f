package messages

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"portal/engine"
	"portal/engine/jobs"
	"portal/handlers/mail"
	"portal/views"
	"portal/views/card"
)

// confirmation composes the confirmation after payment of the order in
// msg's payload: to every member's address once, with the order, the
// period, the members and their types.
func confirmation(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	orderID, err := engine.ConfirmationOrder(msg)
	if err != nil {
		return nil, jobs.Permanent(err)
	}
	c, err := engine.LoadConfirmation(ctx, d.DB, orderID)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	base, err := engine.OrganisationAddress(ctx, d.DB, d.BaseURL, c.Period.OrganisationID)
	if err != nil {
		return nil, err
	}
	m := views.ConfirmationMailModel{
		Club:      c.Organisation.Name,
		Subject:   fmt.Sprintf("%s: your membership for %s is confirmed", c.Organisation.Name, c.Period.Name),
		Reference: c.Reference,
		Order:     strconv.FormatInt(c.Order.ID, 10),
		Period:    periodText(c.Period),
		Total:     engine.FormatMoney(c.Order.TotalMinor, c.Order.Currency),
		PortalURL: base + "/membership/register/" + strconv.FormatInt(c.Period.ID, 10),
	}
	for _, mem := range c.Members {
		m.Members = append(m.Members, views.MailMemberModel{Name: mem.Person.FirstName + " " + mem.Person.LastName, Type: mem.Type.Name})
	}
	for _, l := range c.Order.Lines {
		m.Lines = append(m.Lines, views.OrderLineModel{Description: l.Description, Amount: engine.FormatMoney(l.AmountMinor, l.Currency)})
	}
	out, err := envelope(ctx, d, c.Organisation, "", c.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	if out.Attachments, err = cards(ctx, d, c); err != nil {
		return nil, err
	}
	m.CardsAttached = len(out.Attachments) > 0
	if out.Text, err = views.ConfirmationText(m); err != nil {
		return nil, err
	}
	if out.HTML, err = render(ctx, views.ConfirmationMail(m)); err != nil {
		return nil, err
	}
	return out, nil
}

// periodText is a period's name and dates, as members read them.
func periodText(p engine.MembershipPeriod) string {
	return fmt.Sprintf("%s (%s – %s)", p.Name, p.StartDate.Format("2 January 2006"), p.EndDate.Format("2 January 2006"))
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
// card's verification page.
func cards(ctx context.Context, d Deps, c *engine.Confirmation) ([]mail.Attachment, error) {
	ids := make([]int64, len(c.Members))
	for i, mem := range c.Members {
		ids[i] = mem.Membership.ID
	}
	tokens, err := engine.CardTokens(ctx, d.DB, ids, d.Now())
	if err != nil {
		return nil, err
	}
	var out []mail.Attachment
	for _, mem := range c.Members {
		issued := mem.Membership.CreatedAt
		if mem.Membership.ActivatedAt != nil {
			issued = *mem.Membership.ActivatedAt
		}
		pdf, err := card.Render(card.Model{
			Club: c.Organisation.Name, Name: mem.Person.FirstName + " " + mem.Person.LastName, Type: mem.Type.Name,
			Period: c.Period.Name, ValidFrom: c.Period.StartDate, ValidTo: c.Period.EndDate,
			VerifyURL: d.BaseURL + "/verify/" + tokens[mem.Membership.ID], Issued: issued,
		})
		if err != nil {
			return nil, jobs.Permanent(err)
		}
		out = append(out, mail.Attachment{Name: cardFileName(mem.Person), ContentType: "application/pdf", Data: pdf})
	}
	return out, nil
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
