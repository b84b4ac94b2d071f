// Package oidc is the OIDC half of the gateway's sign-in: the authorization
// code flow with PKCE (S256), state and nonce against the IdP, the exchange
// of the IdP tokens for a backend JWT, and the refresh of that JWT through
// the IdP's refresh token, one refresh per session however many requests
// and instances ask at once.
package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// ProviderConfig names the IdP client registration.
type ProviderConfig struct {
	// Issuer is the IdP's issuer URL; discovery is at
	// Issuer/.well-known/openid-configuration.
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes requested; "openid" is added when missing.
	Scopes []string
	// RedirectURL is this gateway's callback, e.g. https://portal.example/oauth2/callback.
	RedirectURL string
	// HTTPClient talks to the IdP; default one with a 10-second timeout.
	HTTPClient *http.Client
}

// Provider is the IdP as the gateway uses it. Discovery happens on first
// use and is retried until it succeeds, so an IdP that is down when the
// gateway starts delays OIDC logins but not the rest of the gateway.
type Provider struct {
	cfg  ProviderConfig
	http *http.Client

	mu         sync.Mutex
	op         *gooidc.Provider
	verifier   *gooidc.IDTokenVerifier
	oauth      *oauth2.Config
	endSession string
}

// NewProvider returns a Provider for cfg; it does not contact the IdP yet.
func NewProvider(cfg ProviderConfig) *Provider {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: 10 * time.Second,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}}
	}
	scopes := []string{gooidc.ScopeOpenID}
	for _, s := range cfg.Scopes {
		if s != gooidc.ScopeOpenID && s != "" {
			scopes = append(scopes, s)
		}
	}
	cfg.Scopes = scopes
	return &Provider{cfg: cfg, http: hc}
}

// ErrProviderUnavailable means the IdP could not be reached or answered
// with a server error; nothing about the user is decided by it.
var ErrProviderUnavailable = errors.New("oidc: identity provider unavailable")

// ErrRefreshRejected means the IdP refused the refresh token (invalid_grant
// and other 4xx answers): the IdP session is over.
var ErrRefreshRejected = errors.New("oidc: refresh token rejected")

// ErrInvalidToken means a token from the IdP failed verification.
var ErrInvalidToken = errors.New("oidc: token failed verification")

func (p *Provider) ctx(ctx context.Context) context.Context {
	ctx = gooidc.ClientContext(ctx, p.http)
	return context.WithValue(ctx, oauth2.HTTPClient, p.http)
}

// discover returns the provider's metadata, fetching it on first use.
func (p *Provider) discover(ctx context.Context) (*oauth2.Config, *gooidc.IDTokenVerifier, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.op != nil {
		return p.oauth, p.verifier, nil
	}
	op, err := gooidc.NewProvider(p.ctx(context.WithoutCancel(ctx)), p.cfg.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: discovery: %w", ErrProviderUnavailable, err)
	}
	var meta struct {
		EndSession  string   `json:"end_session_endpoint"`
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := op.Claims(&meta); err != nil {
		return nil, nil, fmt.Errorf("%w: discovery: %w", ErrProviderUnavailable, err)
	}
	p.op = op
	p.verifier = op.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID})
	endpoint := op.Endpoint()
	endpoint.AuthStyle = authStyle(meta.AuthMethods)
	p.oauth = &oauth2.Config{
		ClientID:     p.cfg.ClientID,
		ClientSecret: p.cfg.ClientSecret,
		Endpoint:     endpoint,
		RedirectURL:  p.cfg.RedirectURL,
		Scopes:       p.cfg.Scopes,
	}
	p.endSession = meta.EndSession
	return p.oauth, p.verifier, nil
}

// AuthCodeURL is the IdP address that starts the login attempt a.
func (p *Provider) AuthCodeURL(ctx context.Context, a *Attempt) (string, error) {
	oc, _, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return oc.AuthCodeURL(a.State, append(a.redirectOption(), gooidc.Nonce(a.Nonce), oauth2.S256ChallengeOption(a.Verifier))...), nil
}

// redirectOption sends the attempt's own callback address, if it has one
// (the token request must repeat the authorisation's).
func (a *Attempt) redirectOption() []oauth2.AuthCodeOption {
	if a.RedirectURL == "" {
		return nil
	}
	return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("redirect_uri", a.RedirectURL)}
}

// Tokens are what the IdP issued for one user.
type Tokens struct {
	AccessToken  string
	IDToken      string
	RefreshToken string
	Subject      string
	// Claims are the verified ID token's claims as JSON (Redeem only), for
	// sign-ins that decide on more than the subject: the staff pages read
	// email, email_verified and a role claim.
	Claims json.RawMessage
}

// Redeem trades the authorization code of attempt a for tokens and verifies
// the ID token: signature, issuer, audience, expiry, the attempt's nonce
// and, when the token carries one, the access token hash.
func (p *Provider) Redeem(ctx context.Context, code string, a *Attempt) (*Tokens, error) {
	oc, verifier, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := oc.Exchange(p.ctx(ctx), code, append(a.redirectOption(), oauth2.VerifierOption(a.Verifier))...)
	if err != nil {
		return nil, classify(err, ErrInvalidToken)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, fmt.Errorf("%w: no id_token in the token response", ErrInvalidToken)
	}
	idt, err := verifier.Verify(p.ctx(ctx), raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(a.Nonce)) != 1 {
		return nil, fmt.Errorf("%w: nonce does not match the login attempt", ErrInvalidToken)
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
		}
	}
	var claims json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	return &Tokens{AccessToken: tok.AccessToken, IDToken: raw, RefreshToken: tok.RefreshToken, Subject: idt.Subject, Claims: claims}, nil
}

// ErrUserInfoMismatch means the userinfo endpoint answered for another
// subject than the ID token's: its claims are not the signed-in user's
// (OpenID Connect Core 5.3.2).
var ErrUserInfoMismatch = errors.New("oidc: userinfo names another subject than the ID token")

// CompleteClaims adds to t.Claims those of want that the ID token lacks,
// from the IdP's userinfo endpoint, as OpenID Connect Core 5.4 allows for
// the code flow (some providers put email and email_verified only there).
// The userinfo answer must name the ID token's subject. Nothing is asked
// when the ID token has every wanted claim, or when the IdP has no
// userinfo endpoint (the claims then stay missing). ID token claims win
// over the userinfo's: they are signed.
func (p *Provider) CompleteClaims(ctx context.Context, t *Tokens, want ...string) error {
	var have map[string]json.RawMessage
	if len(t.Claims) > 0 {
		if err := json.Unmarshal(t.Claims, &have); err != nil {
			return fmt.Errorf("%w: claims: %w", ErrInvalidToken, err)
		}
	}
	missing := false
	for _, c := range want {
		if _, ok := have[c]; !ok {
			missing = true
			break
		}
	}
	if !missing || t.AccessToken == "" {
		return nil
	}
	if _, _, err := p.discover(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	op := p.op
	p.mu.Unlock()
	if op.UserInfoEndpoint() == "" {
		return nil
	}
	info, err := op.UserInfo(p.ctx(ctx), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: t.AccessToken, TokenType: "Bearer"}))
	if err != nil {
		return fmt.Errorf("%w: userinfo: %w", ErrProviderUnavailable, err)
	}
	if info.Subject == "" || subtle.ConstantTimeCompare([]byte(info.Subject), []byte(t.Subject)) != 1 {
		return ErrUserInfoMismatch
	}
	var extra map[string]json.RawMessage
	if err := info.Claims(&extra); err != nil {
		return fmt.Errorf("%w: userinfo: %w", ErrProviderUnavailable, err)
	}
	if have == nil {
		have = map[string]json.RawMessage{}
	}
	for k, v := range extra {
		if _, ok := have[k]; !ok {
			have[k] = v
		}
	}
	merged, err := json.Marshal(have)
	if err != nil {
		return err
	}
	t.Claims = merged
	return nil
}

// Refresh uses a refresh token for new tokens. An ID token in the answer
// is verified and must name the same subject; without one, prevIDToken is
// kept. The refresh token is kept unless the IdP rotated it.
func (p *Provider) Refresh(ctx context.Context, refreshToken, prevIDToken, subject string) (*Tokens, error) {
	oc, verifier, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	// An expired token with only the refresh token makes the token source refresh.
	tok, err := oc.TokenSource(p.ctx(ctx), &oauth2.Token{RefreshToken: refreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		return nil, classify(err, ErrRefreshRejected)
	}
	out := &Tokens{AccessToken: tok.AccessToken, IDToken: prevIDToken, RefreshToken: tok.RefreshToken, Subject: subject}
	if out.RefreshToken == "" {
		out.RefreshToken = refreshToken
	}
	if raw, _ := tok.Extra("id_token").(string); raw != "" {
		idt, err := verifier.Verify(p.ctx(ctx), raw)
		if err != nil {
			return nil, fmt.Errorf("%w: refreshed id token: %w", ErrRefreshRejected, err)
		}
		if subject != "" && idt.Subject != subject {
			return nil, fmt.Errorf("%w: refreshed id token names another subject", ErrRefreshRejected)
		}
		out.IDToken = raw
	}
	return out, nil
}

// EndSessionURL is the IdP's RP-initiated logout address for idToken, or
// "" when the IdP does not offer one (or cannot be reached now).
func (p *Provider) EndSessionURL(ctx context.Context, idToken, postLogoutRedirect string) string {
	if _, _, err := p.discover(ctx); err != nil {
		return ""
	}
	p.mu.Lock()
	endSession := p.endSession
	p.mu.Unlock()
	if endSession == "" {
		return ""
	}
	u, err := url.Parse(endSession)
	if err != nil {
		return ""
	}
	q := u.Query()
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	q.Set("client_id", p.cfg.ClientID)
	if postLogoutRedirect != "" {
		q.Set("post_logout_redirect_uri", postLogoutRedirect)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// classify tells a refusal by the IdP (a 4xx answer from its token
// endpoint: the grant is no good) from the IdP being unreachable or failing.
func classify(err error, refused error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		code := re.Response.StatusCode
		if code >= 400 && code < 500 && code != http.StatusTooManyRequests && code != http.StatusRequestTimeout {
			return fmt.Errorf("%w: %s (%d)", refused, re.ErrorCode, code)
		}
		return fmt.Errorf("%w: token endpoint answered %d", ErrProviderUnavailable, code)
	}
	return fmt.Errorf("%w: %w", ErrProviderUnavailable, err)
}

// authStyle picks how the client authenticates at the token endpoint from
// what the IdP announces (client_secret_basic is the default of the
// standard), so no request is wasted on guessing: a guess that fails would
// count as a failed refresh at some IdPs.
func authStyle(methods []string) oauth2.AuthStyle {
	if len(methods) == 0 {
		return oauth2.AuthStyleInHeader
	}
	for _, m := range methods {
		if m == "client_secret_basic" {
			return oauth2.AuthStyleInHeader
		}
	}
	for _, m := range methods {
		if m == "client_secret_post" {
			return oauth2.AuthStyleInParams
		}
	}
	return oauth2.AuthStyleAutoDetect
}
