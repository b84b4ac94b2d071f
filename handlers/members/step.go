package members

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views/memberview"
)

// PersonsPage answers GET /membership/register/:periodId/persons.
func (s *Server) PersonsPage(c echo.Context) error {
	return s.showStep(c, 0)
}

// StepPage answers GET /membership/register/:periodId/step/:n. Any other
// step than the current one redirects there: addresses in history stay
// valid without letting the member skip ahead.
func (s *Server) StepPage(c echo.Context) error {
	n, ok := server.StepParam(c)
	if !ok {
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
		return c.Redirect(http.StatusSeeOther, stepURL(c, form))
	}
	return server.Render(c, http.StatusOK, memberview.Step(s.stepModel(c, form, nil, nil, "")))
}

func fieldID(personID int64) string {
	return server.AnswerFieldPrefix + strconv.FormatInt(personID, 10)
}

// questionKinds maps the engine's question types to the step page's kinds.
// Definitions admit no other types (engine.QuestionTypes).
var questionKinds = map[engine.QuestionType]memberview.QuestionKind{
	engine.TypeText:     memberview.KindText,
	engine.TypeNumber:   memberview.KindNumber,
	engine.TypeDropdown: memberview.KindDropdown,
	engine.TypeCheckbox: memberview.KindCheckbox,
	engine.TypeAccept:   memberview.KindAccept,
	engine.TypeOne:      memberview.KindOne,
	engine.TypeRadio:    memberview.KindRadio,
	engine.TypeMulti:    memberview.KindMulti,
}

// stepModel builds a step page. values, when set, are what the member just
// posted (kept on a validation error); e holds the errors.
func (s *Server) stepModel(c echo.Context, form *registration.Form, values map[string][]string, e *engine.Error, notice string) memberview.StepModel {
	m := memberview.StepModel{
		Chrome: s.Chrome(""), Number: form.Step, Total: form.PathLength, Notice: notice,
		Action: stepURL(c, form), SubmitText: server.Tr(c, "flow_continue"),
	}
	problems := map[int64]string{}
	if e != nil {
		m.Chrome.Error = true
		for _, p := range e.People {
			problems[p.PersonID] = server.PersonProblem(server.LangOf(c), p)
		}
	}
	if form.Step > 0 {
		m.BackAction, m.BackStep = server.RegisterPath(c, form.PeriodID, "back"), form.Step
	}
	if form.Step == 0 {
		m.Type, m.Heading, m.Progress, m.Required = memberview.KindSelectPersons, memberview.SelectPersonsHeading(c.Request().Context()), server.Tr(c, "flow_select_progress"), true
		chosen := map[string]bool{}
		for _, v := range values["person"] {
			chosen[v] = true
		}
		for _, p := range form.People {
			f := memberview.FieldModel{ID: fieldID(p.ID), Label: personName(p), Value: strconv.FormatInt(p.ID, 10),
				Checked: p.Selected, Disabled: !p.CanSelect, Error: problems[p.ID]}
			if values != nil {
				f.Checked = chosen[f.Value]
			}
			if !p.CanSelect {
				f.Hint = personStatusText(server.LangOf(c), p.Status)
			}
			m.Fields = append(m.Fields, f)
		}
		if e != nil && len(e.People) == 0 && len(m.Fields) > 0 {
			m.Fields[0].Error = server.Tr(c, "validation_select_one") // the one failure of a selection without person errors
		}
	} else {
		q := form.Question
		m.Type, m.Heading, m.Required = questionKinds[q.Type], q.Text, q.Required
		// The count of the current path: steps that conditions leave out
		// are not questions for this registration.
		m.Progress = server.Tr(c, "flow_question_of", map[string]any{"Number": form.Position, "Total": form.PathLength})
		if form.Step == form.TotalSteps {
			m.SubmitText = server.Tr(c, "flow_to_review")
		}
		for _, o := range q.Options {
			m.Choices = append(m.Choices, memberview.ChoiceModel{Value: o.Value, Label: o.Label})
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
			f := memberview.FieldModel{ID: fieldID(p.ID), Label: personName(p), Value: v, Checked: v == "1", Error: problems[p.ID]}
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
		if m.Type == memberview.KindRadio || m.Type == memberview.KindMulti {
			href += "-0"
		}
		m.Errors = append(m.Errors, memberview.ErrorLink{Href: href, Message: f.Label + ": " + f.Error})
	}
	m.Chrome.Title = m.Heading
	return m
}
