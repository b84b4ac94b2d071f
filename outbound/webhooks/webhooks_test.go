package webhooks_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/engine/webhook"
	"portal/outbound/webhooks"
	"portal/relay/session"
)

const alex = 1

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// received is one request a receiver got.
type received struct {
	id, timestamp, signature string
	body                     []byte
}

// receiver is a real HTTP endpoint on 127.0.0.1 that answers with the
// next of its status codes (the last one repeats) and keeps what it got.
type receiver struct {
	mu    sync.Mutex
	codes []int
	got   []received
	srv   *httptest.Server
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{codes: codes}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{id: req.Header.Get("webhook-id"), timestamp: req.Header.Get("webhook-timestamp"),
			signature: req.Header.Get("webhook-signature"), body: body})
		code := r.codes[min(len(r.got)-1, len(r.codes)-1)]
		r.mu.Unlock()
		w.WriteHeader(code)
		io.WriteString(w, "answer "+strconv.Itoa(code))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// verify checks a request's signature with secret as a receiver would,
// independently of the package's own signing (docs/ADMIN-API.md, Webhooks).
func verify(t *testing.T, secret string, r received) bool {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) != 24 {
		t.Fatalf("secret %q is not whsec_ and 24 bytes of base64", secret)
	}
	if _, err := strconv.ParseInt(r.timestamp, 10, 64); err != nil {
		t.Fatalf("webhook-timestamp %q: %v", r.timestamp, err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.id + "." + r.timestamp + "." + string(r.body)))
	return hmac.Equal([]byte(r.signature), []byte("v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil))))
}

type env struct {
	demo   *enginetest.Demo
	runner *jobs.Runner
	clock  *testClock
}

func newEnv(t *testing.T, db *bun.DB) *env {
	key := make([]byte, 32)
	rand.Read(key)
	ring, err := session.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	demo := enginetest.Seed(t, db, engine.WithSecretSealer(ring.Sealer("payment secrets")), engine.WithPrivateWebhookAddresses())
	if err := organisation.SeedDemoOrganisations(context.Background(), db, clock.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	// A minute ahead of the engine, whose real clock dates the jobs.
	clk := &testClock{t: clock.Now().UTC().Add(time.Minute)}
	quiet := slog.New(slog.DiscardHandler)
	r := jobs.New(db, jobs.Config{Now: clk.Now, BackoffBase: time.Minute, Logger: quiet})
	webhooks.Register(r, webhooks.Deps{Engine: webhook.Of(demo.Svc), AllowPrivate: true, Now: clk.Now, Logger: quiet})
	return &env{demo: demo, runner: r, clock: clk}
}

func (e *env) work(t *testing.T) int {
	t.Helper()
	n, err := e.runner.Work(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) endpoint(t *testing.T, orgID int64, url string, events ...string) (*engine.WebhookEndpoint, string) {
	t.Helper()
	if len(events) == 0 {
		events = engine.WebhookEventTypes
	}
	ep, secret, err := webhook.Of(e.demo.Svc).CreateWebhookEndpoint(context.Background(), engine.CommandLine, orgID, webhook.EndpointInput{URL: url, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return ep, secret
}

func (e *env) deliveries(t *testing.T, ep *engine.WebhookEndpoint) []webhook.Delivery {
	t.Helper()
	list, err := webhook.Of(e.demo.Svc).Deliveries(context.Background(), ep.OrganisationID, ep.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestDeliveriesSignedRetriedAndScoped: a commit's event reaches its
// organisation's endpoint signed with the endpoint's secret, is retried
// after a 500 and then delivered; the other organisation's endpoint never
// hears of it; paying and cancelling are announced too.
func TestDeliveriesSignedRetriedAndScoped(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		mine, other := newReceiver(t, 500, 200), newReceiver(t, 200)
		ep, secret := e.endpoint(t, 1, mine.srv.URL+"/hooks")
		e.endpoint(t, organisation.DemoSecondOrgID, other.srv.URL+"/hooks")

		form := e.demo.Commit(alex)
		if n := e.work(t); n != 1 {
			t.Fatalf("ran %d jobs after the commit, want the one delivery", n)
		}
		got := mine.requests()
		if len(got) != 1 || !verify(t, secret, got[0]) {
			t.Fatalf("first attempt: %d requests, signature valid: %v", len(got), len(got) == 1 && verify(t, secret, got[0]))
		}
		d := e.deliveries(t, ep)
		if len(d) != 1 || d[0].Status != engine.DeliveryFailed || d[0].Attempts != 1 || d[0].ResponseCode == nil ||
			*d[0].ResponseCode != 500 || d[0].NextRetryAt == nil || d[0].ResponseSnippet != "answer 500" {
			t.Fatalf("after a 500: %+v", d)
		}
		e.clock.Advance(2 * time.Minute)
		if n := e.work(t); n != 1 {
			t.Fatalf("ran %d jobs at the retry, want 1", n)
		}
		got = mine.requests()
		if len(got) != 2 || !verify(t, secret, got[1]) || got[1].id != got[0].id || string(got[1].body) != string(got[0].body) {
			t.Fatalf("the retry is not the same event, signed: %+v", got)
		}
		var env engine.WebhookEnvelope
		if err := json.Unmarshal(got[1].body, &env); err != nil {
			t.Fatal(err)
		}
		var data engine.RegistrationEventData
		if err := json.Unmarshal(env.Data, &data); err != nil {
			t.Fatal(err)
		}
		if env.Type != engine.EventRegistrationCommitted || env.ID != got[1].id || env.Organisation.ID != 1 || env.Organisation.Slug == "" ||
			data.RegistrationID != form.ProcessID || data.UserKey != engine.DemoUserKey || len(data.PersonIDs) != 1 || data.OrderID == nil {
			t.Fatalf("payload: %s", got[1].body)
		}
		if d := e.deliveries(t, ep); d[0].Status != engine.DeliveryDelivered || d[0].Attempts != 2 || d[0].NextRetryAt != nil {
			t.Fatalf("after the retry: %+v", d[0])
		}

		paid := e.demo.Pay(form)
		e.work(t)
		if err := staff.Of(e.demo.Svc).RefundPayment(context.Background(), engine.Actor{Name: "test"}, 1, form.ProcessID, paid.Reference, "duplicate"); err != nil {
			t.Fatal(err)
		}
		e.work(t)
		if err := staff.Of(e.demo.Svc).CancelRegistration(context.Background(), engine.Actor{Name: "test"}, 1, form.ProcessID); err != nil {
			t.Fatal(err)
		}
		e.work(t)
		var types []string
		for _, r := range mine.requests()[2:] {
			if !verify(t, secret, r) {
				t.Errorf("bad signature on %s", r.body)
			}
			var env engine.WebhookEnvelope
			json.Unmarshal(r.body, &env)
			types = append(types, env.Type)
		}
		if len(types) != 4 || types[0] != engine.EventPaymentSucceeded || types[1] != engine.EventMembershipActivated || types[2] != engine.EventPaymentRefunded || types[3] != engine.EventRegistrationCancelled {
			t.Fatalf("events after paying and cancelling: %v", types)
		}
		if n := len(other.requests()); n != 0 {
			t.Fatalf("the other organisation's endpoint got %d requests", n)
		}
	})
}

// TestGoneDisablesTheEndpoint: a 410 ends the delivery and deactivates
// the endpoint, which then gets no more events.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		gone := newReceiver(t, 410)
		ep, _ := e.endpoint(t, 1, gone.srv.URL)
		form := e.demo.Commit(alex)
		e.work(t)
		list, err := webhook.Of(e.demo.Svc).Endpoints(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Active || list[0].DisabledReason == "" {
			t.Fatalf("after a 410 the endpoint is %+v", list)
		}
		if d := e.deliveries(t, ep); d[0].Status != engine.DeliveryGone || d[0].NextRetryAt != nil {
			t.Fatalf("delivery after a 410: %+v", d[0])
		}
		e.demo.Pay(form)
		e.clock.Advance(time.Hour)
		e.work(t)
		if n := len(gone.requests()); n != 1 {
			t.Fatalf("a disabled endpoint got %d requests, want the one that disabled it", n)
		}
		active := true
		if _, err := webhook.Of(e.demo.Svc).UpdateWebhookEndpoint(context.Background(), engine.CommandLine, 1, ep.ID, webhook.EndpointChange{Active: &active}); err != nil {
			t.Fatal(err)
		}
		if list, _ := webhook.Of(e.demo.Svc).Endpoints(context.Background(), 1); !list[0].Active || list[0].DisabledReason != "" {
			t.Fatalf("re-activated: %+v", list[0])
		}
	})
}

// TestDeadAfterMaxAttempts: an endpoint that keeps failing makes the
// delivery dead, visible in the deliveries list.
func TestDeadAfterMaxAttempts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		down := newReceiver(t, 503)
		ep, _ := e.endpoint(t, 1, down.srv.URL, engine.EventRegistrationCommitted)
		e.demo.Commit(alex)
		for range engine.WebhookMaxAttempts {
			e.work(t)
			e.clock.Advance(2 * time.Hour)
		}
		d := e.deliveries(t, ep)
		if len(d) != 1 || d[0].Status != engine.DeliveryDead || d[0].Attempts != engine.WebhookMaxAttempts || d[0].NextRetryAt != nil {
			t.Fatalf("after %d failures: %+v", engine.WebhookMaxAttempts, d)
		}
		dead, err := jobs.List(context.Background(), db, 10, jobs.StateDead)
		if err != nil || len(dead) != 1 || dead[0].Kind != engine.KindWebhookDelivery {
			t.Fatalf("dead jobs: %+v, %v", dead, err)
		}
		// The staff jobs page shows it to its organisation only.
		for _, c := range []struct {
			org        int64
			portalWide bool
			want       int
		}{{1, false, 1}, {organisation.DemoSecondOrgID, true, 0}} {
			list, err := staff.Of(e.demo.Svc).StaffJobs(context.Background(), c.org, c.portalWide)
			if err != nil || len(list) != c.want {
				t.Fatalf("staff jobs of organisation %d: %+v, %v", c.org, list, err)
			}
		}
	})
}

// TestRotatedSecretSigns: after a rotation, deliveries verify with the new
// secret only.
func TestRotatedSecretSigns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		recv := newReceiver(t, 200)
		ep, old := e.endpoint(t, 1, recv.srv.URL)
		form := e.demo.Commit(alex)
		e.work(t)
		rotated, err := webhook.Of(e.demo.Svc).RotateWebhookSecret(context.Background(), engine.CommandLine, 1, ep.ID)
		if err != nil || rotated == old {
			t.Fatalf("rotate: %q, %v", rotated, err)
		}
		e.demo.Pay(form)
		e.work(t)
		got := recv.requests()
		if len(got) != 3 || !verify(t, old, got[0]) || verify(t, old, got[1]) || !verify(t, rotated, got[1]) || !verify(t, rotated, got[2]) ||
			got[0].signature == got[1].signature {
			t.Fatalf("signatures before and after the rotation: %+v", got)
		}
		if _, err := webhook.Of(e.demo.Svc).RotateWebhookSecret(context.Background(), engine.CommandLine, organisation.DemoSecondOrgID, ep.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("rotating another organisation's endpoint: %v", err)
		}
	})
}

// TestPrivateAddressRefusedAtDial: without AllowPrivate the client refuses
// the loopback address it would dial, whatever the URL said.
func TestPrivateAddressRefusedAtDial(t *testing.T) {
	recv := newReceiver(t, 200)
	for _, url := range []string{recv.srv.URL, "http://localhost:" + recv.srv.URL[len("http://127.0.0.1:"):]} {
		_, err := webhooks.Client(false).Post(url, "application/json", nil)
		if !errors.Is(err, webhooks.ErrForbiddenAddress) {
			t.Errorf("%s: %v, want the address refused", url, err)
		}
	}
	if len(recv.requests()) != 0 {
		t.Fatal("the private endpoint was reached")
	}
	resp, err := webhooks.Client(true).Post(recv.srv.URL, "application/json", nil)
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	resp.Body.Close()
}

// TestEndpointValidation: bad addresses and events are named per field.
func TestEndpointValidation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		cases := []struct {
			name   string
			in     webhook.EndpointInput
			fields []string
		}{
			{"http on a public host", webhook.EndpointInput{URL: "http://example.com/h", Events: []string{engine.EventPaymentSucceeded}}, []string{"url"}},
			{"not absolute", webhook.EndpointInput{URL: "/hooks", Events: []string{engine.EventPaymentSucceeded}}, []string{"url"}},
			{"ftp", webhook.EndpointInput{URL: "ftp://example.com/", Events: []string{engine.EventPaymentSucceeded}}, []string{"url"}},
			{"unknown event", webhook.EndpointInput{URL: "https://example.com/h", Events: []string{"payment.lost"}}, []string{"events"}},
			{"both", webhook.EndpointInput{URL: "", Events: nil}, []string{"url", "events"}},
		}
		for _, tc := range cases {
			_, _, err := webhook.Of(e.demo.Svc).CreateWebhookEndpoint(context.Background(), engine.CommandLine, 1, tc.in)
			ee, ok := engine.AsError(err)
			if !ok || ee.Code != engine.CodeValidation || len(ee.Fields) != len(tc.fields) {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			for i, f := range tc.fields {
				if ee.Fields[i].Field != f {
					t.Errorf("%s: field %d is %q, want %q", tc.name, i, ee.Fields[i].Field, f)
				}
			}
		}
		if list, _ := webhook.Of(e.demo.Svc).Endpoints(context.Background(), 1); len(list) != 0 {
			t.Fatalf("invalid endpoints were stored: %+v", list)
		}
	})
}

// TestInvitationOpenedOnce: the first open of an invitation link is
// announced, a second open is not.
func TestInvitationOpenedOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		recv := newReceiver(t, 200)
		_, secret := e.endpoint(t, 1, recv.srv.URL, engine.EventInvitationOpened)
		ctx := context.Background()
		rep, err := invitation.Of(e.demo.Svc).CreateInvitations(ctx, engine.CommandLine, 1, invitation.Request{PeriodID: engine.DemoPeriodID, UserKeys: []string{engine.DemoUserKey}})
		if err != nil || len(rep.Created) != 1 {
			t.Fatalf("invite: %+v, %v", rep, err)
		}
		inv := rep.Created[0]
		for range 2 {
			if _, err := invitation.Of(e.demo.Svc).OpenInvitation(ctx, 1, inv.ID); err != nil {
				t.Fatal(err)
			}
		}
		e.work(t)
		got := recv.requests()
		if len(got) != 1 || !verify(t, secret, got[0]) {
			t.Fatalf("%d requests after two opens", len(got))
		}
		var env engine.WebhookEnvelope
		var data engine.InvitationEventData
		if err := json.Unmarshal(got[0].body, &env); err != nil || json.Unmarshal(env.Data, &data) != nil ||
			env.Type != engine.EventInvitationOpened || data.InvitationID != inv.ID || data.UserKey != engine.DemoUserKey {
			t.Fatalf("payload: %s", got[0].body)
		}
	})
}

// TestReplaySendsTheSameEvent: a delivered delivery and a dead one are
// replayed as new deliveries that send the same event id and body, signed;
// a delivery still being tried, one of an inactive endpoint or of another
// organisation is not replayed; every replay is in the audit log.
func TestReplaySendsTheSameEvent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		recv := newReceiver(t, 200, 503) // the first attempt succeeds, then down
		ep, secret := e.endpoint(t, 1, recv.srv.URL, engine.EventRegistrationCommitted)
		e.demo.Commit(alex)
		e.work(t)
		first := e.deliveries(t, ep)[0]
		if first.Status != engine.DeliveryDelivered {
			t.Fatalf("first delivery: %+v", first)
		}
		actor := engine.Actor{Name: "replayer"}
		if _, err := webhook.Of(e.demo.Svc).ReplayWebhookDelivery(ctx, actor, organisation.DemoSecondOrgID, ep.ID, first.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("replay from another organisation: %v", err)
		}
		replay, err := webhook.Of(e.demo.Svc).ReplayWebhookDelivery(ctx, actor, 1, ep.ID, first.ID)
		if err != nil || replay.ID == first.ID || replay.EventID != first.EventID || replay.Status != engine.DeliveryPending {
			t.Fatalf("replay: %+v, %v", replay, err)
		}
		if _, err := webhook.Of(e.demo.Svc).ReplayWebhookDelivery(ctx, actor, 1, ep.ID, replay.ID); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("replaying a pending delivery: %v", err)
		}
		// The replay fails until it is dead; then it can be replayed itself.
		for range engine.WebhookMaxAttempts {
			e.work(t)
			e.clock.Advance(2 * time.Hour)
		}
		d := e.deliveries(t, ep)
		if len(d) != 2 || d[0].ID != replay.ID || d[0].Status != engine.DeliveryDead || d[1].Status != engine.DeliveryDelivered {
			t.Fatalf("deliveries after the replay died: %+v", d)
		}
		got := recv.requests()
		if len(got) != 1+engine.WebhookMaxAttempts || got[1].id != got[0].id || string(got[1].body) != string(got[0].body) || !verify(t, secret, got[1]) {
			t.Fatalf("the replay did not send the same event, signed: %d requests", len(got))
		}
		recv.mu.Lock()
		recv.codes = []int{204}
		recv.mu.Unlock()
		again, err := webhook.Of(e.demo.Svc).ReplayWebhookDelivery(ctx, actor, 1, ep.ID, replay.ID)
		if err != nil {
			t.Fatalf("replaying a dead delivery: %v", err)
		}
		e.work(t)
		if d := e.deliveries(t, ep); d[0].ID != again.ID || d[0].Status != engine.DeliveryDelivered || d[0].EventID != first.EventID {
			t.Fatalf("after replaying the dead one: %+v", d[0])
		}
		off := false
		if _, err := webhook.Of(e.demo.Svc).UpdateWebhookEndpoint(ctx, engine.CommandLine, 1, ep.ID, webhook.EndpointChange{Active: &off}); err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.Of(e.demo.Svc).ReplayWebhookDelivery(ctx, actor, 1, ep.ID, first.ID); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("replaying to an inactive endpoint: %v", err)
		}
		n, err := db.NewSelect().Model((*engine.AuditRecord)(nil)).Where("action = ? AND actor = ? AND organisation_id = 1", "webhook.replay", "replayer").Count(ctx)
		if err != nil || n != 2 {
			t.Fatalf("%d replays audited (%v), want 2", n, err)
		}
	})
}

// TestAllowedNetworks: PORTAL_WEBHOOK_ALLOW_NETWORKS lets endpoints be on
// the internal networks it names, at the check and at the dial, and on no
// other; without it the guard is as strict as before.
func TestAllowedNetworks(t *testing.T) {
	nets, err := engine.ParseWebhookNetworks(" 10.20.0.0/16, 127.0.0.0/8,fd00::/8 ")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"0.0.0.0/0", "::/0", "10.0.0.0/33", "intranet"} {
		if _, err := engine.ParseWebhookNetworks(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if none, err := engine.ParseWebhookNetworks(""); err != nil || len(none) != 0 {
		t.Fatalf("empty: %v %v", none, err)
	}

	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		newEnv(t, db) // the demo organisations
		ring, err := session.NewKeyring(bytes.Repeat([]byte("k"), 32))
		if err != nil {
			t.Fatal(err)
		}
		sealer := engine.WithSecretSealer(ring.Sealer("payment secrets"))
		strict := engine.NewService(db, nil, sealer)
		open := engine.NewService(db, nil, sealer, engine.WithWebhookNetworks(nets))
		in := func(u string) webhook.EndpointInput {
			return webhook.EndpointInput{URL: u, Events: []string{engine.EventPaymentSucceeded}}
		}
		if _, _, err := webhook.Of(strict).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, in("https://10.20.0.5/hooks")); engine.ErrorCode(err) != engine.CodeValidation {
			t.Fatalf("private endpoint without the setting: %v", err)
		}
		if _, _, err := webhook.Of(open).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, in("https://10.20.0.5/hooks")); err != nil {
			t.Fatalf("endpoint on an allowed network: %v", err)
		}
		if _, _, err := webhook.Of(open).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, in("https://[fd00::1]/hooks")); err != nil {
			t.Fatalf("endpoint on an allowed IPv6 network: %v", err)
		}
		for _, u := range []string{"https://10.21.0.5/hooks", "https://192.168.1.5/hooks", "https://169.254.169.254/latest"} {
			if _, _, err := webhook.Of(open).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, in(u)); engine.ErrorCode(err) != engine.CodeValidation {
				t.Errorf("%s outside the allowed networks: %v", u, err)
			}
		}
	})

	// The dial: a loopback receiver is reached only through an allowed network.
	recv := newReceiver(t, 200)
	if _, err := webhooks.Client(false, engine.WebhookNetworks{}).Post(recv.srv.URL, "application/json", nil); !errors.Is(err, webhooks.ErrForbiddenAddress) {
		t.Fatalf("no networks allowed: %v", err)
	}
	other, _ := engine.ParseWebhookNetworks("10.0.0.0/8")
	if _, err := webhooks.Client(false, other).Post(recv.srv.URL, "application/json", nil); !errors.Is(err, webhooks.ErrForbiddenAddress) {
		t.Fatalf("another network allowed: %v", err)
	}
	resp, err := webhooks.Client(false, nets).Post(recv.srv.URL, "application/json", nil)
	if err != nil {
		t.Fatalf("allowed network: %v", err)
	}
	resp.Body.Close()
	if len(recv.requests()) != 1 {
		t.Fatalf("%d requests reached the receiver", len(recv.requests()))
	}
}
