package views

import (
	"context"
	"strconv"
	"strings"
)

// StaffSetupModel is one section of the administrators' setup; each
// section's load fills its own fields only.
type StaffSetupModel struct {
	StaffChrome
	// Section is the slug of the section shown, Sections the section
	// navigation, Intro the section's one sentence.
	Section  string
	Sections []StaffSetupSectionLink
	Intro    string
	// Problem is an error of an action not tied to one field (the last
	// administrator, a conflict), shown at the top.
	Problem string
	Org     StaffOrgForm
	Periods []StaffPeriodRow
	Types   []StaffTypeRow
	Rules   []StaffRuleTable
	Calc    StaffCalcForm
	Staff   []StaffMemberRow
	AddForm StaffAddForm
	// TypeForm adds a membership type, or changes the one chosen.
	TypeForm  StaffTypeForm
	Languages StaffLanguagesForm
	Payments  StaffPaymentForm
	// PaymentMethods is the payments section's choice of methods and the
	// direct-debit creditor settings.
	PaymentMethods StaffPaymentMethodsForm
	// Retention is the data protection section's retention settings
	// (staff_privacy.templ).
	Retention StaffRetentionForm
	Messages  StaffMessagesForm
	// ToDo lists club texts missing in an enabled language.
	ToDo []StaffTextToDo
	// APIKeys are the organisation's admin API keys, KeyForm makes one
	// and NewKey is the key just made (shown once).
	APIKeys []StaffAPIKeyRow
	KeyForm StaffAPIKeyForm
	NewKey  string
}

// StaffSetupIndexModel is GET /staff/setup: the list of sections.
type StaffSetupIndexModel struct {
	StaffChrome
	Sections []StaffSetupSectionLink
}

// StaffSetupSectionLink is one section in the section navigation.
type StaffSetupSectionLink struct {
	Slug, Title, Intro, Href string
	Current                  bool
}

// StaffPeriodTextsForm is a period's name and its price rules' labels in
// each enabled language but the default (whose texts are the rows' own).
type StaffPeriodTextsForm struct {
	// ID is the period's id, Period its name in the page's language.
	ID, Action, Period string
	DefaultLanguage    string
	// Name is the period name field ("name" in the default language,
	// nameTexts.xx in the others); Rules each rule's label.
	Name   StaffTextsField
	Rules  []StaffTextsField
	Errors map[string]string
}

// StaffTextsField is one club text: its field name, the text in the
// default language (Base) and in each other enabled language.
type StaffTextsField struct {
	// Field is the form field of the default language's text; the others
	// are TextsField + "." + language.
	Field, TextsField, Label, Base string
	Texts                          []StaffTextField
}

// StaffTextToDo is a club text missing in an enabled language.
type StaffTextToDo struct{ What, Name, Language string }

// StaffAPIKeyRow is one admin API key, without the key.
type StaffAPIKeyRow struct {
	ID, Name, Prefix, Scope, Created, LastUsed, RevokeURL string
	Revoked                                               bool
}

// StaffAPIKeyForm makes an API key.
type StaffAPIKeyForm struct {
	Action, Name, Scope string
	Errors              map[string]string
}

// StaffLanguagesForm chooses the languages offered to members and the
// default among them.
type StaffLanguagesForm struct {
	Action  string
	Options []StaffLanguageOption
	Default string
	Errors  map[string]string
}

// StaffLanguageOption is one language the portal has texts in.
type StaffLanguageOption struct {
	Code, Label string
	Enabled     bool
}

// StaffPaymentForm is the organisation's payment settings. The Stripe
// secrets are write-only: the form knows only whether they are set.
type StaffPaymentForm struct {
	Action                               string
	Provider                             string
	Providers                            []StaffOption
	StripeKeySet, WebhookSecretSet       bool
	Creditor, Address, IBAN, BIC, QRKind string
	Errors                               map[string]string
}

// StaffMessagesForm is the organisation's message settings, as typed.
type StaffMessagesForm struct {
	Action                                                                string
	UnpaidDays, ExpiryDays, ResumeHours, RenewalDays, SenderName, ReplyTo string
	Errors                                                                map[string]string
}

// StaffTypeForm adds a membership type (Editing false) or changes one.
type StaffTypeForm struct {
	Action, CancelURL          string
	Editing                    bool
	Code, Name, MinAge, MaxAge string
	// DefaultLanguage is the language Name is in; Names are the name in
	// each other language the organisation enables (field nameTexts.xx).
	DefaultLanguage string
	Names           []StaffTextField
	Errors          map[string]string
}

// StaffTextField is a club text in one language.
type StaffTextField struct {
	Language, Value string
}

// StaffOrgForm is the organisation settings form: values and errors by
// field name.
type StaffOrgForm struct {
	Action                                    string
	Name, ContactEmail, LogoURL, AccentColour string
	// TimeZone is the club's IANA time zone (Europe/Berlin).
	TimeZone string
	// HashSecretSet says whether the organisation has its own hash secret;
	// the secret itself is never shown.
	HashSecretSet bool
	Errors        map[string]string
}

// StaffPeriodRow is one period with the action that opens or closes it.
type StaffPeriodRow struct {
	ID, Name, Dates, Status, Currency, Definition string
	Open                                          bool
	StatusURL                                     string
}

// StaffTypeRow is one membership type with its actions.
type StaffTypeRow struct{ ID, Code, Name, Ages, EditURL, DeleteURL string }

// StaffRuleTable is the price rules of one period.
type StaffRuleTable struct {
	Period string
	Rules  []StaffRuleRow
	// Texts edit the period's name and its rules' labels per language.
	Texts StaffPeriodTextsForm
}

// StaffRuleRow is one price rule, ready to print.
type StaffRuleRow struct{ Code, Kind, Label, AppliesTo, Amount, Valid string }

// StaffCalcForm is the price calculator: the chosen period, day and
// persons, and the result.
type StaffCalcForm struct {
	Action  string
	Periods []StaffOption
	Types   []StaffOption
	Period  string
	On      string
	Persons []StaffCalcPerson
	// Done: a calculation was asked for; then Lines and Total, or Error.
	Done  bool
	Lines []StaffCalcLine
	Total string
	Error string
}

// StaffCalcPerson is one person slot of the calculator.
type StaffCalcPerson struct{ Type, Member string }

// StaffCalcLine is one priced line of the result.
type StaffCalcLine struct{ Description, Amount string }

// StaffMemberRow is one staff record with its actions.
type StaffMemberRow struct {
	ID, Email, Name, Role, RoleLabel, LastSignIn string
	Active                                       bool
	RoleURL, DisableURL                          string
}

// StaffAddForm adds a staff member.
type StaffAddForm struct {
	Action, Email, Name, Role string
	Errors                    map[string]string
}

// StaffRoleOptions are the roles to choose from, least first.
func StaffRoleOptions(ctx context.Context) []StaffOption {
	return []StaffOption{{Value: "viewer", Label: StaffTextIn(ctx).RoleViewer}, {Value: "registrar", Label: StaffTextIn(ctx).RoleRegistrar},
		{Value: "treasurer", Label: StaffTextIn(ctx).RoleTreasurer}, {Value: "admin", Label: StaffTextIn(ctx).RoleAdmin}}
}

// calcMembers are the member types of the calculator.
func calcMembers(ctx context.Context) []StaffOption {
	return []StaffOption{{Value: "NEW", Label: StaffOpsTextIn(ctx).MemberNew}, {Value: "RENEWAL", Label: StaffOpsTextIn(ctx).MemberRenewal}, {Value: "TRANSFER", Label: StaffOpsTextIn(ctx).MemberTransfer}}
}

// calcID and calcLabel name the calculator's person slot i.
func calcID(what string, i int) string { return "calc-" + what + "-" + strconv.Itoa(i+1) }

func calcLabel(label string, i int) string { return label + " " + strconv.Itoa(i+1) }

// StaffDefinitionsModel is the process definitions page: the versions,
// one version's steps, the upload of a new version.
type StaffDefinitionsModel struct {
	StaffChrome
	Versions  []StaffDefinitionRow
	Shown     *StaffDefinitionView
	UploadURL string
	Error     string
}

// StaffDefinitionRow is one version of a definition key.
type StaffDefinitionRow struct {
	ID, Key, Name, Version, Created, ViewURL, ActivateURL string
	// InUse: the version new registrations of its key start with.
	InUse bool
}

// StaffDefinitionView is one version's steps as members see them.
type StaffDefinitionView struct {
	Title string
	Steps []StaffStepView
}

// StaffStepView is one step: its question, kind, choices and rules.
type StaffStepView struct {
	Number, Question, Kind, Rules string
	Required                      bool
	Choices                       []string
	Conditions                    []string
}

// languageOptions are the languages to choose the default from.
func languageOptions(langs []StaffLanguageOption) []StaffOption {
	out := make([]StaffOption, len(langs))
	for i, l := range langs {
		out[i] = StaffOption{Value: l.Code, Label: l.Label}
	}
	return out
}

// apiKeyScopes are the scopes a new API key may have.
func apiKeyScopes(ctx context.Context) []StaffOption {
	return []StaffOption{{Value: "read", Label: StaffSetupSectionTextIn(ctx).KeyScopeRead}, {Value: "write", Label: StaffSetupSectionTextIn(ctx).KeyScopeWrite}}
}

// fieldID is the element id of period's texts field name: "texts-1-rules-early-label"
// for rules.early.label of period 1.
func fieldID(period, name string) string {
	return "texts-" + period + "-" + strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(name)
}
