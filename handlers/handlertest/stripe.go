package handlertest

import (
	"testing"
)

// WebhookSecret signs the Stripe webhook events of the tests.
const WebhookSecret = "whsec_portal_test"

// WantEvent fails the test unless a webhook's answer is wantStatus and wantWord.
func WantEvent(t *testing.T, status int, word string, wantStatus int, wantWord string) {
	t.Helper()
	if status != wantStatus || word != wantWord {
		t.Fatalf("webhook answered %d %q, want %d %q", status, word, wantStatus, wantWord)
	}
}
