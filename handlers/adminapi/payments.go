package adminapi

import (
	"net/http"
	"regexp"
	"strings"
	"time"

	"portal/engine/payment/settings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/handlers/server"
)

// The admin API's payments: the organisation's own payment settings
// (write-only secrets), staff capture of a bank transfer, refunds made by
// hand, and the payments that need a person.

// mountAdminPayments adds the payment routes to the admin API's group.
func (s *Server) mountAdminPayments(admin *echo.Group) {
	admin.GET("/payment-settings", s.getPaymentSettings)
	admin.PATCH("/payment-settings", s.patchPaymentSettings, server.RequireJSON)
	admin.GET("/payments/attention", s.listPaymentsNeedingAttention)
	admin.POST("/payments/:reference/capture", s.capturePayment, server.RequireJSON)
	admin.POST("/payments/:reference/refunded", s.markRefundPaidBack, server.RequireJSON)
}

// PaymentSettingsDTO is an organisation's own payment settings in the
// admin API: the Stripe keys only as whether they are set.
type PaymentSettingsDTO struct {
	// Provider is "" while the organisation pays through the portal's
	// default provider.
	Provider               string `json:"provider"`
	StripeSecretKeySet     bool   `json:"stripeSecretKeySet"`
	StripeWebhookSecretSet bool   `json:"stripeWebhookSecretSet"`
	BankCreditorName       string `json:"bankCreditorName"`
	BankIBAN               string `json:"bankIban"`
	BankBIC                string `json:"bankBic"`
	BankCreditorAddress    string `json:"bankCreditorAddress"`
	// Methods are the payment methods the members choose from, the
	// default (provider) first; empty while the provider is the only one.
	Methods []string `json:"methods"`
	// DebitCreditorID is the SEPA Creditor Identifier (direct debit).
	DebitCreditorID          string `json:"debitCreditorId"`
	DebitPrenotificationDays int    `json:"debitPrenotificationDays"`
	DebitFileVersion         string `json:"debitFileVersion"`
	// DebitCollectionDay is the day of the month (1 to 28) the club
	// collects; 0: the first business day after the pre-notification.
	DebitCollectionDay int `json:"debitCollectionDay"`
	// DebitReturnFeeMinor is the bank's fee for a returned debit, added
	// to the order it returned.
	DebitReturnFeeMinor int64      `json:"debitReturnFeeMinor"`
	UpdatedAt           *time.Time `json:"updatedAt"`
}

func paymentSettingsDTO(v *settings.PaymentSettingsView) PaymentSettingsDTO {
	return PaymentSettingsDTO{Provider: v.Provider, StripeSecretKeySet: v.StripeSecretKeySet, StripeWebhookSecretSet: v.StripeWebhookSecretSet,
		BankCreditorName: v.BankCreditorName, BankIBAN: v.BankIBAN, BankBIC: v.BankBIC, BankCreditorAddress: v.BankCreditorAddress,
		Methods: v.Methods, DebitCreditorID: v.DebitCreditorID, DebitPrenotificationDays: v.DebitPrenotificationDays,
		DebitFileVersion: v.DebitFileVersion, DebitCollectionDay: v.DebitCollectionDay, DebitReturnFeeMinor: v.DebitReturnFeeMinor,
		UpdatedAt: v.UpdatedAt}
}

// PaymentSettingsPatch is the body of PATCH /api/admin/payment-settings:
// absent fields stay as they are; "" clears one.
type PaymentSettingsPatch struct {
	Provider            *string `json:"provider"`
	StripeSecretKey     *string `json:"stripeSecretKey"`
	StripeWebhookSecret *string `json:"stripeWebhookSecret"`
	BankCreditorName    *string `json:"bankCreditorName"`
	BankIBAN            *string `json:"bankIban"`
	BankBIC             *string `json:"bankBic"`
	BankCreditorAddress *string `json:"bankCreditorAddress"`
	// Methods replaces the list of methods, the default first (it becomes
	// the provider); [] offers the provider alone.
	Methods                  *[]string `json:"methods"`
	DebitCreditorID          *string   `json:"debitCreditorId"`
	DebitPrenotificationDays *int      `json:"debitPrenotificationDays"`
	DebitFileVersion         *string   `json:"debitFileVersion"`
	DebitCollectionDay       *int      `json:"debitCollectionDay"`
	DebitReturnFeeMinor      *int64    `json:"debitReturnFeeMinor"`
}

// getPaymentSettings answers GET /api/admin/payment-settings.
func (s *Server) getPaymentSettings(c echo.Context) error {
	v, err := settings.Of(s.engine).PaymentSettings(c.Request().Context(), keyOf(c).OrganisationID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, paymentSettingsDTO(v))
}

// patchPaymentSettings answers PATCH /api/admin/payment-settings: a
// partial update in one transaction, checked as a whole (422 names every
// field); the organisation's provider changes at once on this instance.
func (s *Server) patchPaymentSettings(c echo.Context) error {
	var body PaymentSettingsPatch
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	v, err := settings.Of(s.engine).StaffSetPaymentSettings(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, settings.PaymentSettingsChange{
		Provider: body.Provider, StripeSecretKey: body.StripeSecretKey, StripeWebhookSecret: body.StripeWebhookSecret,
		BankCreditorName: body.BankCreditorName, BankIBAN: body.BankIBAN, BankBIC: body.BankBIC, BankCreditorAddress: body.BankCreditorAddress,
		Methods: body.Methods, DebitCreditorID: body.DebitCreditorID, DebitPrenotificationDays: body.DebitPrenotificationDays,
		DebitFileVersion: body.DebitFileVersion, DebitCollectionDay: body.DebitCollectionDay, DebitReturnFeeMinor: body.DebitReturnFeeMinor})
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, paymentSettingsDTO(v))
}

// CaptureRequest is the body of POST /api/admin/payments/{reference}/capture.
type CaptureRequest struct {
	// Amount is what arrived, as a decimal such as "184.50".
	Amount string `json:"amount"`
	// Currency is its ISO 4217 code; absent: the payment's.
	Currency string `json:"currency"`
	// Date is the booking date, YYYY-MM-DD; absent: today.
	Date string `json:"date"`
	Note string `json:"note"`
	// ID is the bank's id of the credit, so that it is captured once;
	// absent: the reference, date and amount identify it.
	ID string `json:"id"`
}

// CaptureResultDTO is what a capture did.
type CaptureResultDTO struct {
	// Result: completed (the registration is complete), recorded (a
	// partial or excess amount or another currency: nothing completed),
	// refund (the order was paid or cancelled already: the money is owed
	// back; for a bank transfer to a paid order, Reference is the second
	// payment recorded for it) or unchanged (this capture was recorded before, or the
	// payment was settled already).
	Result         string `json:"result"`
	Problem        string `json:"problem,omitempty"`
	Reference      string `json:"reference"`
	RF             string `json:"rf"`
	Paid           string `json:"paid"`
	Expected       string `json:"expected"`
	Currency       string `json:"currency"`
	OrderReference string `json:"orderReference"`
}

var (
	amountPattern   = regexp.MustCompile(`^[0-9]{1,10}(\.[0-9]{1,2})?$`)
	currencyPattern = regexp.MustCompile(`^[A-Za-z]{3}$`)
)

// capturePayment answers POST /api/admin/payments/{reference}/capture:
// money staff saw arrive for a bank transfer (reference: its RF reference,
// the order's PO- or the attempt's PR- reference), settled exactly as an
// online payment (engine.Service.CapturePayment).
func (s *Server) capturePayment(c echo.Context) error {
	var body CaptureRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	var fields []server.FieldErrorBody
	if !amountPattern.MatchString(body.Amount) || strings.Trim(body.Amount, "0.") == "" {
		fields = append(fields, server.FieldErrorBody{Field: "amount", Message: "must be a positive amount such as 184.50"})
	}
	if body.Currency != "" && !currencyPattern.MatchString(body.Currency) {
		fields = append(fields, server.FieldErrorBody{Field: "currency", Message: "must be a three-letter ISO 4217 code such as EUR"})
	}
	var booked time.Time
	if body.Date != "" {
		d, err := time.Parse(time.DateOnly, body.Date)
		if err != nil {
			fields = append(fields, server.FieldErrorBody{Field: "date", Message: "must be a date as YYYY-MM-DD"})
		}
		booked = d
	}
	if len(body.Note) > 500 || len(body.ID) > 200 {
		fields = append(fields, server.FieldErrorBody{Field: "note", Message: "at most 500 characters (id: 200)"})
	}
	if len(fields) > 0 {
		return server.NewAPIError(http.StatusUnprocessableEntity, "The capture is not valid.", fields...)
	}
	minor, err := engine.ParseAmount(body.Amount)
	if err != nil {
		return server.NewAPIError(http.StatusUnprocessableEntity, "The capture is not valid.", server.FieldErrorBody{Field: "amount", Message: "must be a positive amount such as 184.50"})
	}
	res, err := staff.Of(s.engine).CaptureTransfer(c.Request().Context(), apiActor(c), payment.Capture{Reference: c.Param("reference"), AmountMinor: minor,
		Currency: body.Currency, BookedOn: booked, Note: body.Note, ID: body.ID})
	if err != nil {
		return paymentAdminError(err)
	}
	currency := strings.ToUpper(body.Currency)
	if currency == "" {
		currency = res.Currency
	}
	out := CaptureResultDTO{Problem: res.Problem, Reference: res.Reference, RF: res.RF.String(),
		Paid: engine.FormatMoney(minor, currency), Expected: engine.FormatMoney(res.ExpectedMinor, res.Currency), Currency: res.Currency}
	if res.Order != nil {
		out.OrderReference = res.Order.PayReference
	}
	if res.SecondCredit {
		// A second payment of a paid order: the payment recorded for it,
		// whose refund staff mark with POST .../refunded.
		out.Reference = res.CreditReference
	}
	switch {
	case res.Replayed && !res.Mismatch:
		out.Result = "unchanged" // this capture before, or a payment settled already
	case res.Problem != "":
		out.Result = "recorded"
	case res.Stale:
		out.Result = "refund"
	default:
		out.Result = "completed"
	}
	return c.JSON(http.StatusOK, out)
}

// paymentAdminError maps the engine's refusals of a payment operation:
// a reference that is not a bank transfer, or malformed, is 422.
func paymentAdminError(err error) error {
	if e, ok := engine.AsError(err); ok && e.Code == engine.CodeInvalid {
		return server.NewAPIError(http.StatusUnprocessableEntity, e.Message, server.FieldErrorBody{Field: "reference", Message: e.Message})
	}
	return adminError(err)
}

// RefundPaidBackRequest is the body of POST /api/admin/payments/{reference}/refunded.
type RefundPaidBackRequest struct {
	Note string `json:"note"`
}

// PaymentAttentionDTO is a payment staff are to act on.
type PaymentAttentionDTO struct {
	Reference      string `json:"reference"`
	OrderReference string `json:"orderReference"`
	Amount         string `json:"amount"`
	Currency       string `json:"currency"`
	// Action: refundByHand (transfer the money back, then mark it
	// refunded) or check (reason says what to look at).
	Action string `json:"action"`
	// Reason: problem (a confirmation did not match: problem says how),
	// second_payment (money due back; refundDue when by hand),
	// debit_returned (the bank's reason in problem), debit_left_out (why
	// in problem) or pending_too_long (open for more than 14 days).
	Reason    string    `json:"reason"`
	Problem   string    `json:"problem"`
	RefundDue bool      `json:"refundDue"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// markRefundPaidBack answers POST /api/admin/payments/{reference}/refunded:
// staff transferred back money owed by hand (a bank transfer that came in
// for an order paid or cancelled already).
func (s *Server) markRefundPaidBack(c echo.Context) error {
	var body RefundPaidBackRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	if len(body.Note) > 500 {
		return server.NewAPIError(http.StatusUnprocessableEntity, "The note is too long.", server.FieldErrorBody{Field: "note", Message: "at most 500 characters"})
	}
	p, err := payment.Of(s.engine).StaffMarkRefundPaidBack(c.Request().Context(), apiActor(c), c.Param("reference"), body.Note)
	if err != nil {
		return paymentAdminError(err)
	}
	return c.JSON(http.StatusOK, map[string]string{"reference": p.Reference, "refundStatus": string(p.RefundStatus)})
}

// listPaymentsNeedingAttention answers GET /api/admin/payments/attention.
func (s *Server) listPaymentsNeedingAttention(c echo.Context) error {
	list, err := staff.Of(s.engine).PaymentsNeedingAttention(c.Request().Context(), staff.AttentionQuery{Limit: 500})
	if err != nil {
		return err
	}
	out := make([]PaymentAttentionDTO, 0, len(list))
	for _, a := range list {
		d := PaymentAttentionDTO{Reference: a.Payment.Reference, OrderReference: a.Order.PayReference, Amount: engine.FormatAmount(a.Payment.AmountMinor),
			Currency: a.Payment.Currency, Action: "check", Reason: a.Reason, Problem: a.Payment.Problem, RefundDue: a.RefundByHand, UpdatedAt: a.Payment.UpdatedAt}
		switch a.Reason {
		case staff.AttentionDebitReturned:
			// Its own reason, with the bank's in words.
			d.Problem = staff.ReturnedDebitText(a.ReturnCode)
		case staff.AttentionDebitLeftOut:
			d.Problem = "direct debit left out of the collection file: " + a.Order.DebitProblem
		}
		if a.RefundByHand {
			d.Action = "refundByHand"
		}
		out = append(out, d)
	}
	return c.JSON(http.StatusOK, out)
}
