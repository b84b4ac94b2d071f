// Package backend calls the admin backend on the gateway's own behalf: the
// hash login and the OIDC token exchange, both authenticated with the
// service API key (spec, "Admin backend endpoints used by the gateway").
// The key is sent only to the backend and never appears in an error.
package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Default paths on the backend.
const (
	DefaultExternalLoginPath = "/auth/external-login"
	TokenExchangePath        = "/auth/token-exchange"
)

var (
	// ErrRejected means the backend answered and refused: the credentials
	// or the IdP token were not good enough (a 4xx answer).
	ErrRejected = errors.New("backend: rejected")
	// ErrUnavailable means the backend could not be asked or failed: it is
	// down, slow, answered 5xx or something that is not the agreed JSON.
	ErrUnavailable = errors.New("backend: unavailable")
)

// Client calls the admin backend with the API key.
type Client struct {
	base      *url.URL
	apiKey    string
	loginPath string
	http      *http.Client
}

// Config configures a Client.
type Config struct {
	// BaseURL is the backend's address, e.g. https://admin.example/api-root.
	BaseURL *url.URL
	// APIKey goes into X-API-KEY.
	APIKey string
	// ExternalLoginPath is the hash login path; default /auth/external-login.
	ExternalLoginPath string
	// Timeout bounds each call; default 10 seconds.
	Timeout time.Duration
	// Transport is the round tripper; default a dedicated one with a
	// 5-second connect timeout.
	Transport http.RoundTripper
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	if cfg.ExternalLoginPath == "" {
		cfg.ExternalLoginPath = DefaultExternalLoginPath
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Transport == nil {
		cfg.Transport = &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	return &Client{
		base:      cfg.BaseURL,
		apiKey:    cfg.APIKey,
		loginPath: cfg.ExternalLoginPath,
		// Redirects are not followed: a redirect would carry the API key
		// to wherever the backend points.
		http: &http.Client{Transport: cfg.Transport, Timeout: cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// Token is a backend-issued JWT.
type Token struct {
	// Value is the JWT.
	Value string
	// ExpiresAt is its expiry; zero when the backend gave none (hash login).
	ExpiresAt time.Time
}

// ExternalLogin asks the backend for a JWT for a hash login (the user key
// and its hash, checked again by the backend).
func (c *Client) ExternalLogin(ctx context.Context, userKey, hash string) (Token, error) {
	return c.ExternalLoginFor(ctx, userKey, hash, "")
}

// ExternalLoginFor is ExternalLogin for the registration system of one
// organisation: its id goes along as registrationSystemId,
// unless it is "".
func (c *Client) ExternalLoginFor(ctx context.Context, userKey, hash, registrationSystemID string) (Token, error) {
	var out struct {
		Token string `json:"token"`
	}
	body := map[string]string{"userKey": userKey, "hash": hash}
	if registrationSystemID != "" {
		body["registrationSystemId"] = registrationSystemID
	}
	if err := c.post(ctx, c.loginPath, body, &out); err != nil {
		return Token{}, fmt.Errorf("external login: %w", err)
	}
	if out.Token == "" {
		return Token{}, fmt.Errorf("external login: %w: no token in the answer", ErrUnavailable)
	}
	return Token{Value: out.Token}, nil
}

// ExchangeRequest is the body of POST /auth/token-exchange (spec, "Token
// exchange payloads").
type ExchangeRequest struct {
	AccessToken          string `json:"accessToken"`
	IDToken              string `json:"idToken"`
	ClientRegistrationID string `json:"clientRegistrationId"`
}

// Exchange trades IdP tokens for a backend JWT and its expiry.
func (c *Client) Exchange(ctx context.Context, req ExchangeRequest) (Token, error) {
	var out struct {
		Token     string `json:"token"`
		ExpiresAt string `json:"expiresAt"`
	}
	if err := c.post(ctx, TokenExchangePath, req, &out); err != nil {
		return Token{}, fmt.Errorf("token exchange: %w", err)
	}
	if out.Token == "" {
		return Token{}, fmt.Errorf("token exchange: %w: no token in the answer", ErrUnavailable)
	}
	exp, err := time.Parse(time.RFC3339Nano, out.ExpiresAt)
	if err != nil {
		return Token{}, fmt.Errorf("token exchange: %w: expiresAt %q is not ISO 8601", ErrUnavailable, out.ExpiresAt)
	}
	return Token{Value: out.Token, ExpiresAt: exp.UTC()}, nil
}

// post sends body as JSON with the API key and decodes a 2xx answer into out.
func (c *Client) post(ctx context.Context, path string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	u := c.base.JoinPath(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-API-KEY", c.apiKey)
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrUnavailable, describeNetError(err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: read answer: %s", ErrUnavailable, describeNetError(err))
	}
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
	case res.StatusCode >= 400 && res.StatusCode < 500 && res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusRequestTimeout:
		return fmt.Errorf("%w: %s answered %d", ErrRejected, path, res.StatusCode)
	default:
		return fmt.Errorf("%w: %s answered %d", ErrUnavailable, path, res.StatusCode)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %s answered %d with a body that is not the agreed JSON", ErrUnavailable, path, res.StatusCode)
	}
	return nil
}

// describeNetError names a transport failure without echoing the request
// (url.Error includes the URL, which is harmless, but keep logs terse).
func describeNetError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return strings.TrimSpace(err.Error())
}
