// Package webhooks sends the organisations' outbound webhooks: the job
// handler of engine.KindWebhookDelivery POSTs an event's JSON to its
// endpoint, signed in the Standard Webhooks style (webhook-id,
// webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of
// "id.timestamp.body">), and tells the engine what happened. Like
// outbound/messages it joins the engine to the outside world without
// serving HTTP itself.
package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/jobs"
	"portal/engine/webhook"
)

// Timeout bounds one attempt, from dialling to the end of the response.
const Timeout = 10 * time.Second

// maxResponse is how much of a response body is read (and kept, in part).
const maxResponse = 1 << 10

// Engine is the part of the engine a delivery needs.
type Engine interface {
	AttemptFor(ctx context.Context, id int64) (*webhook.Attempt, error)
	RecordAttempt(ctx context.Context, id int64, r webhook.AttemptResult) error
}

// Deps are what the delivery handler needs.
type Deps struct {
	Engine Engine
	// AllowPrivate lets endpoints resolve to loopback and private
	// addresses: only for a portal whose own base URL is loopback (tests,
	// development). Otherwise such addresses are refused when dialled, so
	// a name that resolves to an internal host later is refused too.
	AllowPrivate bool
	// AllowNetworks are networks endpoints may resolve to although they
	// are internal (PORTAL_WEBHOOK_ALLOW_NETWORKS); empty: none.
	AllowNetworks engine.WebhookNetworks
	Now           func() time.Time
	Logger        *slog.Logger
}

// Register adds the delivery handler to r.
func Register(r *jobs.Runner, d Deps) {
	r.Handle(engine.KindWebhookDelivery, Handler(d))
}

// ErrForbiddenAddress is a dial refused by the SSRF guard.
var ErrForbiddenAddress = errors.New("the endpoint resolves to a private or loopback address")

// Client is the HTTP client of deliveries: Timeout, no redirects followed
// (a redirect is a failure, its target never receives the event), and,
// unless allowPrivate, a dialer that refuses private, loopback,
// link-local and unspecified addresses on the IP actually dialled.
func Client(allowPrivate bool, allowed ...engine.WebhookNetworks) *http.Client {
	dialer := &net.Dialer{Timeout: Timeout}
	if !allowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip := net.ParseIP(host)
			if ip == nil || webhook.ForbiddenWebhookIP(ip) && !allowedIP(ip, allowed) {
				return ErrForbiddenAddress
			}
			return nil
		}
	}
	transport := &http.Transport{DialContext: dialer.DialContext, TLSHandshakeTimeout: Timeout,
		ResponseHeaderTimeout: Timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second}
	return &http.Client{Timeout: Timeout, Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func allowedIP(ip net.IP, allowed []engine.WebhookNetworks) bool {
	for _, n := range allowed {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Sign is the webhook-signature header's value for a body: "v1," and the
// base64 HMAC-SHA256, keyed with the secret's bytes, of "id.timestamp.body".
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := webhook.Key(secret)
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Handler is the job handler of engine.KindWebhookDelivery: 2xx is
// delivered, 410 disables the endpoint (the job ends), anything else is
// retried with the runner's backoff until the job is dead.
func Handler(d Deps) jobs.Handler {
	if d.Now == nil {
		d.Now = clock.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	client := Client(d.AllowPrivate, d.AllowNetworks)
	return func(ctx context.Context, j *jobs.Job) error {
		var p engine.WebhookJob
		if err := j.Decode(&p); err != nil {
			return err
		}
		a, err := d.Engine.AttemptFor(ctx, p.Delivery)
		if err != nil {
			if engine.ErrorCode(err) == engine.CodeNotFound {
				return jobs.Permanent(err) // the endpoint was deleted
			}
			return err
		}
		if !a.Active {
			return d.Engine.RecordAttempt(ctx, a.DeliveryID, webhook.AttemptResult{Status: engine.DeliverySkipped,
				Error: "the endpoint is not active"})
		}
		res := attempt(ctx, client, a, d.Now())
		if err := d.Engine.RecordAttempt(ctx, a.DeliveryID, res); err != nil {
			return err
		}
		switch res.Status {
		case engine.DeliveryDelivered:
			return nil
		case engine.DeliveryGone:
			return jobs.Permanent(errors.New("the endpoint answered 410 Gone and was disabled"))
		}
		d.Logger.WarnContext(ctx, "webhook delivery failed", "delivery", a.DeliveryID, "event", a.EventID, "code", res.ResponseCode, "err", res.Error)
		return errors.New(res.Error)
	}
}

// attempt POSTs the event once and says what came of it.
func attempt(ctx context.Context, client *http.Client, a *webhook.Attempt, now time.Time) webhook.AttemptResult {
	ts := now.Unix()
	sig, err := Sign(a.Secret, a.EventID, ts, a.Body)
	if err != nil {
		return webhook.AttemptResult{Status: engine.DeliveryFailed, Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(a.Body))
	if err != nil {
		return webhook.AttemptResult{Status: engine.DeliveryFailed, Error: "bad endpoint address"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "portal-webhooks/1")
	req.Header.Set("webhook-id", a.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := client.Do(req)
	if err != nil {
		msg := "the endpoint could not be reached"
		if errors.Is(err, ErrForbiddenAddress) {
			msg = ErrForbiddenAddress.Error()
		} else if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s", Timeout)
		}
		return webhook.AttemptResult{Status: engine.DeliveryFailed, Error: msg}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	res := webhook.AttemptResult{ResponseCode: resp.StatusCode, Snippet: string(snippet)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.Status = engine.DeliveryDelivered
	case resp.StatusCode == http.StatusGone:
		res.Status, res.Error = engine.DeliveryGone, "410 Gone: the endpoint was disabled"
	default:
		res.Status, res.Error = engine.DeliveryFailed, "the endpoint answered "+resp.Status
	}
	return res
}
