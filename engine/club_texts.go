package engine

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/uptrace/bun"
)

// A club's own texts per language: a price rule's label, a membership
// type's name and a period's name. The row's own column (label, name)
// holds the text in the organisation's default language, which clients
// that know no languages read and write; Texts hold the text per
// language. The rule is the definitions' (Text.missing): a text given
// in no language but the column's is one for every language; a text
// given per language must be given in every language the organisation
// enables, or the change is refused naming the field and the language.

// Texts are a club text per language (language code → text); empty when
// the text is one for every language.
type Texts map[string]string

// In is the text in lang, else base (the default language's text).
func (t Texts) In(lang, base string) string {
	if s := t[lang]; s != "" {
		return s
	}
	return base
}

// Value stores the texts as a JSON object; "" when there are none.
func (t Texts) Value() (driver.Value, error) {
	if len(t) == 0 {
		return "", nil
	}
	b, err := json.Marshal(map[string]string(t))
	return string(b), err
}

// Scan reads the texts column.
func (t *Texts) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("texts: cannot scan %T", src)
	}
	*t = nil
	if s == "" {
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return fmt.Errorf("texts: %w", err)
	}
	*t = m
	return nil
}

// TextLanguages are what a club text is checked against: the
// organisation's enabled languages and its default language, whose text
// the row's own column holds.
type TextLanguages struct {
	Enabled []string
	Default string
}

// OrgTextLanguages loads the languages of orgID's texts.
func OrgTextLanguages(ctx context.Context, db bun.IDB, orgID int64) (TextLanguages, error) {
	org, err := LoadOrganisation(ctx, db, orgID)
	if err != nil {
		return TextLanguages{}, err
	}
	return languagesOf(org), nil
}

func languagesOf(org *Organisation) TextLanguages {
	def, _, _ := strings.Cut(org.DefaultLanguage, "-")
	return TextLanguages{Enabled: org.EnabledLanguageList(), Default: def}
}

// CheckClubText validates a club text and its texts per language, named
// field and textsField (as the API spells them), up to max characters:
// the texts' languages must be shipped ones and, when any is given, every
// enabled language must have one. The default language's text fills
// *base when it is empty; given both, they must agree. It trims the
// texts and returns the problems found.
func CheckClubText(langs TextLanguages, field, textsField string, base *string, texts Texts, max int) []FieldError {
	var out []FieldError
	bad := func(f, m string) { out = append(out, FieldError{Field: f, Message: m}) }
	*base = strings.TrimSpace(*base)
	keys := make([]string, 0, len(texts))
	for l := range texts {
		keys = append(keys, l)
	}
	sort.Strings(keys)
	for _, l := range keys {
		v := strings.TrimSpace(texts[l])
		texts[l] = v
		switch {
		case !slices.Contains(Languages, l):
			bad(textsField+"."+l, "is not a language of the portal ("+strings.Join(Languages, ", ")+")")
		case v == "":
			delete(texts, l)
		case !Printable(v, max):
			bad(textsField+"."+l, fmt.Sprintf("must be 1 to %d characters", max))
		}
	}
	if d := texts[langs.Default]; d != "" {
		if *base == "" {
			*base = d
		} else if *base != d {
			bad(field, fmt.Sprintf("differs from %s.%s: the %s text is the default language's; give it once or the same in both", textsField, langs.Default, field))
		}
	}
	if *base == "" || !Printable(*base, max) {
		bad(field, fmt.Sprintf("must be 1 to %d characters", max))
	}
	if len(texts) == 0 {
		return out
	}
	for _, l := range langs.Enabled {
		if l != langs.Default && texts[l] == "" {
			bad(textsField+"."+l, fmt.Sprintf("has no text in %s: the organisation offers %s, and a text given per language needs each of them",
				l, strings.Join(langs.Enabled, ", ")))
		}
	}
	return out
}

// WithDefault is texts with the default language's text (base) in it, as
// the admin API returns them: every language the row has a text in.
func (t Texts) WithDefault(lang, base string) Texts {
	if len(t) == 0 {
		return Texts{}
	}
	out := Texts{}
	for k, v := range t {
		out[k] = v
	}
	if out[lang] == "" && base != "" {
		out[lang] = base
	}
	return out
}

// Localize puts the rule's label in lang ("" or none given: it stays).
func (r *PriceRule) Localize(lang string) { r.Label = r.LabelTexts.In(lang, r.Label) }

// Localize puts the type's name in lang.
func (t *MembershipType) Localize(lang string) { t.Name = t.NameTexts.In(lang, t.Name) }

// Localize puts the period's name in lang.
func (p *MembershipPeriod) Localize(lang string) {
	if p != nil {
		p.Name = p.NameTexts.In(lang, p.Name)
	}
}

// LocalizeRules puts every rule's label in lang.
func LocalizeRules(rules []PriceRule, lang string) {
	for i := range rules {
		rules[i].Localize(lang)
	}
}

// LocalizeTypes puts every type's name in lang.
func LocalizeTypes(types []MembershipType, lang string) {
	for i := range types {
		types[i].Localize(lang)
	}
}
