package definition

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/uptrace/bun"
	"gopkg.in/yaml.v3"

	"portal/engine"
)

// Spec is the import format of a process definition (YAML or JSON).
type Spec struct {
	Key            string     `json:"key" yaml:"key"`
	Name           string     `json:"name" yaml:"name"`
	Category       string     `json:"category" yaml:"category"`
	OrganisationID int64      `json:"organisationId" yaml:"organisationId"`
	Steps          []StepSpec `json:"steps" yaml:"steps"`
}

// StepSpec is one step in a Spec. OrderIndex defaults to the position (1-based).
type StepSpec struct {
	OrderIndex    int                 `json:"orderIndex,omitempty" yaml:"orderIndex,omitempty"`
	Name          string              `json:"name" yaml:"name"`
	Question      Text                `json:"questionText" yaml:"questionText"`
	Type          engine.QuestionType `json:"questionType" yaml:"questionType"`
	Required      bool                `json:"required" yaml:"required"`
	Options       []OptionSpec        `json:"options,omitempty" yaml:"options,omitempty"`
	Format        *FormatSpec         `json:"format,omitempty" yaml:"format,omitempty"`
	Range         *RangeSpec          `json:"range,omitempty" yaml:"range,omitempty"`
	Persons       *AgeSpec            `json:"persons,omitempty" yaml:"persons,omitempty"`
	Price         *PriceSpec          `json:"price,omitempty" yaml:"price,omitempty"`
	MarksTransfer bool                `json:"marksTransfer,omitempty" yaml:"marksTransfer,omitempty"`
	// Consent marks the step as a consent of that kind (engine/consents.go): its
	// text and each "1" answer are recorded at the commit. An accept step
	// (ITC) is a consent of kind "other" without it; a checkbox (BCB) only
	// with it.
	Consent engine.ConsentKind `json:"consent,omitempty" yaml:"consent,omitempty"`
	// Conditions skip this step or jump past later ones depending on
	// earlier answers (conditions.go); docs/DEFINITIONS.md shows the format.
	Conditions []ConditionSpec `json:"conditions,omitempty" yaml:"conditions,omitempty"`
}

// ConditionSpec is one condition of a step. Exactly one of Equals, OneOf
// and NotGiven says when it holds.
type ConditionSpec struct {
	// Action is "skip" (leave this step out) or "jump" (after this step,
	// continue at To).
	Action string `json:"action" yaml:"action"`
	// Scope is "person" (the default: each person by their own answer) or
	// "registration" (everyone, when it holds for any selected person).
	Scope string `json:"scope,omitempty" yaml:"scope,omitempty"`
	// Step names the step whose answer is read: an earlier step, or for a
	// jump this step itself.
	Step     string   `json:"step" yaml:"step"`
	Equals   *string  `json:"equals,omitempty" yaml:"equals,omitempty"`
	OneOf    []string `json:"oneOf,omitempty" yaml:"oneOf,omitempty"`
	NotGiven bool     `json:"notGiven,omitempty" yaml:"notGiven,omitempty"`
	// To names the later step a jump continues at.
	To string `json:"to,omitempty" yaml:"to,omitempty"`
}

// OptionSpec is a choice of a DRP, RDO or SEL step.
type OptionSpec struct {
	Value string `json:"value" yaml:"value"`
	Label Text   `json:"label" yaml:"label"`
}

// FormatSpec is a pattern an answer must match, with the message shown otherwise.
type FormatSpec struct {
	Pattern string `json:"pattern" yaml:"pattern"`
	Message Text   `json:"message" yaml:"message"`
}

// RangeSpec bounds a numeric answer.
type RangeSpec struct {
	Min *float64 `json:"min,omitempty" yaml:"min,omitempty"`
	Max *float64 `json:"max,omitempty" yaml:"max,omitempty"`
}

// AgeSpec limits a step to persons whose age at the period's start is in range;
// the others get hide: true.
type AgeSpec struct {
	MinAge *int `json:"minAge,omitempty" yaml:"minAge,omitempty"`
	MaxAge *int `json:"maxAge,omitempty" yaml:"maxAge,omitempty"`
}

// PriceSpec adds a per-person fee when a person's answer equals Answer.
type PriceSpec struct {
	Code        string `json:"code" yaml:"code"`
	Label       Text   `json:"label" yaml:"label"`
	Answer      string `json:"answer" yaml:"answer"`
	AmountMinor int64  `json:"amountMinor" yaml:"amountMinor"`
}

// ParseDefinition reads a definition from YAML or JSON (JSON is valid YAML,
// but decoding it as JSON first gives better error messages).
func ParseDefinition(data []byte) (*Spec, error) {
	return parseDefinition(data, 0)
}

// ParseDefinitionFor reads a definition for the organisation orgID (an
// admin API key's, a staff member's): the document's organisationId,
// whatever it names or if it names none, is replaced by orgID before the
// definition is checked.
func ParseDefinitionFor(data []byte, orgID int64) (*Spec, error) {
	return parseDefinition(data, orgID)
}

func parseDefinition(data []byte, orgID int64) (*Spec, error) {
	var spec Spec
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "{") {
		dec := json.NewDecoder(strings.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			return nil, &engine.Error{Code: engine.CodeInvalid, Message: "invalid definition: the JSON does not parse: " + err.Error(), Err: err}
		}
	} else {
		dec := yaml.NewDecoder(strings.NewReader(trimmed))
		dec.KnownFields(true)
		if err := dec.Decode(&spec); err != nil {
			return nil, &engine.Error{Code: engine.CodeInvalid, Message: "invalid definition: the YAML does not parse: " + err.Error(), Err: err}
		}
	}
	if orgID != 0 {
		spec.OrganisationID = orgID
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return &spec, nil
}

var stepNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// Validate checks a definition before it is stored.
func (d *Spec) Validate() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !stepNamePattern.MatchString(d.Key) {
		add("key %q must be lower case letters, digits and _", d.Key)
	}
	if strings.TrimSpace(d.Name) == "" {
		add("name is required")
	}
	if d.Category == "" {
		add("category is required")
	}
	if d.OrganisationID <= 0 {
		add("organisationId is required")
	}
	if len(d.Steps) == 0 {
		add("at least one step is required")
	}
	names := map[string]bool{}
	indexes := map[int]bool{}
	for i := range d.Steps {
		s := &d.Steps[i]
		where := fmt.Sprintf("steps[%d]", i)
		if s.OrderIndex == 0 {
			s.OrderIndex = i + 1
		}
		if s.OrderIndex < 1 || indexes[s.OrderIndex] {
			add("%s: orderIndex %d must be positive and unique", where, s.OrderIndex)
		}
		indexes[s.OrderIndex] = true
		if !stepNamePattern.MatchString(s.Name) || names[s.Name] {
			add("%s: name %q must be a unique lower-case key", where, s.Name)
		}
		names[s.Name] = true
		if s.Question.Empty() {
			add("%s: questionText is required", where)
		}
		for _, t := range []struct {
			field string
			text  Text
		}{{"questionText", s.Question}, {"format.message", formatMessage(s.Format)}, {"price.label", priceLabel(s.Price)}} {
			if bad := t.text.unknown(); len(bad) > 0 {
				add("%s.%s: languages %s are not among %s", where, t.field, strings.Join(bad, ", "), strings.Join(engine.Languages, ", "))
			}
		}
		if !slices.Contains(engine.QuestionTypes, s.Type) {
			add("%s: questionType %q is not one of %s", where, s.Type, strings.Join(engine.QuestionTypeCodes(), " "))
		}
		hasOptions := s.Type == engine.TypeDropdown || s.Type == engine.TypeRadio || s.Type == engine.TypeMulti
		if hasOptions && len(s.Options) == 0 {
			add("%s: a %s step needs options", where, s.Type)
		}
		if !hasOptions && len(s.Options) > 0 {
			add("%s: a %s step takes no options", where, s.Type)
		}
		seen := map[string]bool{}
		for j, o := range s.Options {
			if o.Value == "" || seen[o.Value] || strings.Contains(o.Value, ",") {
				add("%s.options[%d]: value %q must be unique, non-empty and without commas", where, j, o.Value)
			}
			seen[o.Value] = true
			if o.Label.Empty() {
				s.Options[j].Label = Plain(o.Value)
			}
			if bad := o.Label.unknown(); len(bad) > 0 {
				add("%s.options[%d].label: languages %s are not among %s", where, j, strings.Join(bad, ", "), strings.Join(engine.Languages, ", "))
			}
		}
		if s.Format != nil {
			if _, err := regexp.Compile(s.Format.Pattern); err != nil || s.Format.Pattern == "" {
				add("%s: format pattern %q does not compile", where, s.Format.Pattern)
			}
			if s.Format.Message.Empty() {
				add("%s: format needs a message", where)
			}
		}
		if s.Range != nil {
			if s.Type != engine.TypeNumber {
				add("%s: range only applies to NUM steps", where)
			}
			if s.Range.Min != nil && s.Range.Max != nil && *s.Range.Min > *s.Range.Max {
				add("%s: range min is above max", where)
			}
		}
		if s.Price != nil {
			if s.Price.Code == "" || s.Price.Label.Empty() || s.Price.Answer == "" {
				add("%s: price needs code, label and answer", where)
			}
			if s.Price.AmountMinor < 0 {
				add("%s: price amountMinor must not be negative", where)
			}
		}
		if s.Consent != "" && !engine.ValidConsentKind(s.Consent) {
			add("%s: consent %q is not one of %s", where, s.Consent, engine.ConsentKindNames())
		}
		if s.Consent != "" && s.Type != engine.TypeAccept && s.Type != engine.TypeCheckbox {
			add("%s: consent applies only to ITC and BCB steps", where)
		}
		if s.Persons != nil && s.Persons.MinAge != nil && s.Persons.MaxAge != nil && *s.Persons.MinAge > *s.Persons.MaxAge {
			add("%s: persons minAge is above maxAge", where)
		}
	}
	if len(problems) == 0 {
		problems = append(problems, d.validateConditions()...)
	}
	if len(problems) > 0 {
		return engine.Errorf(engine.CodeInvalid, "invalid definition: %s", strings.Join(problems, "; "))
	}
	slices.SortFunc(d.Steps, func(a, b StepSpec) int { return a.OrderIndex - b.OrderIndex })
	return nil
}

func (d *Spec) contentHash() string {
	b, _ := json.Marshal(d) // a struct of plain fields always marshals
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ImportResult says what ImportDefinition stored.
type ImportResult struct {
	DefinitionID int64
	Version      int
	Unchanged    bool // the latest version already had this content
}

// ImportDefinition stores spec as a new version of its key, in one transaction.
// Importing the same content again stores nothing.
func ImportDefinition(ctx context.Context, db *bun.DB, spec *Spec) (ImportResult, error) {
	return importDefinition(ctx, db, spec, nil)
}

// importDefinition is ImportDefinition; audit, when set, runs in its
// transaction once a new version is stored (the staff pages' import).
func importDefinition(ctx context.Context, db *bun.DB, spec *Spec, audit func(context.Context, bun.Tx, ImportResult) error) (ImportResult, error) {
	var res ImportResult
	if err := spec.Validate(); err != nil {
		return res, err
	}
	hash := spec.contentHash()
	err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		lang, err := definitionLanguages(ctx, tx, spec)
		if err != nil {
			return err
		}
		latest, err := LatestDefinition(ctx, tx, spec.OrganisationID, spec.Key)
		switch {
		case err == nil && latest.ContentHash == hash && latest.Active:
			res = ImportResult{DefinitionID: latest.ID, Version: latest.Version, Unchanged: true}
			return nil
		case err == nil:
			res.Version = latest.Version + 1
		case engine.ErrorCode(err) == engine.CodeNotFound:
			res.Version = 1
		default:
			return err
		}
		def := &engine.ProcessDefinition{
			OrganisationID: spec.OrganisationID, Key: spec.Key, Name: spec.Name,
			Category: spec.Category, Version: res.Version, Active: true, ContentHash: hash,
		}
		if err := insertDefinition(ctx, tx, def); err != nil {
			return err
		}
		res.DefinitionID = def.ID
		ids := make(map[string]int64, len(spec.Steps))
		for _, s := range spec.Steps {
			step := stepFromSpec(def.ID, s, lang)
			if err := insertStep(ctx, tx, step, s.Options, lang); err != nil {
				return err
			}
			ids[s.Name] = step.ID
		}
		// Conditions go in once every step has its id: a jump names a later step.
		for _, s := range spec.Steps {
			if err := insertConditions(ctx, tx, ids[s.Name], len(s.Options), s.Conditions, ids); err != nil {
				return err
			}
		}
		if audit != nil {
			return audit(ctx, tx, res)
		}
		return nil
	})
	return res, err
}

// definitionLanguages checks that every text of spec given per language
// has each language its organisation enables, and returns the
// organisation's default language, whose texts the steps' own columns hold.
func definitionLanguages(ctx context.Context, db bun.IDB, spec *Spec) (string, error) {
	org := new(engine.Organisation)
	if err := db.NewSelect().Model(org).Where("id = ?", spec.OrganisationID).Scan(ctx); err != nil {
		return "", engine.NotFoundOr(err, "organisation")
	}
	if problems := spec.missingLanguages(org.EnabledLanguageList()); len(problems) > 0 {
		return "", engine.Errorf(engine.CodeInvalid, "invalid definition: the organisation offers %s: %s",
			strings.Join(org.EnabledLanguageList(), ", "), strings.Join(problems, "; "))
	}
	lang, _, _ := strings.Cut(org.DefaultLanguage, "-")
	return lang, nil
}

func stepFromSpec(defID int64, s StepSpec, lang string) *engine.ProcessStep {
	step := &engine.ProcessStep{
		DefinitionID: defID, OrderIndex: s.OrderIndex, Name: s.Name,
		QuestionText: s.Question.In(lang, "en"), QuestionType: s.Type, Required: s.Required,
		MarksTransfer: s.MarksTransfer, Texts: textsOf(s),
	}
	if s.Consent != "" {
		step.ConsentKind = new(string(s.Consent))
	}
	if s.Format != nil {
		msg := s.Format.Message.In(lang, "en")
		step.FormatPattern, step.FormatMessage = &s.Format.Pattern, &msg
	}
	if s.Range != nil {
		step.MinValue, step.MaxValue = s.Range.Min, s.Range.Max
	}
	if s.Persons != nil {
		step.PersonMinAge, step.PersonMaxAge = s.Persons.MinAge, s.Persons.MaxAge
	}
	if s.Price != nil {
		label := s.Price.Label.In(lang, "en")
		step.PriceCode, step.PriceLabel = &s.Price.Code, &label
		step.PriceAnswer, step.PriceAmountMinor = &s.Price.Answer, &s.Price.AmountMinor
	}
	return step
}

// Definition is a loaded, immutable definition version with compiled rules.
type Definition struct {
	*engine.ProcessDefinition
	Patterns map[int64]*regexp.Regexp // by step id
	conds    [][]condition            // by step index; the steps' Options hold only choices
	texts    *localized               // its copies per language; nil when every text is plain
}

// HasConditions reports whether any step carries a condition: without
// them the path depends on the persons' ages only, never on answers.
func (d *Definition) HasConditions() bool {
	return slices.ContainsFunc(d.conds, func(c []condition) bool { return len(c) > 0 })
}

// StepNumber returns the 1-based position of the step with id, or 0.
func (d *Definition) StepNumber(id int64) int {
	for i, s := range d.Steps {
		if s.ID == id {
			return i + 1
		}
	}
	return 0
}

// definitionCache keeps loaded definition versions. Versions never change once
// stored (a new import adds a version), so caching them is safe across a cluster;
// only the active flag can change, and that is read with the instance
// (loadInstance), never from here.
type definitionCache struct {
	mu   sync.RWMutex
	byID map[int64]*Definition
}

func (c *definitionCache) Get(ctx context.Context, db bun.IDB, id int64) (*Definition, error) {
	c.mu.RLock()
	d, ok := c.byID[id]
	c.mu.RUnlock()
	if ok {
		return d.in(engine.LanguageOf(ctx))
	}
	def, err := LoadDefinition(ctx, db, id)
	if err != nil {
		return nil, err
	}
	d = &Definition{ProcessDefinition: def, Patterns: map[int64]*regexp.Regexp{}}
	if d.conds, err = compileConditions(def); err != nil {
		return nil, err
	}
	for _, s := range def.Steps {
		if s.FormatPattern != nil {
			re, err := regexp.Compile(*s.FormatPattern)
			if err != nil {
				return nil, fmt.Errorf("definition %d step %s: stored pattern does not compile: %w", id, s.Name, err)
			}
			d.Patterns[s.ID] = re
		}
		if s.Texts != "" {
			d.texts = &localized{}
		}
	}
	c.mu.Lock()
	if c.byID == nil {
		c.byID = map[int64]*Definition{}
	}
	c.byID[id] = d
	c.mu.Unlock()
	return d.in(engine.LanguageOf(ctx))
}

func formatMessage(f *FormatSpec) Text {
	if f == nil {
		return nil
	}
	return f.Message
}

func priceLabel(p *PriceSpec) Text {
	if p == nil {
		return nil
	}
	return p.Label
}

// missingLanguages names every text of spec that lacks one of the
// languages (a plain text lacks none), for the import's refusal.
func (d *Spec) missingLanguages(languages []string) []string {
	var problems []string
	check := func(where string, t Text) {
		if miss := t.missing(languages); len(miss) > 0 {
			problems = append(problems, fmt.Sprintf("%s has no text in %s", where, strings.Join(miss, ", ")))
		}
	}
	for i, s := range d.Steps {
		where := fmt.Sprintf("steps[%d] (%s)", i, s.Name)
		check(where+".questionText", s.Question)
		check(where+".format.message", formatMessage(s.Format))
		check(where+".price.label", priceLabel(s.Price))
		for j, o := range s.Options {
			check(fmt.Sprintf("%s.options[%d].label", where, j), o.Label)
		}
	}
	return problems
}

type definitionCacheKey struct{}

// Cache is the service's cache of parsed definition versions
// (a version never changes once stored).
func (s *Service) Cache() *definitionCache {
	return s.SubjectState(definitionCacheKey{}, func() any { return new(definitionCache) }).(*definitionCache)
}
