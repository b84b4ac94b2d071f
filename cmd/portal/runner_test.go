package main

import (
	"log/slog"
	"testing"

	"portal/cmd/portal/config"
	"portal/outbound/mail"
)

// TestMailWithoutServerLogsTextsOnlyInDevelopment: without PORTAL_SMTP_URL
// mail goes to the log, with its text on a loopback base URL (make run)
// and without it on any other (a deployment).
func TestMailWithoutServerLogsTextsOnlyInDevelopment(t *testing.T) {
	for base, texts := range map[string]bool{
		"http://localhost:8080":         true,
		"http://127.0.0.1:8080":         true,
		"https://portal.club.example":   false,
		"https://portal.club.example/x": false,
	} {
		m, err := buildMailer(config.Config{BaseURL: base}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		l, ok := m.(mail.Log)
		if !ok || l.Texts != texts {
			t.Errorf("%s: %#v, want the log with texts %v", base, m, texts)
		}
	}
}
