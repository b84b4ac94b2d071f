package members

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views/memberview"
)

// ReviewPage answers GET /membership/register/:periodId/review: every
// answer grouped by person, the price the commit will charge, and "Confirm
// and pay". It comes before the commit.
func (s *Server) ReviewPage(c echo.Context) error {
	return s.showReview(c, http.StatusOK, "")
}

func (s *Server) showReview(c echo.Context, status int, notice string) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone || form.Step != form.TotalSteps {
		return c.Redirect(http.StatusSeeOther, stepURL(c, form))
	}
	rv, err := registration.Of(s.engine).Review(c.Request().Context(), r.userKey, form.ProcessIDString())
	if err != nil {
		return err
	}
	if !rv.Complete {
		return c.Redirect(http.StatusSeeOther, stepURL(c, form))
	}
	m := memberview.ReviewModel{
		Chrome: s.Chrome(server.Tr(c, "title_review")), Period: rv.Period, Notice: notice,
		ChangeAction: server.RegisterPath(c, r.periodID, "change"), ConfirmAction: server.RegisterPath(c, r.periodID, "confirm"),
		Version:      strconv.FormatInt(rv.Version, 10),
		PriceProblem: rv.QuoteError, CanConfirm: rv.QuoteError == "",
	}
	if rv.QuoteError == "" {
		m.Lines, m.Total = quoteLines(server.LangOf(c), &rv.Quote)
	}
	if m.Methods.Methods, err = payment.Of(s.engine).PaymentMethods(c.Request().Context(), rv.OrganisationID, rv.PeriodID); err != nil {
		return err
	}
	if len(m.Methods.Methods) > 0 {
		m.Methods.Current = m.Methods.Methods[0]
		if chosen := c.FormValue("paymentMethod"); slices.Contains(m.Methods.Methods, chosen) {
			m.Methods.Current = chosen // shown again after a conflict: the member's choice stays
		}
	}
	for _, p := range rv.Persons {
		pm := memberview.ReviewPersonModel{Name: p.FirstName + " " + p.LastName}
		for _, a := range p.Answers {
			pm.Rows = append(pm.Rows, memberview.ReviewRow{Question: a.Question, Answer: reviewAnswer(c, a), ChangeStep: a.Step})
		}
		m.Persons = append(m.Persons, pm)
	}
	return server.Render(c, status, memberview.Review(m))
}

// reviewAnswer is an answer as the review prints it: the engine's Yes/No of
// 0/1 questions in the request's language, other answers as given.
func reviewAnswer(c echo.Context, a registration.ReviewAnswer) string {
	switch {
	case a.Type != engine.TypeCheckbox && a.Type != engine.TypeAccept && a.Type != engine.TypeOne:
		return a.Answer
	case a.Answer == "Yes":
		return server.Tr(c, "flow_yes")
	case a.Answer == "No":
		return server.Tr(c, "flow_no")
	}
	return a.Answer
}
