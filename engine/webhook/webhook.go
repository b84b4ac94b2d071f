package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/jobs"
)

// Outbound webhooks: an organisation's endpoints, the events written in
// the transaction of the change they announce (emitEvent), and the record
// of each delivery. Sending is not the engine's: the job of kind
// KindWebhookDelivery is handled by outbound/webhooks, which asks the
// engine what to send (WebhookAttemptFor) and tells it what happened
// (RecordWebhookAttempt).

// EndpointInput creates an endpoint; Active nil is true.
type EndpointInput struct {
	URL    string
	Events []string
	Active *bool
}

// EndpointChange is a partial update; nil fields stay.
type EndpointChange struct {
	URL    *string
	Events *[]string
	Active *bool
}

// webhookSecretAAD binds a sealed endpoint secret to its organisation. The
// sealer is the payment secrets' one (the session key's); the AAD keeps
// the two kinds of secret from opening as each other.
func webhookSecretAAD(orgID int64) []byte {
	return []byte("organisation:" + strconv.FormatInt(orgID, 10) + ":webhook-endpoint-secret")
}

// newWebhookSecret is a signing secret in the Standard Webhooks form:
// "whsec_" and the base64 of 24 random bytes, which are the HMAC key.
func newWebhookSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Key is the HMAC key of a secret made by newWebhookSecret.
func Key(secret string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
}

// checkWebhookURL names what is wrong with an endpoint's address: it must
// be https, or http on a loopback host (tests, development); unless
// allowPrivate, not on a loopback, private, link-local or otherwise
// internal address. A name is not resolved here: the delivery refuses
// the address it actually dials (DNS may change after this check).
func checkWebhookURL(raw string, allowPrivate bool, allowed engine.WebhookNetworks) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case raw == "":
		return "is required"
	case err != nil || u.Host == "" || u.Hostname() == "":
		return "must be an absolute https:// address"
	case u.User != nil:
		return "must not carry a user name or password"
	case u.Fragment != "":
		return "must not have a #fragment"
	case !allowPrivate && internalHost(u.Hostname()) && !allowedHost(u.Hostname(), allowed):
		return "must be a public address: loopback, private and link-local addresses (localhost, 127.0.0.1, 10.x, 192.168.x, 169.254.x, …) are refused"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && IsLoopbackHost(u.Hostname()):
		return ""
	case u.Scheme == "http":
		return "must use https (http only for localhost or a loopback address)"
	default:
		return "must be an https:// address"
	}
}

// internalHost reports whether host is localhost or an IP literal that
// ForbiddenWebhookIP refuses.
func internalHost(host string) bool {
	if IsLoopbackHost(host) {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ForbiddenWebhookIP(ip)
}

// allowedHost reports whether host is an IP literal in allowed.
func allowedHost(host string, allowed engine.WebhookNetworks) bool {
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && allowed.Contains(ip)
}

// ForbiddenWebhookIP reports whether a webhook may not be sent to ip:
// loopback, private, link-local, unspecified, multicast or carrier-grade
// NAT (100.64.0.0/10), all of which are usually inside the portal's own
// network.
func ForbiddenWebhookIP(ip net.IP) bool {
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		(len(ip) == net.IPv4len && ip[0] == 100 && ip[1]&0xc0 == 64)
}

// IsLoopbackHost reports whether host is localhost or a loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkWebhookEvents names what is wrong with a subscription list, and
// returns it without duplicates in the documented order.
func checkWebhookEvents(events []string) ([]string, string) {
	if len(events) == 0 {
		return nil, "must name at least one event: " + strings.Join(engine.WebhookEventTypes, ", ")
	}
	var out []string
	for _, t := range engine.WebhookEventTypes {
		if slices.Contains(events, t) {
			out = append(out, t)
		}
	}
	for _, e := range events {
		if !slices.Contains(engine.WebhookEventTypes, e) {
			return nil, fmt.Sprintf("unknown event %q (known: %s)", e, strings.Join(engine.WebhookEventTypes, ", "))
		}
	}
	return out, ""
}

// CreateWebhookEndpoint adds an endpoint to an organisation and returns it
// with its signing secret, which is shown this once and stored sealed.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, actor engine.Actor, orgID int64, in EndpointInput) (_ *engine.WebhookEndpoint, secret string, err error) {
	var fields []engine.FieldError
	if msg := checkWebhookURL(in.URL, s.PrivateWebhooks, s.WebhookNetworks); msg != "" {
		fields = append(fields, engine.FieldError{Field: "url", Message: msg})
	}
	events, msg := checkWebhookEvents(in.Events)
	if msg != "" {
		fields = append(fields, engine.FieldError{Field: "events", Message: msg})
	}
	if len(fields) > 0 {
		return nil, "", &engine.Error{Code: engine.CodeValidation, Message: "The webhook endpoint is not valid.", Fields: fields}
	}
	if s.Sealer == nil {
		return nil, "", engine.Errorf(engine.CodeUnavailable, "Webhook secrets need the portal's session key (PORTAL_SESSION_KEY), which is not configured.")
	}
	if _, err := engine.LoadOrganisation(ctx, s.DB(), orgID); err != nil {
		return nil, "", err
	}
	now := s.Clock()
	secret = newWebhookSecret()
	ep := &engine.WebhookEndpoint{OrganisationID: orgID, URL: strings.TrimSpace(in.URL), EventsList: strings.Join(events, ","),
		Active: in.Active == nil || *in.Active, SecretSealed: s.Sealer.Seal([]byte(secret), webhookSecretAAD(orgID)),
		CreatedAt: now, UpdatedAt: now}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(ep).Exec(ctx); err != nil {
			return fmt.Errorf("create webhook endpoint: %w", err)
		}
		return s.auditWebhookEndpoint(ctx, tx, actor, "webhook.create", ep.ID, nil, ep)
	})
	if err != nil {
		return nil, "", err
	}
	return ep, secret, nil
}

// webhookEndpointAudit is an endpoint as the audit log shows it: its
// secret as a fingerprint of the sealed value, so that a rotation shows.
type webhookEndpointAudit struct {
	URL            string `json:"url"`
	Events         string `json:"events"`
	Active         bool   `json:"active"`
	DisabledReason string `json:"disabledReason,omitempty"`
	Secret         string `json:"secret"`
}

// auditWebhookEndpoint appends the audit entry of a change to an endpoint
// (nil before or after: made or deleted) in the change's transaction.
func (s *Service) auditWebhookEndpoint(ctx context.Context, tx bun.IDB, actor engine.Actor, action string, id int64, before, after *engine.WebhookEndpoint) error {
	view := func(ep *engine.WebhookEndpoint) any {
		if ep == nil {
			return nil
		}
		return webhookEndpointAudit{URL: ep.URL, Events: ep.EventsList, Active: ep.Active, DisabledReason: ep.DisabledReason,
			Secret: engine.SecretAuditValue(ep.SecretSealed)}
	}
	e := engine.AuditEntry{Action: action, TargetType: "webhook_endpoint", TargetID: fmt.Sprint(id), Before: view(before), After: view(after)}
	for _, ep := range []*engine.WebhookEndpoint{before, after} {
		if ep != nil {
			e.OrganisationID = ep.OrganisationID
		}
	}
	return s.AppendAudit(ctx, tx, actor, e)
}

// Endpoints lists an organisation's endpoints, oldest first.
func (s *Service) Endpoints(ctx context.Context, orgID int64) (_ []engine.WebhookEndpoint, err error) {
	var list []engine.WebhookEndpoint
	if err := s.DB().NewSelect().Model(&list).Where("organisation_id = ?", orgID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return list, nil
}

func webhookEndpoint(ctx context.Context, db bun.IDB, orgID, id int64) (*engine.WebhookEndpoint, error) {
	ep := new(engine.WebhookEndpoint)
	if err := db.NewSelect().Model(ep).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "webhook endpoint")
	}
	return ep, nil
}

// UpdateWebhookEndpoint changes an endpoint's address, events or active
// flag. Making it active again clears why it was disabled.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, actor engine.Actor, orgID, id int64, ch EndpointChange) (_ *engine.WebhookEndpoint, err error) {
	var fields []engine.FieldError
	var events []string
	if ch.URL != nil {
		if msg := checkWebhookURL(*ch.URL, s.PrivateWebhooks, s.WebhookNetworks); msg != "" {
			fields = append(fields, engine.FieldError{Field: "url", Message: msg})
		}
	}
	if ch.Events != nil {
		var msg string
		if events, msg = checkWebhookEvents(*ch.Events); msg != "" {
			fields = append(fields, engine.FieldError{Field: "events", Message: msg})
		}
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "The webhook endpoint is not valid.", Fields: fields}
	}
	var ep *engine.WebhookEndpoint
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		var err error
		if ep, err = webhookEndpoint(ctx, tx, orgID, id); err != nil {
			return err
		}
		before := *ep
		if ch.URL != nil {
			ep.URL = strings.TrimSpace(*ch.URL)
		}
		if ch.Events != nil {
			ep.EventsList = strings.Join(events, ",")
		}
		if ch.Active != nil {
			ep.Active = *ch.Active
			if ep.Active {
				ep.DisabledReason = ""
			}
		}
		ep.UpdatedAt = s.Clock()
		if _, err := tx.NewUpdate().Model(ep).Column("url", "events", "active", "disabled_reason", "updated_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update webhook endpoint: %w", err)
		}
		return s.auditWebhookEndpoint(ctx, tx, actor, "webhook.update", id, &before, ep)
	})
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// DeleteWebhookEndpoint removes an endpoint with its delivery log; its
// deliveries still queued find nothing to send and end.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, actor engine.Actor, orgID, id int64) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		ep, err := webhookEndpoint(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*engine.WebhookEndpoint)(nil)).Where("id = ? AND organisation_id = ?", id, orgID).Exec(ctx); err != nil {
			return fmt.Errorf("delete webhook endpoint: %w", err)
		}
		return s.auditWebhookEndpoint(ctx, tx, actor, "webhook.delete", id, ep, nil)
	})
}

// RotateWebhookSecret gives an endpoint a new signing secret, returned
// this once; attempts from now on are signed with it.
func (s *Service) RotateWebhookSecret(ctx context.Context, actor engine.Actor, orgID, id int64) (secret string, err error) {
	if s.Sealer == nil {
		return "", engine.Errorf(engine.CodeUnavailable, "Webhook secrets need the portal's session key (PORTAL_SESSION_KEY), which is not configured.")
	}
	secret = newWebhookSecret()
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		ep, err := webhookEndpoint(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		before := *ep
		ep.SecretSealed, ep.UpdatedAt = s.Sealer.Seal([]byte(secret), webhookSecretAAD(orgID)), s.Clock()
		if _, err := tx.NewUpdate().Model(ep).Column("secret_sealed", "updated_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("rotate webhook secret: %w", err)
		}
		return s.auditWebhookEndpoint(ctx, tx, actor, "webhook.rotate_secret", id, &before, ep)
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// Attempt is what one delivery attempt sends.
type Attempt struct {
	DeliveryID int64
	EventID    string // the webhook-id header
	URL        string
	Secret     string
	Body       []byte
	// Active is false when the endpoint was deactivated (or disabled by a
	// 410) since the event: the attempt is skipped.
	Active bool
}

// AttemptFor loads what delivery id sends, with the endpoint's
// current address and secret (a rotation applies to retries).
func (s *Service) AttemptFor(ctx context.Context, id int64) (*Attempt, error) {
	d := new(engine.WebhookDeliveryRow)
	if err := s.DB().NewSelect().Model(d).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "webhook delivery")
	}
	ev := new(engine.WebhookEvent)
	if err := s.DB().NewSelect().Model(ev).Where("id = ?", d.EventID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "webhook event")
	}
	ep, err := webhookEndpoint(ctx, s.DB(), ev.OrganisationID, d.EndpointID)
	if err != nil {
		return nil, err
	}
	if s.Sealer == nil {
		return nil, engine.Errorf(engine.CodeUnavailable, "no PORTAL_SESSION_KEY to open the webhook secret with")
	}
	secret, err := s.Sealer.Open(ep.SecretSealed, webhookSecretAAD(ep.OrganisationID))
	if err != nil {
		return nil, fmt.Errorf("open webhook secret of endpoint %d: %w", ep.ID, err)
	}
	return &Attempt{DeliveryID: d.ID, EventID: ev.PublicID, URL: ep.URL, Secret: string(secret), Body: []byte(ev.Body), Active: ep.Active}, nil
}

// AttemptResult is what became of one attempt.
type AttemptResult struct {
	Status       string // DeliveryDelivered, DeliveryFailed, DeliveryGone, DeliverySkipped
	ResponseCode int    // 0: no response
	Snippet      string // the start of the response body
	Error        string // why it failed, for staff
}

// maxSnippet bounds the stored start of a response body.
const maxSnippet = 256

// RecordAttempt records an attempt's outcome; a 410 (gone) also
// disables the endpoint, so that nothing more is sent to it until it is
// made active again.
func (s *Service) RecordAttempt(ctx context.Context, id int64, r AttemptResult) error {
	now := s.Clock()
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewUpdate().Model((*engine.WebhookDeliveryRow)(nil)).Set("status = ?", r.Status).Set("last_attempt_at = ?", now).
			Set("response_snippet = ?", truncateRunes(r.Snippet, maxSnippet)).Set("last_error = ?", truncateRunes(r.Error, maxSnippet)).
			Where("id = ?", id)
		if r.Status != engine.DeliverySkipped {
			q = q.Set("attempts = attempts + 1")
		}
		if r.ResponseCode != 0 {
			q = q.Set("response_code = ?", r.ResponseCode)
		} else {
			q = q.Set("response_code = NULL")
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("record webhook attempt: %w", err)
		}
		if r.Status != engine.DeliveryGone {
			return nil
		}
		_, err := tx.NewUpdate().Model((*engine.WebhookEndpoint)(nil)).Set("active = ?", false).
			Set("disabled_reason = ?", fmt.Sprintf("the endpoint answered 410 Gone on %s", now.Format(time.RFC3339))).Set("updated_at = ?", now).
			Where("id = (?)", tx.NewSelect().Model((*engine.WebhookDeliveryRow)(nil)).Column("endpoint_id").Where("id = ?", id)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("disable webhook endpoint: %w", err)
		}
		return nil
	})
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// Delivery is a delivery as the admin API and `portal webhooks
// deliveries` show it.
type Delivery struct {
	ID              int64      `json:"id"`
	EventID         string     `json:"eventId"`
	EventType       string     `json:"type"`
	Status          string     `json:"status"`
	Attempts        int        `json:"attempts"`
	ResponseCode    *int       `json:"responseCode"`
	ResponseSnippet string     `json:"responseSnippet"`
	LastError       string     `json:"lastError"`
	CreatedAt       time.Time  `json:"createdAt"`
	LastAttemptAt   *time.Time `json:"lastAttemptAt"`
	NextRetryAt     *time.Time `json:"nextRetryAt"`
}

// Deliveries lists the newest deliveries of an endpoint (at most
// limit), with the state of their jobs: when the next retry is due, and
// dead once the attempts ran out.
func (s *Service) Deliveries(ctx context.Context, orgID, endpointID int64, limit int) (_ []Delivery, err error) {
	if _, err := webhookEndpoint(ctx, s.DB(), orgID, endpointID); err != nil {
		return nil, err
	}
	return webhookDeliveries(ctx, s.DB(), endpointID, 0, limit)
}

// webhookDeliveries lists an endpoint's deliveries, newest first, or only
// delivery id (id 0: all).
func webhookDeliveries(ctx context.Context, db bun.IDB, endpointID, id int64, limit int) ([]Delivery, error) {
	var rows []struct {
		engine.WebhookDeliveryRow `bun:",extend"`
		PublicID                  string     `bun:"public_id"`
		Type                      string     `bun:"type"`
		JobState                  *string    `bun:"job_state"`
		JobRunAt                  *time.Time `bun:"job_run_at"`
	}
	q := db.NewSelect().Model(&rows).ColumnExpr("d.*").ColumnExpr("e.public_id, e.type").
		ColumnExpr("j.state AS job_state, j.run_at AS job_run_at").
		Join("JOIN webhook_events AS e ON e.id = d.event_id").Join("LEFT JOIN jobs AS j ON j.dedup_key = d.job_key").
		Where("d.endpoint_id = ?", endpointID).OrderExpr("d.id DESC").Limit(int64(limit))
	if id != 0 {
		q = q.Where("d.id = ?", id)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	out := make([]Delivery, 0, len(rows))
	for _, r := range rows {
		d := Delivery{ID: r.ID, EventID: r.PublicID, EventType: r.Type, Status: r.Status, Attempts: r.Attempts,
			ResponseCode: r.ResponseCode, ResponseSnippet: r.ResponseSnippet, LastError: r.LastError, CreatedAt: r.CreatedAt,
			LastAttemptAt: r.LastAttemptAt}
		if r.JobState != nil {
			switch jobs.State(*r.JobState) {
			case jobs.StateDead:
				if d.Status == engine.DeliveryFailed || d.Status == engine.DeliveryPending {
					d.Status = engine.DeliveryDead
				}
			case jobs.StateFailed, jobs.StateQueued:
				if d.Status == engine.DeliveryFailed && r.JobRunAt != nil {
					at := r.JobRunAt.UTC()
					d.NextRetryAt = &at
				}
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// ReplayWebhookDelivery sends a delivery's event to its endpoint again, as
// a new delivery with a job of its own: the same event id and body (the
// receiver de-duplicates by the id), signed with the endpoint's current
// secret. Only a delivery that has ended (delivered, dead, gone or
// skipped) is replayed; one still being tried is a conflict, as is an
// inactive endpoint. The replay is audited in its transaction.
func (s *Service) ReplayWebhookDelivery(ctx context.Context, actor engine.Actor, orgID, endpointID, deliveryID int64) (_ *Delivery, err error) {
	var out *Delivery
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		ep, err := webhookEndpoint(ctx, tx, orgID, endpointID)
		if err != nil {
			return err
		}
		list, err := webhookDeliveries(ctx, tx, endpointID, deliveryID, 1)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return engine.Errorf(engine.CodeNotFound, "webhook delivery not found")
		}
		orig := list[0]
		switch {
		case !ep.Active:
			return engine.Errorf(engine.CodeConflict, "The endpoint is not active: make it active before replaying its deliveries.")
		case orig.Status == engine.DeliveryPending || orig.Status == engine.DeliveryFailed:
			return engine.Errorf(engine.CodeConflict, "Delivery %d is still being tried (status %s): wait until it is delivered or dead.", orig.ID, orig.Status)
		}
		var eventID int64
		if err := tx.NewSelect().Model((*engine.WebhookDeliveryRow)(nil)).Column("event_id").Where("id = ?", deliveryID).Scan(ctx, &eventID); err != nil {
			return fmt.Errorf("replay webhook delivery: %w", err)
		}
		// The n-th replay of the event to the endpoint gets the n-th key, so
		// that two replays racing each other collide rather than both send.
		n, err := tx.NewSelect().Model((*engine.WebhookDeliveryRow)(nil)).Where("event_id = ? AND endpoint_id = ?", eventID, endpointID).Count(ctx)
		if err != nil {
			return fmt.Errorf("replay webhook delivery: %w", err)
		}
		now := s.Clock()
		d := &engine.WebhookDeliveryRow{EventID: eventID, EndpointID: endpointID, Status: engine.DeliveryPending, CreatedAt: now,
			JobKey: fmt.Sprintf("webhook:%s:%d:replay:%d", orig.EventID, endpointID, n)}
		if _, err := tx.NewInsert().Model(d).Exec(ctx); err != nil {
			if store.IsUniqueViolation(err) {
				return engine.Errorf(engine.CodeConflict, "Delivery %d is being replayed already.", orig.ID)
			}
			return fmt.Errorf("replay webhook delivery: %w", err)
		}
		if _, err := jobs.Enqueue(ctx, tx, now, jobs.Spec{Kind: engine.KindWebhookDelivery, DedupKey: d.JobKey,
			Payload: engine.WebhookJob{Delivery: d.ID}, MaxAttempts: engine.WebhookMaxAttempts}); err != nil {
			return fmt.Errorf("replay webhook delivery: %w", err)
		}
		if err := s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "webhook.replay", TargetType: "webhook_delivery",
			TargetID: strconv.FormatInt(orig.ID, 10), Before: map[string]any{"status": orig.Status, "attempts": orig.Attempts},
			After: map[string]any{"delivery": d.ID, "eventId": orig.EventID, "endpoint": endpointID}}); err != nil {
			return err
		}
		out = &Delivery{ID: d.ID, EventID: orig.EventID, EventType: orig.EventType, Status: engine.DeliveryPending, CreatedAt: now}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DefaultWebhookRetention is how long a delivered event and its delivery
// log are kept (PORTAL_WEBHOOK_RETENTION_DAYS).
const DefaultWebhookRetention = 30 * 24 * time.Hour

// PruneWebhookEvents deletes the events older than retention whose every
// delivery was delivered (or that have none left: their endpoints were
// deleted), with their deliveries. An event with a delivery pending,
// failing, dead, gone or skipped stays, for staff to see and replay,
// however old. It returns how many events it deleted.
func PruneWebhookEvents(ctx context.Context, db *bun.DB, now time.Time, retention time.Duration) (int, error) {
	if retention <= 0 {
		retention = DefaultWebhookRetention
	}
	var n int64
	err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var ids []int64
		if err := tx.NewSelect().Model((*engine.WebhookEvent)(nil)).Column("ev.id").Where("ev.created_at < ?", now.Add(-retention)).
			Where("NOT EXISTS (SELECT 1 FROM webhook_deliveries AS u WHERE u.event_id = ev.id AND u.status <> ?)", engine.DeliveryDelivered).
			Scan(ctx, &ids); err != nil {
			return fmt.Errorf("find prunable webhook events: %w", err)
		}
		for chunk := range slices.Chunk(ids, 500) {
			if _, err := tx.NewDelete().Model((*engine.WebhookDeliveryRow)(nil)).Where("event_id IN (?)", bun.List(chunk)).Exec(ctx); err != nil {
				return fmt.Errorf("prune webhook deliveries: %w", err)
			}
			res, err := tx.NewDelete().Model((*engine.WebhookEvent)(nil)).Where("id IN (?)", bun.List(chunk)).Exec(ctx)
			if err != nil {
				return fmt.Errorf("prune webhook events: %w", err)
			}
			k, _ := res.RowsAffected()
			n += k
		}
		return nil
	})
	return int(n), err
}

// ScheduleWebhookPruning runs PruneWebhookEvents daily on r.
func ScheduleWebhookPruning(r *jobs.Runner, db *bun.DB, retention time.Duration, now func() time.Time, log *slog.Logger) {
	r.Every(engine.KindPruneWebhookEvents, 24*time.Hour)
	r.Handle(engine.KindPruneWebhookEvents, func(ctx context.Context, _ *jobs.Job) error {
		n, err := PruneWebhookEvents(ctx, db, now(), retention)
		if n > 0 {
			log.InfoContext(ctx, "pruned delivered webhook events", "count", n, "older than", retention.String())
		}
		return err
	})
}
