package staffview

import (
	"context"
	"strconv"
	"strings"
)

// SetupModel is one section of the administrators' setup; each
// section's load fills its own fields only.
type SetupModel struct {
	Chrome
	// Section is the slug of the section shown, Sections the section
	// navigation, Intro the section's one sentence.
	Section  string
	Sections []SetupSectionLink
	Intro    string
	// Problem is an error of an action not tied to one field (the last
	// administrator, a conflict), shown at the top.
	Problem string
	Org     OrgForm
	Periods []PeriodRow
	Types   []TypeRow
	Rules   []RuleTable
	Calc    CalcForm
	Staff   []MemberRow
	AddForm AddForm
	// TypeForm adds a membership type, or changes the one chosen.
	TypeForm  TypeForm
	Languages LanguagesForm
	Payments  PaymentForm
	// PaymentMethods is the payments section's choice of methods and the
	// direct-debit creditor settings.
	PaymentMethods PaymentMethodsForm
	// Retention is the data protection section's retention settings
	// (staff_privacy.templ).
	Retention RetentionForm
	Messages  MessagesForm
	// ToDo lists club texts missing in an enabled language.
	ToDo []TextToDo
	// APIKeys are the organisation's admin API keys, KeyForm makes one
	// and NewKey is the key just made (shown once).
	APIKeys []APIKeyRow
	KeyForm APIKeyForm
	NewKey  string
}

// SetupIndexModel is GET /staff/setup: the list of sections.
type SetupIndexModel struct {
	Chrome
	Sections []SetupSectionLink
}

// SetupSectionLink is one section in the section navigation.
type SetupSectionLink struct {
	Slug, Title, Intro, Href string
	Current                  bool
}

// PeriodTextsForm is a period's name and its price rules' labels in
// each enabled language but the default (whose texts are the rows' own).
type PeriodTextsForm struct {
	// ID is the period's id, Period its name in the page's language.
	ID, Action, Period string
	DefaultLanguage    string
	// Name is the period name field ("name" in the default language,
	// nameTexts.xx in the others); Rules each rule's label.
	Name   TextsField
	Rules  []TextsField
	Errors map[string]string
}

// TextsField is one club text: its field name, the text in the
// default language (Base) and in each other enabled language.
type TextsField struct {
	// Field is the form field of the default language's text; the others
	// are TextsField + "." + language.
	Field, TextsField, Label, Base string
	Texts                          []TextField
}

// TextToDo is a club text missing in an enabled language.
type TextToDo struct{ What, Name, Language string }

// APIKeyRow is one admin API key, without the key.
type APIKeyRow struct {
	ID, Name, Prefix, Scope, Created, LastUsed, RevokeURL string
	Revoked                                               bool
}

// APIKeyForm makes an API key.
type APIKeyForm struct {
	Action, Name, Scope string
	Errors              map[string]string
}

// LanguagesForm chooses the languages offered to members and the
// default among them.
type LanguagesForm struct {
	Action  string
	Options []LanguageOption
	Default string
	Errors  map[string]string
}

// LanguageOption is one language the portal has texts in.
type LanguageOption struct {
	Code, Label string
	Enabled     bool
}

// PaymentForm is the organisation's payment settings. The Stripe
// secrets are write-only: the form knows only whether they are set.
type PaymentForm struct {
	Action                               string
	Provider                             string
	Providers                            []Option
	StripeKeySet, WebhookSecretSet       bool
	Creditor, Address, IBAN, BIC, QRKind string
	Errors                               map[string]string
}

// MessagesForm is the organisation's message settings, as typed.
type MessagesForm struct {
	Action                                                                string
	UnpaidDays, ExpiryDays, ResumeHours, RenewalDays, SenderName, ReplyTo string
	Errors                                                                map[string]string
}

// TypeForm adds a membership type (Editing false) or changes one.
type TypeForm struct {
	Action, CancelURL          string
	Editing                    bool
	Code, Name, MinAge, MaxAge string
	// DefaultLanguage is the language Name is in; Names are the name in
	// each other language the organisation enables (field nameTexts.xx).
	DefaultLanguage string
	Names           []TextField
	Errors          map[string]string
}

// TextField is a club text in one language.
type TextField struct {
	Language, Value string
}

// OrgForm is the organisation settings form: values and errors by
// field name.
type OrgForm struct {
	Action                                    string
	Name, ContactEmail, LogoURL, AccentColour string
	// TimeZone is the club's IANA time zone (Europe/Berlin).
	TimeZone string
	// HashSecretSet says whether the organisation has its own hash secret;
	// the secret itself is never shown.
	HashSecretSet bool
	Errors        map[string]string
}

// PeriodRow is one period with the action that opens or closes it.
type PeriodRow struct {
	ID, Name, Dates, Status, Currency, Definition string
	Open                                          bool
	StatusURL                                     string
}

// TypeRow is one membership type with its actions.
type TypeRow struct{ ID, Code, Name, Ages, EditURL, DeleteURL string }

// RuleTable is the price rules of one period.
type RuleTable struct {
	Period string
	Rules  []RuleRow
	// Texts edit the period's name and its rules' labels per language.
	Texts PeriodTextsForm
}

// RuleRow is one price rule, ready to print.
type RuleRow struct{ Code, Kind, Label, AppliesTo, Amount, Valid string }

// CalcForm is the price calculator: the chosen period, day and
// persons, and the result.
type CalcForm struct {
	Action  string
	Periods []Option
	Types   []Option
	Period  string
	On      string
	Persons []CalcPerson
	// Done: a calculation was asked for; then Lines and Total, or Error.
	Done  bool
	Lines []CalcLine
	Total string
	Error string
}

// CalcPerson is one person slot of the calculator.
type CalcPerson struct{ Type, Member string }

// CalcLine is one priced line of the result.
type CalcLine struct{ Description, Amount string }

// MemberRow is one staff record with its actions.
type MemberRow struct {
	ID, Email, Name, Role, RoleLabel, LastSignIn string
	Active                                       bool
	RoleURL, DisableURL                          string
}

// AddForm adds a staff member.
type AddForm struct {
	Action, Email, Name, Role string
	Errors                    map[string]string
}

// RoleOptions are the roles to choose from, least first.
func RoleOptions(ctx context.Context) []Option {
	return []Option{{Value: "viewer", Label: TextIn(ctx).RoleViewer}, {Value: "registrar", Label: TextIn(ctx).RoleRegistrar},
		{Value: "treasurer", Label: TextIn(ctx).RoleTreasurer}, {Value: "admin", Label: TextIn(ctx).RoleAdmin}}
}

// calcMembers are the member types of the calculator.
func calcMembers(ctx context.Context) []Option {
	return []Option{{Value: "NEW", Label: OpsTextIn(ctx).MemberNew}, {Value: "RENEWAL", Label: OpsTextIn(ctx).MemberRenewal}, {Value: "TRANSFER", Label: OpsTextIn(ctx).MemberTransfer}}
}

// calcID and calcLabel name the calculator's person slot i.
func calcID(what string, i int) string { return "calc-" + what + "-" + strconv.Itoa(i+1) }

func calcLabel(label string, i int) string { return label + " " + strconv.Itoa(i+1) }

// DefinitionsModel is the process definitions page: the versions,
// one version's steps, the upload of a new version.
type DefinitionsModel struct {
	Chrome
	Versions  []DefinitionRow
	Shown     *DefinitionView
	UploadURL string
	Error     string
}

// DefinitionRow is one version of a definition key.
type DefinitionRow struct {
	ID, Key, Name, Version, Created, ViewURL, ActivateURL string
	// InUse: the version new registrations of its key start with.
	InUse bool
}

// DefinitionView is one version's steps as members see them.
type DefinitionView struct {
	Title string
	Steps []StepView
}

// StepView is one step: its question, kind, choices and rules.
type StepView struct {
	Number, Question, Kind, Rules string
	Required                      bool
	Choices                       []string
	Conditions                    []string
}

// languageOptions are the languages to choose the default from.
func languageOptions(langs []LanguageOption) []Option {
	out := make([]Option, len(langs))
	for i, l := range langs {
		out[i] = Option{Value: l.Code, Label: l.Label}
	}
	return out
}

// apiKeyScopes are the scopes a new API key may have.
func apiKeyScopes(ctx context.Context) []Option {
	return []Option{{Value: "read", Label: SetupSectionTextIn(ctx).KeyScopeRead}, {Value: "write", Label: SetupSectionTextIn(ctx).KeyScopeWrite}}
}

// fieldID is the element id of period's texts field name: "texts-1-rules-early-label"
// for rules.early.label of period 1.
func fieldID(period, name string) string {
	return "texts-" + period + "-" + strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(name)
}
