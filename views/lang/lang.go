// Package lang owns the languages of the member pages, e-mails and cards:
// which languages exist, which one a request gets, the translated texts
// (go-i18n, message files embedded in the binary) and how numbers, money
// and dates are written in each (golang.org/x/text).
package lang

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// Codes are the languages the portal ships, the first the fallback.
var Codes = []string{"en", "de", "fr"}

// Names are the languages' own names, as the language switcher shows them.
var Names = map[string]string{"en": "English", "de": "Deutsch", "fr": "Français"}

// The message files, one set per language: <code>.json holds the member
// pages' and e-mails' messages by id, which go-i18n loads (T, Plural);
// staff.<code>.json and member.<code>.json the groups that fill typed
// text structs (texts.go), read once at start and not kept as messages
// too (they would double the texts' memory for no reader).
//
//go:embed locales/*.json
var localeFiles embed.FS

var bundle = newBundle()

func newBundle() *i18n.Bundle {
	b := i18n.NewBundle(language.English)
	for _, code := range Codes {
		if _, err := b.LoadMessageFileFS(localeFiles, "locales/"+code+".json"); err != nil {
			panic(fmt.Sprintf("lang: message file %s: %v", code, err)) // embedded: a broken file is a build error
		}
	}
	return b
}

// Supported reports whether code is one of the shipped languages.
func Supported(code string) bool {
	for _, c := range Codes {
		if c == code {
			return true
		}
	}
	return false
}

// Language is one request's language: its code (en, de, fr), the tag used
// for numbers and money (with a region when the member's browser or the
// organisation named one: de-CH writes CHF 1’234.50) and its messages.
type Language struct {
	Code string
	Tag  language.Tag
	loc  *i18n.Localizer
}

// New returns the language of code with the formatting region of tag
// (language.Und for none); an unknown code is English.
func New(code string, tag language.Tag) Language {
	if !Supported(code) {
		code = Codes[0]
	}
	base, _ := language.Make(code).Base()
	if tb, _ := tag.Base(); tb != base {
		tag = language.Make(code)
	} else if r, conf := tag.Region(); conf == language.Exact {
		tag, _ = language.Compose(base, r)
	} else {
		tag = language.Make(code)
	}
	return Language{Code: code, Tag: tag, loc: i18n.NewLocalizer(bundle, code)}
}

// Choice is what decides a request's language, in order: an explicit choice
// (the switcher's cookie), the browser's Accept-Language, the organisation's
// default; only languages the organisation enables count.
type Choice struct {
	Explicit       string
	AcceptLanguage string
	Default        string   // the organisation's default language tag (en, de-CH)
	Enabled        []string // the organisation's languages; empty is all
}

// Choose picks the language of a request.
func Choose(c Choice) Language {
	enabled := c.Enabled
	if len(enabled) == 0 {
		enabled = Codes
	}
	allowed := func(code string) bool {
		for _, e := range enabled {
			if e == code {
				return Supported(code)
			}
		}
		return false
	}
	deflt := language.Make(c.Default)
	defBase, _ := deflt.Base()
	region := deflt // the organisation's region (CH) formats money unless the browser names one
	if allowed(c.Explicit) {
		return New(c.Explicit, regionFor(c.Explicit, c.AcceptLanguage, region))
	}
	if tags, _, err := language.ParseAcceptLanguage(c.AcceptLanguage); err == nil && len(tags) > 0 {
		var offered []language.Tag
		var codes []string
		// The organisation's default first: it wins a tie (a browser accepting anything).
		if allowed(defBase.String()) {
			offered, codes = append(offered, language.Make(defBase.String())), append(codes, defBase.String())
		}
		for _, e := range enabled {
			if allowed(e) && e != defBase.String() {
				offered, codes = append(offered, language.Make(e)), append(codes, e)
			}
		}
		if len(offered) > 0 {
			_, i, conf := language.NewMatcher(offered).Match(tags...)
			if conf != language.No {
				return New(codes[i], regionFor(codes[i], c.AcceptLanguage, region))
			}
		}
	}
	if allowed(defBase.String()) {
		return New(defBase.String(), deflt)
	}
	for _, e := range enabled {
		if allowed(e) {
			return New(e, regionFor(e, c.AcceptLanguage, region))
		}
	}
	return New(Codes[0], language.Und)
}

// regionFor is the tag whose region formats numbers for code: the first
// tag of the browser's list in that language with a region, else the
// organisation's default when it is in that language.
func regionFor(code, acceptLanguage string, orgDefault language.Tag) language.Tag {
	tags, _, _ := language.ParseAcceptLanguage(acceptLanguage)
	for _, t := range tags {
		if b, _ := t.Base(); b.String() == code {
			if _, conf := t.Region(); conf == language.Exact {
				return t
			}
		}
	}
	if b, _ := orgDefault.Base(); b.String() == code {
		return orgDefault
	}
	return language.Make(code)
}

// T returns the text of a message id in this language, with data filled
// into its {{.Name}} placeholders. A missing message is the id itself,
// so that it shows (and the parity test fails) rather than an empty text.
func (l Language) T(id string, data ...map[string]any) string {
	if l.loc == nil {
		l = New(Codes[0], language.Und)
	}
	cfg := &i18n.LocalizeConfig{MessageID: id}
	if len(data) > 0 {
		cfg.TemplateData = data[0]
	}
	s, err := l.loc.Localize(cfg)
	if err != nil {
		return id
	}
	return s
}

// Plural returns the text of a message id for count, with CLDR plural
// forms; count is available to the message as {{.Count}}.
func (l Language) Plural(id string, count int, data map[string]any) string {
	if l.loc == nil {
		l = New(Codes[0], language.Und)
	}
	if data == nil {
		data = map[string]any{}
	}
	data["Count"] = count
	s, err := l.loc.Localize(&i18n.LocalizeConfig{MessageID: id, PluralCount: count, TemplateData: data})
	if err != nil {
		return id
	}
	return s
}

// Has reports whether id is a message of the catalogue.
func Has(id string) bool {
	_, err := i18n.NewLocalizer(bundle, Codes[0]).Localize(&i18n.LocalizeConfig{MessageID: id})
	return err == nil
}

type ctxKey struct{}

// With returns ctx carrying the request's language.
func With(ctx context.Context, l Language) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// Of returns the language in ctx; English without one.
func Of(ctx context.Context) Language {
	if l, ok := ctx.Value(ctxKey{}).(Language); ok {
		return l
	}
	return New(Codes[0], language.Und)
}

// T translates id in the language of ctx.
func T(ctx context.Context, id string, data ...map[string]any) string { return Of(ctx).T(id, data...) }

// messageIDs lists the ids of a language's message files, for the parity
// test: a message file's keys, and group.Field (group.Field.key for a
// map of texts) for the group files.
func messageIDs(code string) (map[string]bool, error) {
	raw, err := localeFiles.ReadFile("locales/" + code + ".json")
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(m))
	for k := range m {
		ids[strings.TrimSpace(k)] = true
	}
	texts, err := groupTexts(code)
	if err != nil {
		return nil, err
	}
	for id := range texts {
		ids[id] = true
	}
	return ids, nil
}

// groupTexts are the texts of a language's group files by id
// (group.Field, group.Field.key for a map of texts), as written.
func groupTexts(code string) (map[string]string, error) {
	texts := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				walk(prefix+"."+k, sub)
			}
		case string:
			texts[prefix] = v
		}
	}
	for name, g := range textGroups[code] {
		var v any
		if err := json.Unmarshal(g, &v); err != nil {
			return nil, err
		}
		walk(name, v)
	}
	return texts, nil
}

// LocaleFile is the message file of a language, for tests that compare
// pages against the catalogue.
func LocaleFile(code string) ([]byte, error) {
	return localeFiles.ReadFile("locales/" + code + ".json")
}

// EnglishFragments are the English catalogue's texts that language code
// writes differently, cut at their placeholders, each at least minLen
// long: for tests that look for English left on a page or in a message.
func EnglishFragments(code string, minLen int) ([]string, error) {
	raw, err := LocaleFile(Codes[0])
	if err != nil {
		return nil, err
	}
	var en map[string]any
	if err := json.Unmarshal(raw, &en); err != nil {
		return nil, err
	}
	other := New(code, language.Und)
	var out []string
	for id, v := range en {
		var texts []string
		switch v := v.(type) {
		case string:
			if other.T(id) == v {
				continue // the same in both (IBAN, Total)
			}
			texts = []string{v}
		case map[string]any: // plural forms
			for _, form := range v {
				if s, ok := form.(string); ok {
					texts = append(texts, s)
				}
			}
		}
		for _, text := range texts {
			for _, part := range placeholder.Split(text, -1) {
				if part = strings.TrimSpace(part); len(part) >= minLen {
					out = append(out, part)
				}
			}
		}
	}
	return out, nil
}

var placeholder = regexp.MustCompile(`\{\{[^}]*\}\}`)
