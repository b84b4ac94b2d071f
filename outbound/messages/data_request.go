package messages

import (
	"context"
	"strings"

	"portal/engine"
	"portal/engine/privacy"
	"portal/outbound/mail"
	"portal/views"
)

// Members' data requests (issue 30): the club's contact address hears of
// a new request (engine.KindDataRequest), the household of one done
// (engine.KindDataRequestDone). Plain text, in the organisation's default
// language for the club and the request's language for the member.

// dataRequest composes the e-mail to the club about a new request.
func dataRequest(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	m, err := privacy.LoadDataRequestMessage(ctx, d.DB, msg)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	t := views.PersonalDataTextFor(m.Organisation.DefaultLanguage)
	base, err := engine.OrganisationAddress(ctx, d.DB, d.BaseURL, m.Organisation.ID)
	if err != nil {
		return nil, err
	}
	kind := t.Correction
	if m.Request.Kind == privacy.DataRequestErasure {
		kind = t.Erasure
	}
	about := t.WholeHousehold
	if m.Person != nil {
		about = m.Person.FirstName + " " + m.Person.LastName
	}
	fill := strings.NewReplacer("{{.Kind}}", kind, "{{.About}}", about, "{{.Household}}", m.Request.UserKey,
		"{{.Message}}", m.Request.Message, "{{.URL}}", base+"/staff/data-requests", "{{.Club}}", m.Organisation.Name)
	out, err := envelope(ctx, d, m.Organisation, "", m.Recipients, fill.Replace(t.MailNewSubject))
	if err != nil {
		return nil, err
	}
	out.Text = fill.Replace(t.MailNewBody) + "\n"
	return out, nil
}

// dataRequestDone composes the e-mail telling the household its request
// was answered, with staff's note.
func dataRequestDone(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	m, err := privacy.LoadDataRequestMessage(ctx, d.DB, msg)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	t := views.PersonalDataTextFor(m.Request.Language)
	if m.Request.Language == "" {
		t = views.PersonalDataTextFor(m.Organisation.DefaultLanguage)
	}
	kind := t.Correction
	if m.Request.Kind == privacy.DataRequestErasure {
		kind = t.Erasure
	}
	fill := strings.NewReplacer("{{.Kind}}", kind, "{{.Club}}", m.Organisation.Name)
	out, err := envelope(ctx, d, m.Organisation, "", m.Recipients, fill.Replace(t.MailDoneSubject))
	if err != nil {
		return nil, err
	}
	out.Text = fill.Replace(t.MailDoneBody) + "\n"
	if m.Request.Note != "" {
		out.Text += "\n" + t.MailNote + "\n" + m.Request.Note + "\n"
	}
	return out, nil
}
