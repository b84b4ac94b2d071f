package staff

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/lang"
	"portal/views/staffview"
)

// The setup page's settings (admin): languages, payment and message
// settings, membership types. Each change calls the engine function the
// admin API calls, so the validation is the engine's, and its staff
// variant, which writes the audit entry in the change's transaction. A
// refused change shows the page again with the typed values and the
// errors by their fields, and changes nothing.

// Flash keys of the setup settings.
const (
	flashLanguagesSaved = "languages-saved"
	flashPaymentsSaved  = "payments-saved"
	flashMessagesSaved  = "messages-saved"
	flashTypeAdded      = "type-added"
	flashTypeChanged    = "type-changed"
	flashTypeDeleted    = "type-deleted"
)

func init() {
	for k, text := range map[string]func(*staffview.SetupTexts) string{
		flashLanguagesSaved: func(t *staffview.SetupTexts) string { return t.LangSaved },
		flashPaymentsSaved:  func(t *staffview.SetupTexts) string { return t.PaySaved },
		flashMessagesSaved:  func(t *staffview.SetupTexts) string { return t.MsgSaved },
		flashTypeAdded:      func(t *staffview.SetupTexts) string { return t.TypeAdded },
		flashTypeChanged:    func(t *staffview.SetupTexts) string { return t.TypeChanged },
		flashTypeDeleted:    func(t *staffview.SetupTexts) string { return t.TypeDeleted },
	} {
		staffpage.StaffFlashes[k] = func(c echo.Context) string { return text(staffSetupTextIn(c)) }
	}
}

// staffSetupTextIn is the setup settings' texts in the request's language.
func staffSetupTextIn(c echo.Context) *staffview.SetupTexts {
	return staffview.SetupTextIn(c.Request().Context())
}

// formField is a form field's value, nil when the form does not have it:
// a change names only what the form sent.
func formField(form url.Values, name string) *string {
	vs, ok := form[name]
	if !ok || len(vs) == 0 {
		return nil
	}
	v := vs[0]
	return &v
}

// setupForm reads the posted form; a body that is no form is a 400.
func (s *Server) setupForm(c echo.Context) (url.Values, bool, error) {
	form, err := c.FormParams()
	if err != nil {
		return nil, false, s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).Invalid)
	}
	return form, true, nil
}

// languagesForm is the languages form with the organisation's choice.
func languagesForm(base string, org *engine.Organisation) staffview.LanguagesForm {
	return languagesFormOf(base+"/languages", org.EnabledLanguageList(), org.DefaultLanguage)
}

func languagesFormOf(action string, enabled []string, def string) staffview.LanguagesForm {
	f := staffview.LanguagesForm{Action: action, Default: def}
	for _, code := range engine.Languages {
		f.Options = append(f.Options, staffview.LanguageOption{Code: code, Label: lang.Names[code], Enabled: slices.Contains(enabled, code)})
	}
	return f
}

// staffSaveLanguages answers POST /staff/setup/languages: the languages
// offered to members (enabledLanguages, repeated) and the default among them.
func (s *Server) staffSaveLanguages(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	enabled := append([]string{}, form["enabledLanguages"]...) // none checked: [] (refused), not "unchanged"
	def := form.Get("defaultLanguage")
	change := organisation.OrganisationChange{EnabledLanguages: &enabled, DefaultLanguage: &def}
	if _, err := staff.Of(s.engine).StaffUpdateOrganisation(c.Request().Context(), u.Actor(), u.OrganisationID, change); err != nil {
		return s.staffSetupProblem(c, setupLanguages, err, func(m *staffview.SetupModel, errs map[string]string) {
			m.Languages = languagesFormOf(m.Languages.Action, enabled, def)
			m.Languages.Errors = errs
		})
	}
	s.RefreshOrganisations() // the member pages offer the new languages at once
	return staffSetupDone(c, setupLanguages, flashLanguagesSaved)
}

// paymentForm is the payment settings form with the stored settings; the
// secrets only as set or not.
func (s *Server) paymentForm(c echo.Context, base string, orgID int64) (staffview.PaymentForm, error) {
	v, err := settings.Of(s.engine).PaymentSettings(c.Request().Context(), orgID)
	if err != nil {
		return staffview.PaymentForm{}, err
	}
	t := staffSetupTextIn(c)
	f := staffview.PaymentForm{Action: base + "/payments", Provider: v.Provider, StripeKeySet: v.StripeSecretKeySet,
		WebhookSecretSet: v.StripeWebhookSecretSet, Creditor: v.BankCreditorName, Address: v.BankCreditorAddress, IBAN: v.BankIBAN, BIC: v.BankBIC,
		Providers: []staffview.Option{{Value: "", Label: t.PayProviderDefault}, {Value: payment.StripeProvider, Label: t.PayProviderStripe},
			{Value: payment.BankTransferProvider, Label: t.PayProviderBank}}}
	if v.Provider == payment.TestGatewayProvider { // offered only to keep a development portal's choice
		f.Providers = append(f.Providers, staffview.Option{Value: payment.TestGatewayProvider, Label: t.PayProviderTest})
	}
	// The QR standard follows the account's country (banking.Transfer.Payload).
	switch country := banking.IBAN(v.BankIBAN).Country(); {
	case v.BankIBAN == "":
		f.QRKind = t.PayQRNone
	case country == "CH" || country == "LI":
		f.QRKind = t.PayQRSwiss
	default:
		f.QRKind = t.PayQREPC
	}
	return f, nil
}

// secretChange is a write-only secret's change: a typed value replaces
// it, the "remove" box clears it, an empty field keeps it.
func secretChange(form url.Values, name string) *string {
	if v := strings.TrimSpace(form.Get(name)); v != "" {
		return &v
	}
	if form.Get(name+"Clear") == "1" {
		none := ""
		return &none
	}
	return nil
}

// staffSavePayments answers POST /staff/setup/payments: the payment
// settings, checked as a whole by the engine (SetPaymentSettings); the
// secrets are never sent back, not even with an error.
func (s *Server) staffSavePayments(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	change := settings.PaymentSettingsChange{Provider: formField(form, "provider"), BankCreditorName: formField(form, "bankCreditorName"),
		BankIBAN: formField(form, "bankIban"), BankBIC: formField(form, "bankBic"), BankCreditorAddress: formField(form, "bankCreditorAddress"),
		StripeSecretKey: secretChange(form, "stripeSecretKey"), StripeWebhookSecret: secretChange(form, "stripeWebhookSecret")}
	if _, err := settings.Of(s.engine).StaffSetPaymentSettings(c.Request().Context(), u.Actor(), u.OrganisationID, change); err != nil {
		return s.staffSetupProblem(c, SetupPayments, err, func(m *staffview.SetupModel, errs map[string]string) {
			p := &m.Payments
			for dst, v := range map[*string]*string{&p.Provider: change.Provider, &p.Creditor: change.BankCreditorName, &p.IBAN: change.BankIBAN,
				&p.BIC: change.BankBIC, &p.Address: change.BankCreditorAddress} {
				if v != nil {
					*dst = *v
				}
			}
			p.Errors = errs
			m.Problem = problemOf(err, "provider", "stripeSecretKey", "stripeWebhookSecret", "bankCreditorName", "bankIban", "bankBic", "bankCreditorAddress")
		})
	}
	return staffSetupDone(c, SetupPayments, flashPaymentsSaved)
}

// problemOf is a refused change's message for the top of the page, with
// the errors of fields the form has no place for (shown names its fields).
func problemOf(err error, shown ...string) string {
	e, ok := engine.AsError(err)
	if !ok {
		return ""
	}
	out := e.Message
	for _, f := range e.Fields {
		if !slices.Contains(shown, f.Field) {
			out += " " + f.Field + ": " + f.Message + "."
		}
	}
	return out
}

// messagesForm is the message settings form with the effective settings
// (the portal's defaults filled in).
func (s *Server) messagesForm(c echo.Context, base string, orgID int64) (staffview.MessagesForm, error) {
	ms, err := message.Of(s.engine).Settings(c.Request().Context(), orgID)
	if err != nil {
		return staffview.MessagesForm{}, err
	}
	days := make([]string, len(ms.UnpaidReminderDays))
	for i, d := range ms.UnpaidReminderDays {
		days[i] = strconv.Itoa(d)
	}
	return staffview.MessagesForm{Action: base + "/messages", UnpaidDays: strings.Join(days, ", "), ExpiryDays: strconv.Itoa(ms.ExpiryReminderDays),
		ResumeHours: strconv.Itoa(int(ms.ResumeAfter / time.Hour)), RenewalDays: strconv.Itoa(ms.RenewalLeadDays), SenderName: ms.SenderName, ReplyTo: ms.ReplyTo}, nil
}

// staffSaveMessages answers POST /staff/setup/messages. The numbers are
// read here; their bounds are the engine's (UpdateMessageSettings).
func (s *Server) staffSaveMessages(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	typed := staffview.MessagesForm{UnpaidDays: form.Get("unpaidReminderDays"), ExpiryDays: form.Get("expiryReminderDays"),
		ResumeHours: form.Get("resumeAfterHours"), RenewalDays: form.Get("renewalLeadDays"), SenderName: form.Get("senderName"), ReplyTo: form.Get("replyTo")}
	show := func(m *staffview.SetupModel, errs map[string]string) {
		typed.Action, typed.Errors = m.Messages.Action, errs
		m.Messages = typed
	}
	t := staffSetupTextIn(c)
	errs := map[string]string{}
	var change message.SettingsChange
	if v := formField(form, "unpaidReminderDays"); v != nil {
		days := []int{} // empty: the default
		for _, f := range strings.FieldsFunc(*v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
			d, err := strconv.Atoi(f)
			if err != nil {
				errs["unpaidReminderDays"] = t.NotNumbers
				break
			}
			days = append(days, d)
		}
		change.UnpaidReminderDays = &days
	}
	formNumbers(form, map[string]**int{"expiryReminderDays": &change.ExpiryReminderDays, "resumeAfterHours": &change.ResumeAfterHours,
		"renewalLeadDays": &change.RenewalLeadDays}, errs, t.NotANumber)
	change.SenderName, change.ReplyTo = formField(form, "senderName"), formField(form, "replyTo")
	if change.ReplyTo != nil {
		*change.ReplyTo = strings.TrimSpace(*change.ReplyTo)
	}
	if len(errs) > 0 {
		return s.renderSetup(c, setupMessages, http.StatusUnprocessableEntity, func(m *staffview.SetupModel) { show(m, errs) })
	}
	if _, err := message.Of(s.engine).StaffUpdateMessageSettings(c.Request().Context(), u.Actor(), u.OrganisationID, change); err != nil {
		return s.staffSetupProblem(c, setupMessages, withoutFieldPrefix(err, "messages."), show)
	}
	return staffSetupDone(c, setupMessages, flashMessagesSaved)
}

// formNumbers reads the whole numbers of a settings form into their
// change fields: an absent field stays nil (unchanged), an empty one is 0
// (the default), anything else not a number is an error at its field.
func formNumbers(form url.Values, fields map[string]**int, errs map[string]string, notANumber string) {
	for name, dst := range fields {
		v := formField(form, name)
		if v == nil {
			continue
		}
		n := 0
		if text := strings.TrimSpace(*v); text != "" {
			var err error
			if n, err = strconv.Atoi(text); err != nil {
				errs[name] = notANumber
				continue
			}
		}
		*dst = &n
	}
}

// withoutFieldPrefix names an engine error's fields as the setup form
// does: the engine names them as the admin API ("messages.replyTo").
func withoutFieldPrefix(err error, prefix string) error {
	if e, ok := engine.AsError(err); ok {
		for i := range e.Fields {
			e.Fields[i].Field = strings.TrimPrefix(e.Fields[i].Field, prefix)
		}
	}
	return err
}

// typeForm is the membership type form: the type chosen by ?edit_type=
// to change, or a new one.
func typeForm(c echo.Context, base string, types []engine.MembershipType, org *engine.Organisation) staffview.TypeForm {
	f := staffview.TypeForm{Action: base + "/types"}
	var texts engine.Texts
	if id, err := strconv.ParseInt(c.QueryParam("edit_type"), 10, 64); err == nil {
		for _, t := range types {
			if t.ID == id {
				f = staffview.TypeForm{Action: base + "/types/" + strconv.FormatInt(id, 10), CancelURL: setupURL(c, SetupMemberships) + "#types", Editing: true,
					Code: t.Code, Name: t.Name, MinAge: optionalInt(t.MinAge), MaxAge: optionalInt(t.MaxAge)}
				texts = t.NameTexts
			}
		}
	}
	// The name in each other language the organisation offers members.
	f.DefaultLanguage, _, _ = strings.Cut(org.DefaultLanguage, "-")
	for _, l := range org.EnabledLanguageList() {
		if l != f.DefaultLanguage {
			f.Names = append(f.Names, staffview.TextField{Language: l, Value: texts[l]})
		}
	}
	return f
}

// typeNameTexts reads the type form's names in other languages
// (nameTexts.xx): none given is one name for every language.
func typeNameTexts(form url.Values) engine.Texts {
	texts := engine.Texts{}
	for _, l := range engine.Languages {
		if v := strings.TrimSpace(form.Get("nameTexts." + l)); v != "" {
			texts[l] = v
		}
	}
	return texts
}

func optionalInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

// typeInput reads the membership type form: the ages as numbers, or nil
// when empty (no limit), with an error by field when not a number.
func typeInput(c echo.Context, form url.Values) (f staffview.TypeForm, minAge, maxAge *int, errs map[string]string) {
	f = staffview.TypeForm{Code: strings.TrimSpace(form.Get("code")), Name: form.Get("name"), MinAge: strings.TrimSpace(form.Get("minAge")),
		MaxAge: strings.TrimSpace(form.Get("maxAge"))}
	for _, l := range engine.Languages {
		if v, ok := form["nameTexts."+l]; ok && len(v) > 0 {
			f.Names = append(f.Names, staffview.TextField{Language: l, Value: v[0]})
		}
	}
	errs = map[string]string{}
	age := func(name, v string) *int {
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs[name] = staffSetupTextIn(c).NotANumber
			return nil
		}
		return &n
	}
	return f, age("minAge", f.MinAge), age("maxAge", f.MaxAge), errs
}

// showTypeForm puts a refused type form back on the page.
func showTypeForm(f staffview.TypeForm) func(*staffview.SetupModel, map[string]string) {
	return func(m *staffview.SetupModel, errs map[string]string) {
		f.Errors = errs
		// The page's languages, with what was sent in them.
		sent := map[string]string{}
		for _, n := range f.Names {
			sent[n.Language] = n.Value
		}
		f.DefaultLanguage, f.Names = m.TypeForm.DefaultLanguage, nil
		for _, n := range m.TypeForm.Names {
			f.Names = append(f.Names, staffview.TextField{Language: n.Language, Value: sent[n.Language]})
		}
		m.TypeForm = f
	}
}

// staffAddType answers POST /staff/setup/types.
func (s *Server) staffAddType(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	f, minAge, maxAge, errs := typeInput(c, form)
	f.Action = staffpage.RequestOf(c).StaffPath(server.StaffSetupPath + "/types")
	if len(errs) > 0 {
		return s.renderSetup(c, SetupMemberships, http.StatusUnprocessableEntity, func(m *staffview.SetupModel) { showTypeForm(f)(m, errs) })
	}
	if _, err := organisation.Of(s.engine).StaffCreateMembershipType(c.Request().Context(), u.Actor(), engine.MembershipType{OrganisationID: u.OrganisationID,
		Code: f.Code, Name: f.Name, NameTexts: typeNameTexts(form), MinAge: minAge, MaxAge: maxAge}); err != nil {
		return s.staffSetupProblem(c, SetupMemberships, err, showTypeForm(f))
	}
	return staffSetupDone(c, SetupMemberships, flashTypeAdded)
}

// staffChangeType answers POST /staff/setup/types/{id}: code, name and
// ages; an empty age removes its limit.
func (s *Server) staffChangeType(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	f, minAge, maxAge, errs := typeInput(c, form)
	base := staffpage.RequestOf(c).StaffPath(server.StaffSetupPath)
	f.Action, f.CancelURL, f.Editing = base+"/types/"+strconv.FormatInt(id, 10), setupURL(c, SetupMemberships)+"#types", true
	if len(errs) > 0 {
		return s.renderSetup(c, SetupMemberships, http.StatusUnprocessableEntity, func(m *staffview.SetupModel) { showTypeForm(f)(m, errs) })
	}
	texts := typeNameTexts(form)
	change := organisation.MembershipTypeChange{Code: &f.Code, Name: &f.Name, NameTexts: &texts, MinAge: minAge, MaxAge: maxAge, ClearMinAge: minAge == nil, ClearMaxAge: maxAge == nil}
	if _, err := organisation.Of(s.engine).StaffUpdateMembershipType(c.Request().Context(), u.Actor(), u.OrganisationID, id, change); err != nil {
		return s.staffSetupProblem(c, SetupMemberships, err, showTypeForm(f))
	}
	return staffSetupDone(c, SetupMemberships, flashTypeChanged)
}

// staffDeleteType answers POST /staff/setup/types/{id}/delete, after
// asking; a type in use is refused with the engine's reason.
func (s *Server) staffDeleteType(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if ok, err := s.StaffConfirmed(c, staffSetupTextIn(c).TypeDeleteQuestion, staffSetupTextIn(c).TypeDeleteDetail,
		setupURL(c, SetupMemberships)+"#types"); !ok {
		return err
	}
	if err := organisation.Of(s.engine).StaffDeleteMembershipType(c.Request().Context(), u.Actor(), u.OrganisationID, id); err != nil {
		return s.staffSetupProblem(c, SetupMemberships, err, nil)
	}
	return staffSetupDone(c, SetupMemberships, flashTypeDeleted)
}
