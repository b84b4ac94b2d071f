package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/views"
)

// backStep answers POST /membership/register/:periodId/back (field step:
// the step the member is leaving): the previous step, with its answers.
func (s *Server) backStep(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	from, err := strconv.Atoi(c.FormValue("step"))
	if err != nil {
		return s.renderCurrent(c, form, staleNotice)
	}
	next, err := s.engine.Back(c.Request().Context(), r.userKey, form.ProcessIDString(), &from)
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.renderCurrent(c, form, staleNotice)
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, stepURL(next))
}

// changeStep answers POST /membership/register/:periodId/change (field step:
// the question to change), from the check-your-answers page.
func (s *Server) changeStep(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	target, err := strconv.Atoi(c.FormValue("step"))
	if err != nil || target < 0 {
		return s.renderCurrent(c, form, staleNotice)
	}
	next, err := s.engine.ReturnTo(c.Request().Context(), r.userKey, form.ProcessIDString(), target)
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.renderCurrent(c, form, staleNotice)
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, stepURL(next))
}

// reviewPage answers GET /membership/register/:periodId/review: every
// answer grouped by person, the price the commit will charge, and "Confirm
// and pay". It comes before the commit.
func (s *Server) reviewPage(c echo.Context) error {
	return s.showReview(c, http.StatusOK, "")
}

func (s *Server) showReview(c echo.Context, status int, notice string) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone || form.Step != form.TotalSteps {
		return c.Redirect(http.StatusSeeOther, stepURL(form))
	}
	rv, err := s.engine.Review(c.Request().Context(), r.userKey, form.ProcessIDString())
	if err != nil {
		return err
	}
	if !rv.Complete {
		return c.Redirect(http.StatusSeeOther, stepURL(form))
	}
	m := views.ReviewModel{
		Chrome: s.chrome("Check your answers"), Period: rv.Period, Notice: notice,
		ChangeAction: registerPath(r.periodID, "change"), ConfirmAction: registerPath(r.periodID, "confirm"),
		Version:      strconv.FormatInt(rv.Version, 10),
		PriceProblem: rv.QuoteError, CanConfirm: rv.QuoteError == "",
	}
	if rv.QuoteError == "" {
		m.Lines, m.Total = quoteLines(&rv.Quote)
	}
	for _, p := range rv.Persons {
		pm := views.ReviewPersonModel{Name: p.FirstName + " " + p.LastName}
		for _, a := range p.Answers {
			pm.Rows = append(pm.Rows, views.ReviewRow{Question: a.Question, Answer: a.Answer, ChangeStep: a.Step})
		}
		m.Persons = append(m.Persons, pm)
	}
	return render(c, status, views.Review(m))
}

// confirm answers POST /membership/register/:periodId/confirm: the commit
// (memberships pending payment, an unpaid order), then the done page.
func (s *Server) confirm(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone {
		// A double click: the first one committed.
		return c.Redirect(http.StatusSeeOther, stepURL(form))
	}
	reviewed, err := strconv.ParseInt(c.FormValue("version"), 10, 64)
	if err != nil {
		return s.showReview(c, http.StatusConflict, staleNotice)
	}
	if _, err := s.engine.Confirm(c.Request().Context(), r.userKey, form.ProcessIDString(), reviewed); err != nil {
		if engine.ErrorCode(err) == engine.CodeConflict {
			// Show the current answers to check again, or the current step.
			return s.showReview(c, http.StatusConflict, staleNotice)
		}
		if e, ok := engine.AsError(err); ok && e.Code == engine.CodeValidation && len(e.People) > 0 {
			// A person who can no longer be registered (unlinked since the
			// selection): say who, on the review page, whose Change links
			// lead back to person selection.
			msgs := make([]string, len(e.People))
			for i, p := range e.People {
				msgs[i] = p.Message
			}
			return s.showReview(c, http.StatusUnprocessableEntity, strings.Join(msgs, " "))
		}
		if e, ok := engine.AsError(err); ok && (e.Code == engine.CodeConflict || e.Code == engine.CodeValidation) {
			return s.reloadWithNotice(c, r)
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, registerPath(r.periodID, "done"))
}

// donePage answers GET /membership/register/:periodId/done: the order and
// the payment link, followed after a visible countdown.
func (s *Server) donePage(c echo.Context) error {
	r, ok, err := s.registrationOf(c)
	if !ok {
		return err
	}
	o, err := s.engine.LoadOverview(c.Request().Context(), r.userKey, r.periodID)
	if err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeNotFound || code == engine.CodeConflict {
			return s.accessDenied(c, "period")
		}
		return err
	}
	if o.Form.State != engine.StateDone {
		return c.Redirect(http.StatusSeeOther, stepURL(o.Form))
	}
	m := views.DoneModel{Chrome: s.chrome("Registration saved"), Period: o.Period.Name,
		Persons:    personStatuses(o.Form.People, func(p engine.FormPerson) string { return p.Status }),
		PaymentURL: o.Form.PaymentURL, Seconds: paymentCountdown}
	m.Lines, m.Total = quoteLines(o.Order)
	return render(c, http.StatusOK, views.Done(m))
}

// resetPage answers GET /membership/register/:periodId/reset: "start again?".
func (s *Server) resetPage(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	return render(c, http.StatusOK, views.ResetConfirm(views.ResetModel{Chrome: s.chrome("Start again?"),
		Action: registerPath(r.periodID, "reset"), CancelURL: registerPath(r.periodID), Committed: form.State == engine.StateDone}))
}

// resetRegistration answers POST /membership/register/:periodId/reset.
func (s *Server) resetRegistration(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	next, err := s.engine.Reset(c.Request().Context(), r.userKey, form.ProcessIDString())
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.reloadWithNotice(c, r)
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, stepURL(next))
}

// resumeRegistration answers POST /membership/register/:periodId/resume:
// continue where the member left off.
func (s *Server) resumeRegistration(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	next, err := s.engine.Resume(c.Request().Context(), r.userKey, form.ProcessIDString())
	if err != nil {
		return err
	}
	if next.State != engine.StateDone && next.Step == next.TotalSteps {
		if rv, err := s.engine.Review(c.Request().Context(), r.userKey, next.ProcessIDString()); err == nil && rv.Complete {
			return c.Redirect(http.StatusSeeOther, registerPath(r.periodID, "review"))
		}
	}
	return c.Redirect(http.StatusSeeOther, stepURL(next))
}
