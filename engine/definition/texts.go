package definition

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"gopkg.in/yaml.v3"

	"portal/engine"
)

// Text is a text of a process definition (a question, an option's label,
// a format message, a price label): one text for every language, written
// as a plain string, or one per language, written as a map
// {en: ..., de: ..., fr: ...}. Plain is the first form.
type Text map[string]string

// plainKey holds a plain text: the same in every language.
const plainKey = ""

// Plain is a text that is the same in every language.
func Plain(s string) Text { return Text{plainKey: s} }

// IsPlain reports whether t is one text for every language (or empty).
func (t Text) IsPlain() bool {
	_, plain := t[plainKey]
	return len(t) == 0 || (plain && len(t) == 1)
}

// In is the text in lang, else in fallback (the organisation's default
// language), else the plain text, else English, else any.
func (t Text) In(lang, fallback string) string {
	for _, k := range []string{lang, fallback, plainKey, "en"} {
		if s, ok := t[k]; ok && s != "" {
			return s
		}
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if t[k] != "" {
			return t[k]
		}
	}
	return ""
}

// Empty reports whether t has no non-blank text.
func (t Text) Empty() bool { return t.In("", "") == "" }

// missing lists the languages of want that t has no text in; a plain text
// misses none.
func (t Text) missing(want []string) []string {
	if t.IsPlain() {
		return nil
	}
	var out []string
	for _, l := range want {
		if t[l] == "" {
			out = append(out, l)
		}
	}
	return out
}

// unknown lists the languages of t that the portal does not ship.
func (t Text) unknown() []string {
	var out []string
	for l := range t {
		if l != plainKey && !slices.Contains(engine.Languages, l) {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// UnmarshalYAML reads a plain string or a map of languages.
func (t *Text) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*t = Plain(n.Value)
		return nil
	}
	var m map[string]string
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("a text is a string or a map of languages to strings: %w", err)
	}
	*t = m
	return nil
}

// MarshalYAML writes a plain text as a string, others as a map.
func (t Text) MarshalYAML() (any, error) {
	if t.IsPlain() {
		return t[plainKey], nil
	}
	return map[string]string(t), nil
}

// UnmarshalJSON reads a string or an object of languages.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Plain(s)
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("a text is a string or an object of languages to strings")
	}
	*t = m
	return nil
}

// MarshalJSON writes a plain text as a string, others as an object.
func (t Text) MarshalJSON() ([]byte, error) {
	if t.IsPlain() {
		return json.Marshal(t[plainKey])
	}
	return json.Marshal(map[string]string(t))
}

// StepTexts are a step's texts per language as process_steps.texts holds
// them; the step's own columns hold the default language's.
type StepTexts struct {
	Question Text            `json:"question,omitempty"`
	Format   Text            `json:"format,omitempty"`
	Price    Text            `json:"price,omitempty"`
	Options  map[string]Text `json:"options,omitempty"`
}

// textsOf is the texts column of a step spec: "" when every text is plain.
func textsOf(s StepSpec) string {
	t := StepTexts{Options: map[string]Text{}}
	any := false
	keep := func(x Text) Text {
		if x.IsPlain() {
			return nil
		}
		any = true
		return x
	}
	t.Question = keep(s.Question)
	if s.Format != nil {
		t.Format = keep(s.Format.Message)
	}
	if s.Price != nil {
		t.Price = keep(s.Price.Label)
	}
	for _, o := range s.Options {
		if k := keep(o.Label); k != nil {
			t.Options[o.Value] = k
		}
	}
	if !any {
		return ""
	}
	b, _ := json.Marshal(t) // maps of strings always marshal
	return string(b)
}

// ParseTexts reads a step's texts column.
func ParseTexts(s string) (StepTexts, error) {
	var t StepTexts
	if s == "" {
		return t, nil
	}
	err := json.Unmarshal([]byte(s), &t)
	return t, err
}

// localized keeps a definition's copies per language, made once.
type localized struct {
	mu     sync.Mutex
	byLang map[string]*Definition
}

// in returns the definition with its texts in lang (the steps' own texts,
// the organisation's default language, where a step has none in lang): what the member's pages, validation
// messages and order lines use. "" is the definition as stored.
func (d *Definition) in(lang string) (*Definition, error) {
	if lang == "" || d.texts == nil {
		return d, nil
	}
	d.texts.mu.Lock()
	defer d.texts.mu.Unlock()
	if l, ok := d.texts.byLang[lang]; ok {
		return l, nil
	}
	pd := *d.ProcessDefinition
	pd.Steps = slices.Clone(pd.Steps)
	for i := range pd.Steps {
		s, err := StepInLanguage(pd.Steps[i], lang)
		if err != nil {
			return nil, fmt.Errorf("definition %d: %w", d.ID, err)
		}
		pd.Steps[i] = s
	}
	l := &Definition{ProcessDefinition: &pd, Patterns: d.Patterns, conds: d.conds}
	if d.texts.byLang == nil {
		d.texts.byLang = map[string]*Definition{}
	}
	d.texts.byLang[lang] = l
	return l, nil
}

// StepInLanguage is step s with its texts (question, format message, price
// label, choices' labels) in lang, as the member's pages show them; a
// text the step has not in lang stays the stored default language's.
func StepInLanguage(s engine.ProcessStep, lang string) (engine.ProcessStep, error) {
	t, err := ParseTexts(s.Texts)
	if err != nil {
		return s, fmt.Errorf("step %s: stored texts do not parse: %w", s.Name, err)
	}
	if q := t.Question[lang]; q != "" {
		s.QuestionText = q
	}
	if m := t.Format[lang]; m != "" && s.FormatMessage != nil {
		s.FormatMessage = &m
	}
	if p := t.Price[lang]; p != "" && s.PriceLabel != nil {
		s.PriceLabel = &p
	}
	s.Options = slices.Clone(s.Options)
	for j := range s.Options {
		if l := t.Options[s.Options[j].Value][lang]; l != "" && s.Options[j].Kind == engine.OptionChoice {
			s.Options[j].Label = l
		}
	}
	return s, nil
}
