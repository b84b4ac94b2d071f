package staffview

import (
	"context"

	"portal/views/lang"
)

// WebhookTexts are the texts of the staff webhooks page.
type WebhookTexts struct {
	NavWebhooks, Title, Intro, Empty, URL, URLHint, Events, State, Active, Inactive, DisabledBecause, AddTitle, Add, Errors,
	SecretTitle, SecretIntro, Enable, Disable, Enabled, Disabled, Rotate, RotateQuestion, RotateDetail, Delete, DeleteQuestion,
	DeleteDetail, Deleted, Deliveries, DeliveriesTitle, DeliveriesIntro, DeliveriesEmpty, Event, Status, Attempts, Response,
	Created, LastAttempt, NextRetry, Replay, Replayed, Back, StatusPending, StatusDelivered, StatusFailed, StatusGone,
	StatusSkipped, StatusDead string
}

// staffWebhookTexts are the webhooks page's texts in every language: the group staff_webhooks of
// views/lang/locales/staff.<code>.json.
var staffWebhookTexts = lang.LoadTexts[WebhookTexts]("staff_webhooks")

// WebhookText holds them in English.
var WebhookText = staffWebhookTexts.For("en")

// WebhookTextIn is the webhooks page's texts in the language of ctx.
func WebhookTextIn(ctx context.Context) *WebhookTexts { return staffWebhookTexts.In(ctx) }
