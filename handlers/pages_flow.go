package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/views"
)

// Texts of the flow that handlers compose into view models.
const (
	staleNotice      = "This registration changed in another window. Here is where it stands now."
	questionOf       = "Question %d of %d"
	selectProgress   = "Step 1: choose who to register"
	continueText     = "Continue"
	toReviewText     = "Continue to check your answers"
	bornFormat       = "Born 2 January 2006"
	paymentCountdown = 5 // seconds before the browser goes to the payment page
)

// registration is a page request's signed-in user and period.
type registration struct {
	userKey  string
	periodID int64
}

// registrationOf resolves the period and the session of a flow page, or
// renders what the member needs instead (done=false).
func (s *Server) registrationOf(c echo.Context) (registration, bool, error) {
	periodID, ok := periodParam(c)
	if !ok {
		return registration{}, false, s.accessDenied(c, "period")
	}
	sess, ok, err := s.browserSession(c)
	if !ok {
		return registration{}, false, err
	}
	return registration{userKey: sess.UserKey, periodID: periodID}, true, nil
}

// load returns the current form, rendering access denied for a period that
// closed or a user key that lost its link meanwhile.
func (s *Server) load(c echo.Context, r registration) (*engine.Form, bool, error) {
	form, _, err := s.engine.LoadMembershipForm(c.Request().Context(), r.userKey, r.periodID, nil)
	if err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeNotFound || code == engine.CodeConflict {
			return nil, false, s.accessDenied(c, "period")
		}
		return nil, false, err
	}
	return form, true, nil
}

// currentForm resolves a flow page's registration and its current form, or
// renders what the member needs instead (ok=false).
func (s *Server) currentForm(c echo.Context) (registration, *engine.Form, bool, error) {
	r, ok, err := s.registrationOf(c)
	if !ok {
		return r, nil, false, err
	}
	form, ok, err := s.load(c, r)
	return r, form, ok, err
}

// stepURL is the page of a form's current step.
func stepURL(f *engine.Form) string {
	switch {
	case f.State == engine.StateDone:
		return registerPath(f.PeriodID, "done")
	case f.Step == 0:
		return registerPath(f.PeriodID, "persons")
	}
	return registerPath(f.PeriodID, "step", strconv.Itoa(f.Step))
}

func personName(p engine.FormPerson) string { return p.FirstName + " " + p.LastName }

var badges = map[string]string{
	engine.PersonAvailable:      "badge-available",
	engine.PersonRegistered:     "badge-registered",
	engine.PersonPendingPayment: "badge-pending",
}

func personStatuses(people []engine.FormPerson, status func(engine.FormPerson) string) []views.PersonStatusModel {
	out := make([]views.PersonStatusModel, len(people))
	for i, p := range people {
		st := status(p)
		out[i] = views.PersonStatusModel{Name: personName(p), Born: p.DateOfBirth.Format(bornFormat), Status: st, Badge: badges[st]}
	}
	return out
}

func quoteLines(q *engine.Quote) ([]views.OrderLineModel, string) {
	lines := make([]views.OrderLineModel, len(q.Lines))
	for i, l := range q.Lines {
		lines[i] = views.OrderLineModel{Description: l.Description, Amount: engine.FormatMoney(l.AmountMinor, q.Currency)}
	}
	return lines, engine.FormatMoney(q.TotalMinor, q.Currency)
}

// overview renders GET /membership/register/:periodId for the signed-in user.
func (s *Server) overview(c echo.Context, periodID int64) error {
	sess, ok, err := s.browserSession(c)
	if !ok {
		return err
	}
	o, err := s.engine.LoadOverview(c.Request().Context(), sess.UserKey, periodID)
	if err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeNotFound || code == engine.CodeConflict {
			return s.accessDenied(c, "period")
		}
		return err
	}
	f := o.Form
	m := views.OverviewModel{
		Chrome: s.chrome(o.Period.Name), Period: o.Period.Name,
		Persons:   personStatuses(o.Persons, func(p engine.FormPerson) string { return p.Status }),
		StartURL:  registerPath(periodID, "persons"),
		ResumeURL: registerPath(periodID, "resume"),
		ResetURL:  registerPath(periodID, "reset"),
	}
	switch f.State {
	case engine.StateRunning, engine.StateResume, engine.StateSuspended:
		m.State = views.OverviewInProgress
	case engine.StateDone:
		m.State, m.PayURL = views.OverviewCommitted, f.PaymentURL
		m.Lines, m.Total = quoteLines(o.Order)
	default:
		m.State = views.OverviewNew
		selectable := false
		for _, p := range o.Persons {
			selectable = selectable || p.CanSelect
		}
		if !selectable {
			m.State = views.OverviewNothingToDo
		}
	}
	return render(c, http.StatusOK, views.Overview(m))
}

// personsPage answers GET /membership/register/:periodId/persons.
func (s *Server) personsPage(c echo.Context) error {
	return s.showStep(c, 0)
}

// stepPage answers GET /membership/register/:periodId/step/:n. Any other
// step than the current one redirects there: addresses in history stay
// valid without letting the member skip ahead.
func (s *Server) stepPage(c echo.Context) error {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 {
		n = -1
	}
	return s.showStep(c, n)
}

func (s *Server) showStep(c echo.Context, n int) error {
	_, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone || form.Step != n {
		return c.Redirect(http.StatusSeeOther, stepURL(form))
	}
	return render(c, http.StatusOK, views.Step(s.stepModel(form, nil, nil, "")))
}

// submitPersons answers POST /membership/register/:periodId/persons (fields person=id...).
func (s *Server) submitPersons(c echo.Context) error {
	return s.submitStep(c, 0)
}

// submitAnswers answers POST /membership/register/:periodId/step/:n.
func (s *Server) submitAnswers(c echo.Context) error {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 {
		return newAPIError(http.StatusNotFound, "No such step.")
	}
	return s.submitStep(c, n)
}

// submitStep stores one page's answers and moves on (POST, then 303, then
// GET). The last question holds its commit for the check-your-answers page.
func (s *Server) submitStep(c echo.Context, n int) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone || form.Step != n {
		return s.renderCurrent(c, form, staleNotice)
	}
	values, err := c.FormParams()
	if err != nil {
		return newAPIError(http.StatusBadRequest, "The form could not be read.")
	}
	in := engine.NextInput{ProcessID: form.ProcessIDString(), Step: n, HoldCommit: n == form.TotalSteps}
	posted := postedAnswers(form, values)
	if n == 0 {
		for _, raw := range values["person"] {
			if id, err := strconv.ParseInt(raw, 10, 64); err == nil {
				in.People = append(in.People, engine.PersonInput{ID: id})
			}
		}
	} else {
		for _, p := range form.People {
			if a, ok := posted[p.ID]; ok && !p.Hide {
				in.People = append(in.People, engine.PersonInput{ID: p.ID, Answer: &a})
			}
		}
	}
	next, err := s.engine.Next(c.Request().Context(), r.userKey, in)
	if err != nil {
		if e, ok := engine.AsError(err); ok {
			switch e.Code {
			case engine.CodeValidation:
				m := s.stepModel(form, values, e, "")
				return render(c, http.StatusUnprocessableEntity, views.Step(m))
			case engine.CodeConflict:
				return s.reloadWithNotice(c, r)
			}
		}
		return err
	}
	if in.HoldCommit {
		return c.Redirect(http.StatusSeeOther, registerPath(r.periodID, "review"))
	}
	return c.Redirect(http.StatusSeeOther, stepURL(next))
}

// reloadWithNotice shows the current state after a stale or double submission.
func (s *Server) reloadWithNotice(c echo.Context, r registration) error {
	form, ok, err := s.load(c, r)
	if !ok {
		return err
	}
	return s.renderCurrent(c, form, staleNotice)
}

// renderCurrent renders the form's current step with a notice (status 409),
// or sends the member to it when it is not a question page.
func (s *Server) renderCurrent(c echo.Context, form *engine.Form, notice string) error {
	if form.State == engine.StateDone {
		return c.Redirect(http.StatusSeeOther, stepURL(form))
	}
	return render(c, http.StatusConflict, views.Step(s.stepModel(form, nil, nil, notice)))
}

// postedAnswers reads a question page's inputs as the engine's answers.
func postedAnswers(form *engine.Form, values map[string][]string) map[int64]string {
	out := map[int64]string{}
	if form.Question == nil {
		return out
	}
	one := first(values["one"])
	for _, p := range form.People {
		key := fieldID(p.ID)
		switch form.Question.Type {
		case engine.TypeCheckbox, engine.TypeAccept:
			out[p.ID] = "0"
			if first(values[key]) == "1" {
				out[p.ID] = "1"
			}
		case engine.TypeOne:
			out[p.ID] = "0"
			if one == strconv.FormatInt(p.ID, 10) {
				out[p.ID] = "1"
			}
		case engine.TypeMulti:
			out[p.ID] = strings.Join(values[key], ",")
		default:
			if v, ok := values[key]; ok {
				out[p.ID] = first(v)
			}
		}
	}
	return out
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// answerFieldPrefix starts the name of every answer field of a question page.
const answerFieldPrefix = "answer-"

func fieldID(personID int64) string { return answerFieldPrefix + strconv.FormatInt(personID, 10) }

// questionKinds maps the engine's question types to the step page's kinds.
// Definitions admit no other types (engine.QuestionTypes).
var questionKinds = map[engine.QuestionType]views.QuestionKind{
	engine.TypeText:     views.KindText,
	engine.TypeNumber:   views.KindNumber,
	engine.TypeDropdown: views.KindDropdown,
	engine.TypeCheckbox: views.KindCheckbox,
	engine.TypeAccept:   views.KindAccept,
	engine.TypeOne:      views.KindOne,
	engine.TypeRadio:    views.KindRadio,
	engine.TypeMulti:    views.KindMulti,
}

// stepModel builds a step page. values, when set, are what the member just
// posted (kept on a validation error); e holds the errors.
func (s *Server) stepModel(form *engine.Form, values map[string][]string, e *engine.Error, notice string) views.StepModel {
	m := views.StepModel{
		Chrome: s.chrome(""), Number: form.Step, Total: form.TotalSteps, Notice: notice,
		Action: stepURL(form), SubmitText: continueText,
	}
	problems := map[int64]string{}
	if e != nil {
		m.Chrome.Error = true
		for _, p := range e.People {
			problems[p.PersonID] = p.Message
		}
	}
	if form.Step > 0 {
		m.BackAction, m.BackStep = registerPath(form.PeriodID, "back"), form.Step
	}
	if form.Step == 0 {
		m.Type, m.Heading, m.Progress, m.Required = views.KindSelectPersons, views.SelectPersonsHeading(), selectProgress, true
		chosen := map[string]bool{}
		for _, v := range values["person"] {
			chosen[v] = true
		}
		for _, p := range form.People {
			f := views.FieldModel{ID: fieldID(p.ID), Label: personName(p), Value: strconv.FormatInt(p.ID, 10),
				Checked: p.Selected, Disabled: !p.CanSelect, Error: problems[p.ID]}
			if values != nil {
				f.Checked = chosen[f.Value]
			}
			if !p.CanSelect {
				f.Hint = p.Status
			}
			m.Fields = append(m.Fields, f)
		}
		if e != nil && len(e.People) == 0 && len(m.Fields) > 0 {
			m.Fields[0].Error = e.Message
		}
	} else {
		q := form.Question
		m.Type, m.Heading, m.Required = questionKinds[q.Type], q.Text, q.Required
		m.Progress = fmt.Sprintf(questionOf, form.Step, form.TotalSteps)
		if form.Step == form.TotalSteps {
			m.SubmitText = toReviewText
		}
		for _, o := range q.Options {
			m.Choices = append(m.Choices, views.ChoiceModel{Value: o.Value, Label: o.Label})
		}
		posted := map[int64]string{}
		if values != nil {
			posted = postedAnswers(form, values)
		}
		for _, p := range form.People {
			if p.Hide {
				continue
			}
			v := ""
			if p.Answer != nil {
				v = *p.Answer
			}
			if values != nil {
				v = posted[p.ID]
			}
			f := views.FieldModel{ID: fieldID(p.ID), Label: personName(p), Value: v, Checked: v == "1", Error: problems[p.ID]}
			switch q.Type {
			case engine.TypeOne:
				f.Value = strconv.FormatInt(p.ID, 10)
			case engine.TypeMulti:
				if v != "" {
					f.Values = strings.Split(v, ",")
				}
			}
			m.Fields = append(m.Fields, f)
		}
	}
	for _, f := range m.Fields {
		if f.Error == "" {
			continue
		}
		href := "#" + f.ID
		if m.Type == views.KindRadio || m.Type == views.KindMulti {
			href += "-0"
		}
		m.Errors = append(m.Errors, views.ErrorLink{Href: href, Message: f.Label + ": " + f.Error})
	}
	m.Chrome.Title = m.Heading
	return m
}
