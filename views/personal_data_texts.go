package views

import (
	"context"

	"portal/views/lang"
)

// PersonalDataTexts are the texts of the "Your data" page, of the staff
// pages of a person's data and of members' requests, and of the two
// request e-mails (issue 30), in one language.
type PersonalDataTexts struct {
	Title, Intro, Download, DownloadHint, Empty string
	// Table headings and columns.
	Persons, Name, Born, Email, ExternalID, Created, Erased             string
	Answers, Registration, Person, Question, Answer, Household          string
	Memberships, Period, Type, Status, Activated                        string
	Orders, Order, Line, Amount, Paid, Payments, Reference, Provider    string
	BankCredits, Debtor, Account, Booked                                string
	Messages, Kind, Recipient, Sent, OptOuts, Address, Category, Since  string
	Invitations, Expires, Opened, Revoked, Sessions, LastSeen, Requests string
	RequestTitle, RequestIntro, RequestKind, Correction, Erasure, About string
	WholeHousehold, RequestText, RequestHint, RequestSend, RequestSent  string
	RequestInvalid, RequestLimit, LinkFromOverview                      string
	Writer, WriterHint, WriterUnsaid                                    string
	// Staff.
	NavRequests, StaffTitle, StaffExport, EraseTitle, EraseIntro, Force, ForceHint, EraseButton string
	ConfirmErase, ConfirmEraseDetail, DoneErased, RequestsTitle, RequestsIntro, MarkDone, Note  string
	DoneRequest, Open, Done, OpenPerson                                                         string
	// E-mails: to the club (a new request) and to the household (done).
	MailNewSubject, MailNewBody, MailDoneSubject, MailDoneBody, MailNote string
}

// personalDataTexts are the data protection texts in every language: the
// group personal_data of views/lang/locales/member.<code>.json.
var personalDataTexts = lang.LoadTexts[PersonalDataTexts]("personal_data")

// PersonalDataTextIn returns the texts in ctx's language, else English.
func PersonalDataTextIn(ctx context.Context) *PersonalDataTexts { return personalDataTexts.In(ctx) }

// PersonalDataTextFor returns the texts in the language code, else English.
func PersonalDataTextFor(code string) *PersonalDataTexts { return personalDataTexts.For(code) }
