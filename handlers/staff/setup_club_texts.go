package staff

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/organisation"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The club's own texts per language on the memberships section: a
// period's name and its price rules' labels (POST
// /staff/setup/periods/{id}/texts), and the texts an enabled language
// still lacks, listed as a to-do on the languages and memberships
// sections. Enabling a language is not refused for missing texts: the
// fields of a language appear once it is enabled, and until its texts are
// given its members see the default language's.

// flashTextsSaved is the result message of saved texts.
const flashTextsSaved = "texts-saved"

func init() {
	staffpage.StaffFlashes[flashTextsSaved] = func(c echo.Context) string { return staffSetupSectionTextIn(c).TextsSaved }
}

// periodTextsForm is the texts form of period p with its rules.
func periodTextsForm(c echo.Context, base string, org *engine.Organisation, p engine.MembershipPeriod, rules []engine.PriceRule) staffview.PeriodTextsForm {
	def, _, _ := strings.Cut(org.DefaultLanguage, "-")
	enabled := org.EnabledLanguageList()
	field := func(name, textsName, label, baseText string, texts engine.Texts) staffview.TextsField {
		f := staffview.TextsField{Field: name, TextsField: textsName, Label: label, Base: baseText}
		for _, l := range enabled {
			if l != def {
				f.Texts = append(f.Texts, staffview.TextField{Language: l, Value: texts[l]})
			}
		}
		return f
	}
	f := staffview.PeriodTextsForm{ID: strconv.FormatInt(p.ID, 10), Action: base + "/periods/" + strconv.FormatInt(p.ID, 10) + "/texts", Period: p.NameTexts.In(server.LangOf(c).Code, p.Name),
		DefaultLanguage: def, Name: field("name", "nameTexts", staffpage.StaffOpsTextIn(c).PeriodName, p.Name, p.NameTexts)}
	for _, r := range rules {
		f.Rules = append(f.Rules, field("rules."+r.Code+".label", "rules."+r.Code+".labelTexts", staffpage.StaffOpsTextIn(c).RuleLabel+": "+r.Code, r.Label, r.LabelTexts))
	}
	return f
}

// textsToDo lists the club texts missing in an enabled language.
func (s *Server) textsToDo(c echo.Context) ([]staffview.TextToDo, error) {
	missing, err := organisation.Of(s.engine).MissingClubTexts(c.Request().Context(), staffpage.StaffUserOf(c).OrganisationID)
	if err != nil {
		return nil, err
	}
	t := staffSetupSectionTextIn(c)
	what := map[string]string{organisation.TextTypeName: t.ToDoTypeName, organisation.TextPeriodName: t.ToDoPeriodName, organisation.TextRuleLabel: t.ToDoRuleLabel}
	out := make([]staffview.TextToDo, 0, len(missing))
	for _, m := range missing {
		out = append(out, staffview.TextToDo{What: what[m.Kind], Name: m.Name, Language: m.Language})
	}
	return out, nil
}

// clubTextOf reads one club text of the form: field in the default
// language, textsField.xx in the others.
func clubTextOf(form url.Values, field, textsField string) organisation.ClubText {
	t := organisation.ClubText{Base: form.Get(field), Texts: engine.Texts{}}
	for _, l := range engine.Languages {
		if v := form.Get(textsField + "." + l); v != "" {
			t.Texts[l] = v
		}
	}
	return t
}

// refill puts the sent values back into a texts field.
func refill(f *staffview.TextsField, form url.Values) {
	f.Base = form.Get(f.Field)
	for i := range f.Texts {
		f.Texts[i].Value = form.Get(f.TextsField + "." + f.Texts[i].Language)
	}
}

// staffSavePeriodTexts answers POST /staff/setup/periods/{id}/texts: the
// period's name and its rules' labels (rules.CODE.label and
// rules.CODE.labelTexts.xx) per language, all or nothing.
func (s *Server) staffSavePeriodTexts(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	form, ok, err := s.setupForm(c)
	if !ok {
		return err
	}
	in := organisation.PeriodTexts{Name: clubTextOf(form, "name", "nameTexts"), Labels: map[string]organisation.ClubText{}}
	for k := range form {
		if code, ok := strings.CutPrefix(k, "rules."); ok {
			if code, ok = strings.CutSuffix(code, ".label"); ok {
				in.Labels[code] = clubTextOf(form, k, "rules."+code+".labelTexts")
			}
		}
	}
	if err := organisation.Of(s.engine).StaffSetPeriodTexts(c.Request().Context(), u.Actor(), u.OrganisationID, id, in); err != nil {
		return s.staffSetupProblem(c, SetupMemberships, err, func(m *staffview.SetupModel, errs map[string]string) {
			for i := range m.Rules {
				f := &m.Rules[i].Texts
				if !strings.HasSuffix(f.Action, "/periods/"+strconv.FormatInt(id, 10)+"/texts") {
					continue
				}
				f.Errors = errs
				refill(&f.Name, form)
				for j := range f.Rules {
					refill(&f.Rules[j], form)
				}
			}
			m.Problem = problemOf(err)
		})
	}
	return staffSetupDone(c, SetupMemberships, flashTextsSaved)
}
