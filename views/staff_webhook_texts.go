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

// staffWebhookTexts are the webhooks page's texts in every language: the group staff_webhooks of
// views/lang/locales/staff.<code>.json.
var staffWebhookTexts = lang.LoadTexts[StaffWebhookTexts]("staff_webhooks")

// StaffWebhookText holds them in English.
var StaffWebhookText = staffWebhookTexts.For("en")

// StaffWebhookTextIn is the webhooks page's texts in the language of ctx.
func StaffWebhookTextIn(ctx context.Context) *StaffWebhookTexts { return staffWebhookTexts.In(ctx) }
