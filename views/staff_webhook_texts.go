package views

import (
	"context"

	"portal/views/lang"
)

// StaffWebhookTexts are the texts of the staff webhooks page.
type StaffWebhookTexts struct {
	NavWebhooks, Title, Intro, Empty, URL, URLHint, Events, State, Active, Inactive, DisabledBecause, AddTitle, Add, Errors,
	SecretTitle, SecretIntro, Enable, Disable, Enabled, Disabled, Rotate, RotateQuestion, RotateDetail, Delete, DeleteQuestion,
	DeleteDetail, Deleted, Deliveries, DeliveriesTitle, DeliveriesIntro, DeliveriesEmpty, Event, Status, Attempts, Response,
	Created, LastAttempt, NextRetry, Replay, Replayed, Back, StatusPending, StatusDelivered, StatusFailed, StatusGone,
	StatusSkipped, StatusDead string
}

// StaffWebhookText holds those texts in English.
var StaffWebhookText = StaffWebhookTexts{
	NavWebhooks:     "Webhooks",
	Title:           "Webhooks",
	Intro:           "Your systems learn of registrations, payments and memberships from signed webhooks: each endpoint receives the events it subscribes to, signed with its own secret, retried for about four hours when it does not answer.",
	Empty:           "No endpoints yet.",
	URL:             "Address",
	URLHint:         "https:// and a public address; the portal POSTs each event there.",
	Events:          "Events",
	State:           "State",
	Active:          "active",
	Inactive:        "switched off",
	DisabledBecause: "Switched off because",
	AddTitle:        "Add an endpoint",
	Add:             "Add endpoint",
	Errors:          "The endpoint was not added. Correct the fields marked below.",
	SecretTitle:     "Signing secret",
	SecretIntro:     "Copy this secret into the receiving system now: it is shown only this once. The receiver checks each event's webhook-signature with it.",
	Enable:          "Switch on",
	Disable:         "Switch off",
	Enabled:         "The endpoint was switched on.",
	Disabled:        "The endpoint was switched off: it receives no events until it is switched on again.",
	Rotate:          "New secret",
	RotateQuestion:  "Give this endpoint a new signing secret?",
	RotateDetail:    "The old secret stops working at once: every event from now on, retries included, is signed with the new one. Update the receiving system straight away.",
	Delete:          "Delete",
	DeleteQuestion:  "Delete this endpoint?",
	DeleteDetail:    "It receives no more events, and its delivery log is deleted with it. This cannot be undone.",
	Deleted:         "The endpoint was deleted.",
	Deliveries:      "Deliveries",
	DeliveriesTitle: "Deliveries to %s",
	DeliveriesIntro: "The newest deliveries first. A delivery that has ended (delivered or given up) can be sent again: the receiver gets the same event, with the same id, again.",
	DeliveriesEmpty: "No deliveries yet.",
	Event:           "Event",
	Status:          "Status",
	Attempts:        "Attempts",
	Response:        "Last answer",
	Created:         "Created",
	LastAttempt:     "Last attempt",
	NextRetry:       "Next attempt",
	Replay:          "Send again",
	Replayed:        "The event will be sent again in a moment.",
	Back:            "Back to the webhooks",
	StatusPending:   "waiting",
	StatusDelivered: "delivered",
	StatusFailed:    "failed, retried",
	StatusGone:      "refused (410)",
	StatusSkipped:   "skipped (switched off)",
	StatusDead:      "given up",
}

var staffWebhookTexts = map[string]*StaffWebhookTexts{"en": &StaffWebhookText,
	"de": withEnglish(staffWebhookTextDE, StaffWebhookText), "fr": withEnglish(staffWebhookTextFR, StaffWebhookText)}

// StaffWebhookTextIn is the webhooks page's texts in the language of ctx.
func StaffWebhookTextIn(ctx context.Context) *StaffWebhookTexts {
	if t, ok := staffWebhookTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffWebhookText
}
