package staffview

import (
	"context"

	"portal/views/lang"
)

// PrivacyTexts are the texts of the data protection parts of the
// staff pages (issue 30): a registration's consents, the access log page
// and the retention settings on the setup page.
type PrivacyTexts struct {
	ConsentsTitle, ConsentsEmpty, ConsentPerson, ConsentKind, ConsentText, ConsentGiven, ConsentVersion string
	KindClubRules, KindPrivacy, KindGuardian, KindMandate, KindOther                                    string
	NavAccessLog, AccessTitle, AccessIntro, AccessWho, AccessAll, AccessKind, AccessRecord, AccessWhen, AccessApply,
	AccessEmpty, AccessOlder, AccessRegistration, AccessPerson, AccessExport string
	RetentionTitle, RetentionIntro, RetentionPersons, RetentionAnswers, RetentionMessages, RetentionAccessLog,
	RetentionSaved, NotANumber string
}

// ConsentRow is one consent of a registration, ready to print.
type ConsentRow struct {
	Person, Kind, Text, Language, Given, Version string
}

// AccessLogModel is the access log page.
type AccessLogModel struct {
	Chrome
	Action string
	// Actors are the filter's staff members; Actor the chosen one.
	Actors []Option
	Kinds  []Option
	Record string
	Rows   []AccessRow
	// OlderURL pages on, "" at the end.
	OlderURL string
}

// AccessRow is one access log entry, ready to print.
type AccessRow struct {
	When, Who, Kind, Record, RecordURL string
}

// RetentionForm is the retention settings form of the setup page.
type RetentionForm struct {
	Action                                         string
	PersonSeasons, AnswerMonths, MessageDays, Logs string
	Errors                                         map[string]string
}

// staffPrivacyTexts are the data protection pages' texts in every language: the group staff_privacy of
// views/lang/locales/staff.<code>.json.
var staffPrivacyTexts = lang.LoadTexts[PrivacyTexts]("staff_privacy")

// PrivacyText holds them in English.
var PrivacyText = staffPrivacyTexts.For("en")

// PrivacyTextIn is the data protection pages' texts in the language of ctx.
func PrivacyTextIn(ctx context.Context) *PrivacyTexts { return staffPrivacyTexts.In(ctx) }
