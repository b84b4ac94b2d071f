package members

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/handlers/server"
	"portal/relay/session"
	"portal/views/memberview"
)

// paymentOutcomes maps the engine's payment outcomes to the return page's.
var paymentOutcomes = map[engine.PaymentOutcome]memberview.PaymentOutcome{
	engine.OutcomeSuccess:   memberview.OutcomeSuccess,
	engine.OutcomeFailed:    memberview.OutcomeFailed,
	engine.OutcomeCancelled: memberview.OutcomeCancelled,
	engine.OutcomePending:   memberview.OutcomePending,
	engine.OutcomeOpen:      memberview.OutcomePending,
}

// PaymentReturn answers GET /membership/payment-return?reference=&status=&transactionId=&signature=.
// The status in the query is never believed: the test gateway's return is
// verified by its signature; for a real provider (Stripe) the page shows
// what its webhook settled or, while the attempt is pending, what a
// retrieval from its API says, and "we are confirming your payment" until
// then (checked again by htmx every few seconds, or by a link without
// JavaScript). A replayed or forged return changes nothing.
//
// It is a GET with a side effect (settling the payment), because that is
// how payment gateways send members back. That is safe because settlement
// is idempotent and monotonic: the same return again, a reload or a
// prefetch finds the attempt settled and only shows the outcome.
//
// The address travels in browser history and the provider's logs, so the
// page shows names, order lines and amounts only to the signed-in member
// who owns the order. Anyone else (no session, or another user key's) reads
// what happened and nothing personal. A member coming back from an external
// gateway arrives cross-site, without the SameSite=Strict cookie: the link
// to the registration, a same-site navigation, shows them the details.
func (s *Server) PaymentReturn(c echo.Context) error {
	ret := engine.PaymentReturn{
		Reference: c.QueryParam("reference"), Status: c.QueryParam("status"),
		TransactionID: c.QueryParam("transactionId"), Signature: c.QueryParam("signature"),
	}
	ret.Amount, ret.Currency = c.QueryParam("amount"), c.QueryParam("currency")
	if ret.Reference == "" {
		return server.NewAPIError(http.StatusBadRequest, "The payment return is missing its reference.")
	}
	ctx := c.Request().Context()
	res, err := payment.Of(s.engine).CompletePayment(ctx, ret)
	if err != nil {
		return err
	}
	owner := false
	if sess, err := s.SessionFor(c); err == nil {
		owner = sess.UserKey != "" && sess.UserKey == res.UserKey && (res.Order == nil || server.BoundTo(sess, res.Order.OrganisationID))
	} else if !errors.Is(err, session.ErrNotFound) {
		// The payment is settled; only the details depend on the session.
		s.LogFor(c).Warn("payment return: session store unavailable; showing the outcome without details", "err", err)
	}
	m := memberview.PaymentReturnModel{Reference: res.Reference, Outcome: paymentOutcomes[res.Outcome], RegisterURL: server.RegisterPath(c, res.PeriodID), DetailsHidden: !owner,
		RetryURL: server.OrganisationPath(c, server.PaymentRetryPath)} // the organisation's prefix kept: the retry needs its session
	if owner {
		m.Lines, m.Total = server.OrderLines(server.LangOf(c), res.Order)
	}
	switch {
	case res.Mismatch:
		m.Chrome, m.Outcome = s.Chrome(server.Tr(c, "return_mismatch_title")), memberview.OutcomeMismatch
		m.Message = server.Tr(c, "return_mismatch")
	case res.Stale:
		m.Chrome, m.Outcome = s.Chrome(server.Tr(c, "return_stale_title")), memberview.OutcomeStale
		m.Message = server.Tr(c, "return_stale")
	case res.Outcome == engine.OutcomePending || (res.Outcome == engine.OutcomeOpen && c.QueryParam("status") == string(engine.OutcomeSuccess)):
		// Back from the provider before its confirmation: the query's
		// "success" only chooses this wording, it settles nothing.
		m.Chrome, m.Outcome = s.Chrome(server.Tr(c, "return_pending_title")), memberview.OutcomePending
		m.Message = server.Tr(c, "return_pending")
		m.PollURL = server.OrganisationPath(c, server.PaymentReturnPath) + "?" + url.Values{"reference": {res.Reference}, "status": {string(engine.OutcomeSuccess)}}.Encode()
	case res.Outcome == engine.OutcomeOpen:
		m.Chrome, m.Outcome = s.Chrome(server.Tr(c, "return_incomplete_title")), memberview.OutcomeCancelled
		m.Message = server.Tr(c, "return_incomplete")
		m.RetryReference = res.Reference
	case res.Outcome == engine.OutcomeSuccess:
		m.Chrome = s.Chrome(server.Tr(c, "return_success_title"))
		m.Message = server.Tr(c, "return_success")
		if owner {
			m.RegisterURL = ""
		}
	case res.Outcome == engine.OutcomeFailed:
		m.Chrome = s.Chrome(server.Tr(c, "return_failed_title"))
		m.Chrome.Error = true
		m.Message = server.Tr(c, "return_failed")
		m.RetryReference = res.Reference
	default:
		m.Chrome = s.Chrome(server.Tr(c, "return_cancelled_title"))
		m.Message = server.Tr(c, "return_cancelled")
		m.RetryReference = res.Reference
	}
	if res.Order.Status != engine.OrderUnpaid || !owner {
		m.RetryReference = "" // a retry is for the owner's session only (paymentRetry checks it again)
	}
	return server.Render(c, http.StatusOK, memberview.PaymentReturn(m))
}
