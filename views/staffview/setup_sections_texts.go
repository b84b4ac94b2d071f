package staffview

import (
	"context"

	"portal/views/lang"
)

// SetupSectionTexts are the texts of the setup's sections: their
// names and intros (the section list and navigation), the API keys
// section, the club texts per language of periods and price rules, and
// the texts still missing in an enabled language.
type SetupSectionTexts struct {
	// Sections and their one-sentence intros.
	Organisation, OrganisationIntro, Languages, LanguagesIntro, Payments, PaymentsIntro, Messages, MessagesIntro,
	Memberships, MembershipsIntro, Staff, StaffIntro, APIKeys, APIKeysIntro, DataProtection, DataProtectionIntro string
	// API keys
	KeyName, KeyScope, KeyScopeRead, KeyScopeWrite, KeyCreated, KeyLastUsed, KeyNever, KeyRevoked, KeyRevoke, KeyRevokeQuestion,
	KeyRevokeDetail, KeyAdd, KeyAddButton, KeyShownOnce, KeyRevokedDone, KeysEmpty string
	// Club texts per language: TextsTitle (%s: the period's name),
	// RuleLabelIn (%s: a language's name), TextsHint.
	TextsTitle, TextsHint, RuleLabelIn, TextsSave, TextsSaved string
	// Texts missing in an enabled language: the to-do list.
	ToDoTitle, ToDoIntro, ToDoTypeName, ToDoPeriodName, ToDoRuleLabel string
}

// staffSetupSectionTexts are the setup sections' texts in every language: the group staff_setup_sections of
// views/lang/locales/staff.<code>.json.
var staffSetupSectionTexts = lang.LoadTexts[SetupSectionTexts]("staff_setup_sections")

// SetupSectionText holds them in English.
var SetupSectionText = staffSetupSectionTexts.For("en")

// SetupSectionTextIn is the setup sections' texts in the language of ctx.
func SetupSectionTextIn(ctx context.Context) *SetupSectionTexts {
	return staffSetupSectionTexts.In(ctx)
}
