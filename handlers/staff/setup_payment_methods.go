package staff

import (
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/handlers/staff/staffpage"
	"portal/views"
	"portal/views/staffview"
)

// offeredMethods are the payment methods a club may offer, in the order
// the setup page lists them.
var offeredMethods = []string{payment.StripeProvider, payment.BankTransferProvider, payment.DirectDebitProvider}

// paymentMethodsForm is the payment methods section with the stored
// settings (issue 29).
func (s *Server) paymentMethodsForm(c echo.Context, base string, orgID int64) (staffview.PaymentMethodsForm, error) {
	v, err := settings.Of(s.engine).PaymentSettings(c.Request().Context(), orgID)
	if err != nil {
		return staffview.PaymentMethodsForm{}, err
	}
	methods := v.Methods
	if len(methods) == 0 && v.Provider != "" {
		methods = []string{v.Provider}
	}
	f := staffview.PaymentMethodsForm{Action: base + "/payment-methods", CreditorID: v.DebitCreditorID,
		PrenotificationDays: v.DebitPrenotificationDays, FileVersion: v.DebitFileVersion}
	if v.DebitCollectionDay > 0 {
		f.CollectionDay = strconv.Itoa(v.DebitCollectionDay)
	}
	if v.DebitReturnFeeMinor > 0 {
		f.ReturnFee = engine.FormatAmount(v.DebitReturnFeeMinor)
	}
	if len(methods) > 0 {
		f.Default = methods[0]
	}
	f.Options = methodOptions(c, methods)
	return f, nil
}

// methodOptions are the checkboxes of the offered methods, the chosen checked.
func methodOptions(c echo.Context, chosen []string) []staffview.PaymentMethodOption {
	t := views.PaymentMethodTextIn(c.Request().Context())
	var out []staffview.PaymentMethodOption
	for _, m := range offeredMethods {
		name, _ := t.MethodName(m)
		out = append(out, staffview.PaymentMethodOption{Value: m, Label: name, Checked: slices.Contains(chosen, m)})
	}
	return out
}

// staffSavePaymentMethods answers POST /staff/setup/payment-methods: the
// methods checked (the default among them first, and always offered),
// and the direct-debit settings (the collection day and the bank's return
// fee among them), checked as a whole by the engine and
// audited; a refused change shows the form again as typed.
func (s *Server) staffSavePaymentMethods(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	def := strings.TrimSpace(form.Get("defaultMethod"))
	methods := []string{}
	if def != "" {
		methods = append(methods, def)
	}
	for _, m := range form["methods"] {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	change := settings.PaymentSettingsChange{Methods: &methods, DebitCreditorID: formField(form, "debitCreditorId"),
		DebitFileVersion: formField(form, "debitFileVersion")}
	days := strings.TrimSpace(form.Get("debitPrenotificationDays"))
	n, convErr := strconv.Atoi(days)
	if days != "" {
		if convErr != nil {
			n = -1 // the engine names it: 1 to 14 days
		}
		change.DebitPrenotificationDays = &n
	}
	// Empty is none: the first business day the pre-notification allows,
	// and no fee. What does not parse is sent as out of range, so the
	// engine names the field as it names the others.
	collectionDay := strings.TrimSpace(form.Get("debitCollectionDay"))
	day := 0
	if collectionDay != "" {
		if d, err := strconv.Atoi(collectionDay); err == nil {
			day = d
		} else {
			day = -1
		}
	}
	change.DebitCollectionDay = &day
	returnFee := strings.TrimSpace(form.Get("debitReturnFee"))
	var fee int64
	if returnFee != "" {
		if f, err := engine.ParseAmount(returnFee); err == nil {
			fee = f
		} else {
			fee = -1
		}
	}
	change.DebitReturnFeeMinor = &fee
	if _, err := settings.Of(s.engine).StaffSetPaymentSettings(c.Request().Context(), u.Actor(), u.OrganisationID, change); err != nil {
		return s.staffSetupProblem(c, SetupPayments, err, func(m *staffview.SetupModel, errs map[string]string) {
			p := &m.PaymentMethods
			if msg, ok := errs["debitReturnFeeMinor"]; ok {
				// The engine names the API's field; the form asks for an amount.
				errs["debitReturnFee"] = msg
				delete(errs, "debitReturnFeeMinor")
			}
			p.Options, p.Default, p.Errors = methodOptions(c, methods), def, errs
			if change.DebitCreditorID != nil {
				p.CreditorID = *change.DebitCreditorID
			}
			if change.DebitPrenotificationDays != nil && n > 0 {
				p.PrenotificationDays = n
			}
			if change.DebitFileVersion != nil {
				p.FileVersion = *change.DebitFileVersion
			}
			p.CollectionDay, p.ReturnFee = collectionDay, returnFee
			m.Problem = problemOf(err, "methods", "provider", "debitCreditorId", "debitPrenotificationDays", "debitFileVersion",
				"debitCollectionDay", "debitReturnFee")
		})
	}
	return staffSetupDone(c, SetupPayments, flashPaymentsSaved)
}
