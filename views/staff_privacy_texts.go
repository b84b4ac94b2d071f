package views

import (
	"context"

	"portal/views/lang"
)

// StaffPrivacyTexts are the texts of the data protection parts of the
// staff pages (issue 30): a registration's consents, the access log page
// and the retention settings on the setup page.
type StaffPrivacyTexts struct {
	ConsentsTitle, ConsentsEmpty, ConsentPerson, ConsentKind, ConsentText, ConsentGiven, ConsentVersion string
	KindClubRules, KindPrivacy, KindGuardian, KindMandate, KindOther                                    string
	NavAccessLog, AccessTitle, AccessIntro, AccessWho, AccessAll, AccessKind, AccessRecord, AccessWhen, AccessApply,
	AccessEmpty, AccessOlder, AccessRegistration, AccessPerson, AccessExport string
	RetentionTitle, RetentionIntro, RetentionPersons, RetentionAnswers, RetentionMessages, RetentionAccessLog,
	RetentionSaved, NotANumber string
}

// StaffConsentRow is one consent of a registration, ready to print.
type StaffConsentRow struct {
	Person, Kind, Text, Language, Given, Version string
}

// StaffAccessLogModel is the access log page.
type StaffAccessLogModel struct {
	StaffChrome
	Action string
	// Actors are the filter's staff members; Actor the chosen one.
	Actors []StaffOption
	Kinds  []StaffOption
	Record string
	Rows   []StaffAccessRow
	// OlderURL pages on, "" at the end.
	OlderURL string
}

// StaffAccessRow is one access log entry, ready to print.
type StaffAccessRow struct {
	When, Who, Kind, Record, RecordURL string
}

// StaffRetentionForm is the retention settings form of the setup page.
type StaffRetentionForm struct {
	Action                                         string
	PersonSeasons, AnswerMonths, MessageDays, Logs string
	Errors                                         map[string]string
}

// staffPrivacyTexts are the data protection pages' texts in every language: the group staff_privacy of
// views/lang/locales/staff.<code>.json.
var staffPrivacyTexts = lang.LoadTexts[StaffPrivacyTexts]("staff_privacy")

// StaffPrivacyText holds them in English.
var StaffPrivacyText = staffPrivacyTexts.For("en")

// StaffPrivacyTextIn is the data protection pages' texts in the language of ctx.
func StaffPrivacyTextIn(ctx context.Context) *StaffPrivacyTexts { return staffPrivacyTexts.In(ctx) }
