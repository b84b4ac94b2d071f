package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"portal/relay/backend"
)

func newClient(t *testing.T, h http.HandlerFunc) *backend.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/root")
	return backend.New(backend.Config{BaseURL: u, APIKey: "the-key", Timeout: 300 * time.Millisecond})
}

func TestExchange(t *testing.T) {
	var got backend.ExchangeRequest
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/root/auth/token-exchange" || r.Header.Get("X-API-KEY") != "the-key" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte(`{"token":"jwt-1","expiresAt":"2026-11-22T10:00:00Z"}`))
	})
	tok, err := c.Exchange(context.Background(), backend.ExchangeRequest{AccessToken: "at", IDToken: "it", ClientRegistrationID: "reg"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Value != "jwt-1" || !tok.ExpiresAt.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("token %+v", tok)
	}
	if got != (backend.ExchangeRequest{AccessToken: "at", IDToken: "it", ClientRegistrationID: "reg"}) {
		t.Fatalf("backend got %+v", got)
	}
}

func TestExternalLogin(t *testing.T) {
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		json.NewDecoder(r.Body).Decode(&body)
		if r.URL.Path != "/root/auth/external-login" || body["userKey"] != "demo" || body["hash"] != "h" || r.Header.Get("X-API-KEY") != "the-key" {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		w.Write([]byte(`{"token":"jwt-2"}`))
	})
	tok, err := c.ExternalLogin(context.Background(), "demo", "h")
	if err != nil || tok.Value != "jwt-2" || !tok.ExpiresAt.IsZero() {
		t.Fatalf("ExternalLogin = %+v, %v", tok, err)
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    error
	}{
		{"401", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusUnauthorized) }, backend.ErrRejected},
		{"403", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) }, backend.ErrRejected},
		{"429", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "later", http.StatusTooManyRequests) }, backend.ErrUnavailable},
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }, backend.ErrUnavailable},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }, backend.ErrUnavailable},
		{"no token", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"expiresAt":"2026-11-22T10:00:00Z"}`)) }, backend.ErrUnavailable},
		{"bad expiry", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"token":"t","expiresAt":"tomorrow"}`)) }, backend.ErrUnavailable},
		{"redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/steal", http.StatusTemporaryRedirect)
		}, backend.ErrUnavailable},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server notices the client leaving
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, backend.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newClient(t, tt.handler).Exchange(context.Background(), backend.ExchangeRequest{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), "the-key") {
				t.Fatalf("error %q shows the API key", err)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		u, _ := url.Parse("http://127.0.0.1:1")
		_, err := backend.New(backend.Config{BaseURL: u, APIKey: "k"}).ExternalLogin(context.Background(), "u", "h")
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Fatalf("error %v, want ErrUnavailable", err)
		}
	})
}
