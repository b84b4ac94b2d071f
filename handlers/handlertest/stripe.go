package handlertest

import (
	"testing"
)

const WebhookSecret = "whsec_portal_test"

func WantEvent(t *testing.T, status int, word string, wantStatus int, wantWord string) {
	t.Helper()
	if status != wantStatus || word != wantWord {
		t.Fatalf("webhook answered %d %q, want %d %q", status, word, wantStatus, wantWord)
	}
}
