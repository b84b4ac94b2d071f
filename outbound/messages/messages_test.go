package messages_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/uptrace/bun"
	"golang.org/x/text/language"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/outbound/mail"
	"portal/outbound/mail/mailtest"
	"portal/outbound/messages"
	"portal/relay/hashlink"
	"portal/views/lang"
)

const alex, sam, robin = 1, 2, 3

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type env struct {
	demo   *enginetest.Demo
	srv    *mailtest.Server
	runner *jobs.Runner
	clock  *testClock
}

func newEnv(t *testing.T, db *bun.DB) *env {
	srv := mailtest.Start(t, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	from, _ := mail.ParseFrom("Portal <portal@club.example>")
	sender, err := mail.NewSMTP(mail.Config{URL: u, From: from, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A minute ahead of the engine, whose real clock dates the jobs paying enqueues.
	clk := &testClock{t: clock.Now().UTC().Add(time.Minute)}
	r := jobs.New(db, jobs.Config{Now: clk.Now, BackoffBase: time.Minute})
	messages.Register(r, messages.Deps{DB: db, Sender: sender, BaseURL: "https://portal.example", Now: clk.Now})
	return &env{demo: enginetest.Seed(t, db), srv: srv, runner: r, clock: clk}
}

func (e *env) work(t *testing.T) int {
	t.Helper()
	n, err := e.runner.Work(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// decoded is a received message's header and its parts by content type.
func decoded(t *testing.T, data []byte) (netmail.Header, map[string]string) {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(ct string, r io.Reader)
	walk = func(ct string, r io.Reader) {
		mt, params, _ := mime.ParseMediaType(ct)
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err != nil {
					return
				}
				var body io.Reader = p
				switch p.Header.Get("Content-Transfer-Encoding") {
				case "quoted-printable":
					body = quotedprintable.NewReader(p)
				case "base64":
					body = base64.NewDecoder(base64.StdEncoding, p)
				}
				if id := p.Header.Get("Content-ID"); id != "" { // an inline part the HTML refers to as cid:id
					b, _ := io.ReadAll(body)
					out["cid:"+strings.Trim(id, "<>")] = string(b)
					out["cid-type:"+strings.Trim(id, "<>")] = p.Header.Get("Content-Type")
					continue
				}
				if _, dp, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil && dp["filename"] != "" {
					b, _ := io.ReadAll(body)
					out["file:"+dp["filename"]] = string(b)
					continue
				}
				walk(p.Header.Get("Content-Type"), body)
			}
		}
		b, _ := io.ReadAll(r)
		out[mt] = string(b)
	}
	walk(m.Header.Get("Content-Type"), m.Body)
	return m.Header, out
}

func TestConfirmationAfterPayment(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		form := e.demo.Commit(alex, robin)
		res := e.demo.Pay(form)
		if n := e.work(t); n != 1 {
			t.Fatalf("ran %d jobs, want the confirmation", n)
		}
		got := e.srv.Wait(t, 1)
		if len(got) != 1 || strings.Join(got[0].To, ",") != "alex.morgan@example.org" {
			t.Fatalf("received %d messages, first to %v: want one to Alex's address (Robin's is the same)", len(got), got[0].To)
		}
		h, parts := decoded(t, got[0].Data)
		subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
		from, _ := h.AddressList("From")
		if !strings.Contains(subject, "Riverside Rowing Club") || len(from) != 1 || from[0].Name != "Riverside Rowing Club" || h.Get("Message-Id") == "" {
			t.Errorf("subject %q from %v id %q", subject, from, h.Get("Message-Id"))
		}
		for _, part := range []string{"text/plain", "text/html"} {
			body := parts[part]
			for _, want := range []string{res.Reference, "Alex Morgan", "Robin Morgan", "Adult", "Junior", engine.FormatMoney(res.Order.TotalMinor, res.Order.Currency), "Season", "What happens next"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s part lacks %q:\n%s", part, want, body)
				}
			}
		}
		if !strings.Contains(parts["text/html"], `style="`) || strings.Contains(parts["text/html"], "ZgotmplZ") {
			t.Errorf("HTML part without its inline styles:\n%s", parts["text/html"])
		}
		// A card per member, each linking to its own verification page.
		var cards []message.MembershipCard
		if err := db.NewSelect().Model(&cards).Order("membership_id").Scan(context.Background()); err != nil || len(cards) != 2 {
			t.Fatalf("cards %+v, %v", cards, err)
		}
		for i, name := range []string{"membership-card-alex-morgan.pdf", "membership-card-robin-morgan.pdf"} {
			pdf := parts["file:"+name]
			if !strings.HasPrefix(pdf, "%PDF-") {
				t.Errorf("attachment %s missing or not a PDF", name)
			}
			if link := "/URI (https://portal.example/verify/" + cards[i].Token + ")"; !strings.Contains(pdf, link) {
				t.Errorf("card %s lacks %s", name, link)
			}
		}
		if !strings.Contains(parts["text/plain"], "membership card is attached") {
			t.Errorf("text part does not mention the cards")
		}
		// A replayed payment return sends nothing more.
		if again := e.demo.Pay(form); !again.Replayed {
			t.Fatalf("second return: %+v", again)
		}
		e.clock.Advance(time.Hour)
		if n := e.work(t); n != 0 {
			t.Fatalf("ran %d jobs after a replayed return", n)
		}
		if n := len(e.srv.Received()); n != 1 {
			t.Fatalf("%d messages after a replayed return", n)
		}
	})
}

// TestMailServerOutageDelaysMail: the server stops mid-run; the
// confirmation fails, waits, and arrives once the server is back.
func TestMailServerOutageDelaysMail(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		e.demo.Pay(e.demo.Commit(alex, sam))
		e.srv.Stop()
		if n := e.work(t); n != 1 {
			t.Fatalf("ran %d jobs", n)
		}
		failed, _ := jobs.List(context.Background(), db, 10, jobs.StateFailed)
		if len(failed) != 1 || failed[0].Kind != string(payment.KindConfirmation) || failed[0].LastError == "" {
			t.Fatalf("failed jobs %+v", failed)
		}
		msg, _ := message.ByKey(context.Background(), db, strings.TrimPrefix(*failed[0].DedupKey, "outbox:"))
		if msg == nil || msg.SentAt != nil {
			t.Fatalf("message marked sent while the server was down: %+v", msg)
		}
		e.srv.Restart(t)
		if n := e.work(t); n != 0 {
			t.Fatalf("retried before its backoff: %d", n)
		}
		e.clock.Advance(time.Minute)
		if n := e.work(t); n != 1 {
			t.Fatalf("ran %d jobs after the backoff", n)
		}
		got := e.srv.Wait(t, 1)
		if strings.Join(got[0].To, ",") != "alex.morgan@example.org,sam.morgan@example.org" {
			t.Fatalf("to %v", got[0].To)
		}
		if msg, _ := message.ByKey(context.Background(), db, msg.DedupKey); msg.SentAt == nil {
			t.Fatal("delivered message not marked sent")
		}
	})
}

// TestRefusedRecipientIsDead: a 5xx answer is permanent.
func TestRefusedRecipientIsDead(t *testing.T) {
	db := dbtest.SQLite(t)
	srv := mailtest.Start(t, mailtest.Options{RefuseRcpt: func(string) error {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	sender, _ := mail.NewSMTP(mail.Config{URL: u, From: netmail.Address{Name: "Portal", Address: "portal@club.example"}})
	r := jobs.New(db, jobs.Config{})
	messages.Register(r, messages.Deps{DB: db, Sender: sender, BaseURL: "https://portal.example"})
	demo := enginetest.Seed(t, db)
	demo.Pay(demo.Commit(alex))
	if n, err := r.Work(context.Background(), 10); err != nil || n != 1 {
		t.Fatalf("work = %d, %v", n, err)
	}
	dead, _ := jobs.List(context.Background(), db, 10, jobs.StateDead)
	if len(dead) != 1 || !strings.Contains(dead[0].LastError, "550") || dead[0].Attempts != 1 {
		t.Fatalf("dead = %+v", dead)
	}
}

// TestResumeLinkAfterADayIdle: the hourly schedule suspends a registration

// scheduledEnv is what the tests of scheduled messages share: a real SMTP
// server, a sender to it, a fake clock and a job runner on that clock.
type scheduledEnv struct {
	srv    *mailtest.Server
	sender *mail.SMTP
	clk    *testClock
	quiet  *slog.Logger
	r      *jobs.Runner
}

func newScheduledEnv(t *testing.T, db *bun.DB) *scheduledEnv {
	srv := mailtest.Start(t, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	sender, _ := mail.NewSMTP(mail.Config{URL: u, From: netmail.Address{Name: "Portal", Address: "portal@club.example"}})
	clk := &testClock{t: clock.Now().UTC()}
	quiet := slog.New(slog.DiscardHandler)
	return &scheduledEnv{srv: srv, sender: sender, clk: clk, quiet: quiet, r: jobs.New(db, jobs.Config{Now: clk.Now, Logger: quiet})}
}

// run moves the clock on, enqueues the schedules now due and works until
// no job is left.
func (e *scheduledEnv) run(t *testing.T, after time.Duration) {
	t.Helper()
	ctx := context.Background()
	e.clk.Advance(after)
	if err := e.r.EnqueueSchedules(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		k, err := e.r.Work(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			return
		}
	}
}

// left alone for a day, and its member gets a link back.
func TestResumeLinkAfterADayIdle(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		srv, clk := e.srv, e.clk
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "resume-secret-0123456789", Now: clk.Now})
		registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, clk.Now, e.quiet)
		message.ScheduleMessages(e.r, db, clk.Now, e.quiet)
		demo := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		form, _, err := registration.Of(demo.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, engine.DemoPeriodID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := registration.Of(demo.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: form.ProcessIDString(), Step: 0,
			People: []registration.PersonInput{{ID: sam}}}); err != nil {
			t.Fatal(err)
		}
		// Alex, a member last season, is prompted to renew meanwhile: only
		// the resume links count here.
		resumes := func() []mailtest.Received { return withSubject(t, srv.Received(), "your registration is waiting") }
		for hour := 1; hour <= 25; hour++ {
			e.run(t, time.Hour)
			if hour < 24 && len(resumes()) > 0 {
				t.Fatalf("a resume link after %d hours", hour)
			}
		}
		got := resumes()
		if len(got) != 1 || strings.Join(got[0].To, ",") != "sam.morgan@example.org" {
			t.Fatalf("received %d, to %v", len(got), got[0].To)
		}
		_, parts := decoded(t, got[0].Data)
		link := "https://portal.example/membership/register/1?u=" + engine.DemoUserKey + "&h=" + hashlink.Sign("resume-secret-0123456789", engine.DemoUserKey)
		if !strings.Contains(parts["text/plain"], link) || !strings.Contains(parts["text/html"], strings.ReplaceAll(link, "&", "&amp;")) || !strings.Contains(parts["text/plain"], "Sam Morgan") {
			t.Fatalf("the message lacks the link %s:\n%s\n%s", link, parts["text/plain"], parts["text/html"])
		}
		var inst engine.ProcessInstance
		db.NewSelect().Model(&inst).Where("id = ?", form.ProcessID).Scan(ctx)
		if inst.Status != engine.StateSuspended {
			t.Fatalf("status %s", inst.Status)
		}
	})
}

// TestUnpaidReminders: day 3 and day 10 after the commit, with the link
// back and List-Unsubscribe; none once paid.
func TestUnpaidReminders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		srv, clk := e.srv, e.clk
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "reminder-secret-0123456789",
			UnsubscribeAddress: "portal@club.example", Now: clk.Now})
		registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, clk.Now, e.quiet)
		message.ScheduleMessages(e.r, db, clk.Now, e.quiet)
		demo := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		form := demo.Commit(alex, robin)
		day := func(n int) {
			for range n {
				e.run(t, 24*time.Hour)
			}
		}
		day(2)
		if n := len(srv.Received()); n != 0 {
			t.Fatalf("%d messages on day 2", n)
		}
		day(1)
		got := srv.Wait(t, 1)
		h, parts := decoded(t, got[0].Data)
		if strings.Join(got[0].To, ",") != "alex.morgan@example.org" || !strings.HasPrefix(h.Get("List-Unsubscribe"), "<https://portal.example/unsubscribe?t=") ||
			!strings.HasSuffix(h.Get("List-Unsubscribe"), ", <mailto:portal@club.example?subject=unsubscribe>") || h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" ||
			!strings.Contains(parts["text/plain"], "3 days ago") || !strings.Contains(parts["text/plain"], "u="+engine.DemoUserKey) || !strings.Contains(parts["text/html"], "EUR") {
			t.Fatalf("day-3 reminder to %v, List-Unsubscribe %q:\n%s", got[0].To, h.Get("List-Unsubscribe"), parts["text/plain"])
		}
		day(6)
		if n := len(srv.Received()); n != 1 {
			t.Fatalf("%d messages by day 9", n)
		}
		day(1)
		if got := srv.Wait(t, 2); !strings.Contains(string(got[1].Data), "10 days ago") {
			t.Fatal("no day-10 reminder")
		}
		day(5)
		if n := len(srv.Received()); n != 2 {
			t.Fatalf("%d messages by day 15, want 2", n)
		}
		// Paid: a reminder queued before the payment is not sent.
		demo.Pay(form)
		if n, err := message.QueueUnpaidReminders(ctx, db, clk.Now()); err != nil || n != 0 {
			t.Fatalf("reminders after paying: %d, %v", n, err)
		}
	})
}

// TestReminderOfAPaidOrderIsNotSent: queued, then paid before delivery.
func TestReminderOfAPaidOrderIsNotSent(t *testing.T) {
	db := dbtest.SQLite(t)
	ctx := context.Background()
	srv := mailtest.Start(t, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	sender, _ := mail.NewSMTP(mail.Config{URL: u, From: netmail.Address{Name: "Portal", Address: "portal@club.example"}})
	clk := &testClock{t: clock.Now().UTC().Add(4 * 24 * time.Hour)}
	r := jobs.New(db, jobs.Config{Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
	messages.Register(r, messages.Deps{DB: db, Sender: sender, BaseURL: "https://portal.example", HashSecret: "reminder-secret-0123456789", Now: clk.Now})
	demo := enginetest.Seed(t, db)
	form := demo.Commit(alex)
	if n, err := message.QueueUnpaidReminders(ctx, db, clk.Now()); err != nil || n != 1 {
		t.Fatalf("queued %d, %v", n, err)
	}
	demo.Pay(form)
	for {
		if n, _ := r.Work(ctx, 10); n == 0 {
			break
		}
	}
	if len(srv.Received()) != 1 { // the confirmation only
		t.Fatalf("%d messages, want only the confirmation", len(srv.Received()))
	}
	if !strings.Contains(string(srv.Received()[0].Data), "confirmed") {
		t.Fatal("the one message is not the confirmation")
	}
}

// outage is the test gateway with a switch: while down, creating a
// checkout fails as a provider that cannot be reached does.
type outage struct {
	*payment.TestGateway
	mu   sync.Mutex
	down bool
}

func (o *outage) setDown(down bool) { o.mu.Lock(); o.down = down; o.mu.Unlock() }

func (o *outage) CreateCheckout(ctx context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	o.mu.Lock()
	down := o.down
	o.mu.Unlock()
	if down {
		return engine.Checkout{}, errors.New("provider unreachable")
	}
	return o.TestGateway.CreateCheckout(ctx, req)
}

// TestPaymentLinkAfterProviderOutage: a registration committed while the
// provider was down gets its payment link by e-mail once the provider is
// back, once, and not before (a link that cannot be paid yet is never
// sent).
func TestPaymentLinkAfterProviderOutage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		srv, clk, quiet := e.srv, e.clk, e.quiet
		provider := &outage{TestGateway: payment.NewTestGateway(payment.TestGatewayURLs{
			PayURL: func(ref string) string { return "https://portal.example/dev/pay/" + ref }, ReturnURL: "https://portal.example/membership/payment-return"}), down: true}
		demo := enginetest.Seed(t, db, engine.WithClock(clk.Now), engine.WithLogger(quiet),
			engine.WithPaymentLinks(server.PaymentLinks("https://portal.example")),
			payment.WithPaymentProviders(func(int64) engine.PaymentProvider { return provider }))
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "paylink-secret-0123456789",
			Payments: payment.Of(demo.Svc), Now: clk.Now})
		payment.Of(demo.Svc).SchedulePayments(e.r, clk.Now)
		run := func(after time.Duration) { e.run(t, after) }
		form := demo.Commit(alex, robin)
		if form.State != engine.StateDone || form.PaymentURL != "" {
			t.Fatalf("committed while the provider is down: state %s, link %q", form.State, form.PaymentURL)
		}
		run(10 * time.Minute)
		if n := len(srv.Received()); n != 0 {
			t.Fatalf("%d messages while the provider is down", n)
		}
		var msgs int64
		if msgs, _ = db.NewSelect().Model((*engine.OutboxMessage)(nil)).Where("kind = ?", payment.KindPaymentLink).Count(ctx); msgs != 1 {
			t.Fatalf("%d payment-link messages queued, want 1 waiting", msgs)
		}
		provider.setDown(false)
		for range 10 { // the message's job retries with backoff
			if len(srv.Received()) > 0 {
				break
			}
			run(15 * time.Minute)
		}
		got := srv.Wait(t, 1)
		_, parts := decoded(t, got[0].Data)
		if strings.Join(got[0].To, ",") != "alex.morgan@example.org" || !strings.Contains(parts["text/plain"], "https://portal.example/pay/PO-") ||
			!strings.Contains(parts["text/html"], "Pay now") {
			t.Fatalf("payment link to %v:\n%s", got[0].To, parts["text/plain"])
		}
		run(time.Hour)
		if n := len(srv.Received()); n != 1 {
			t.Fatalf("%d messages after another run, want the one link", n)
		}
	})
}

// TestWelcomeAndExpiryReminder: an hour after a person's first membership
// with the club became active the person is welcomed, once (a member of
// an earlier season is not); a month before the period ends each member is
// reminded, once.
func TestWelcomeAndExpiryReminder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		srv, clk := e.srv, e.clk
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "welcome-secret-0123456789",
			UnsubscribeAddress: "portal@club.example", Now: clk.Now})
		registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, clk.Now, e.quiet)
		message.ScheduleMessages(e.r, db, clk.Now, e.quiet)
		demo := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		run := func(after time.Duration) { e.run(t, after) }
		subjects := func() map[string]int {
			out := map[string]int{}
			for _, m := range srv.Received() {
				h, _ := decoded(t, m.Data)
				s, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
				out[s]++
			}
			return out
		}
		demo.Pay(demo.Commit(alex, robin))
		run(30 * time.Minute)
		if got := subjects(); got["Welcome to Riverside Rowing Club"] != 0 {
			t.Fatalf("welcomed in the confirmation's minute: %v", got)
		}
		run(time.Hour)
		srv.Wait(t, 2)
		run(time.Hour)
		// Robin is new; Alex was a member last season and is not welcomed.
		welcomes := ""
		for _, m := range srv.Received() {
			if _, parts := decoded(t, m.Data); strings.Contains(parts["text/plain"], "Welcome to") {
				welcomes += parts["text/plain"]
			}
		}
		if got := subjects(); got["Welcome to Riverside Rowing Club"] != 1 || len(srv.Received()) != 2 ||
			!strings.Contains(welcomes, "Hello Robin") || strings.Contains(welcomes, "Hello Alex") {
			t.Fatalf("after two hours: %v, want the confirmation and one welcome, Robin's:\n%s", got, welcomes)
		}
		var period engine.MembershipPeriod
		if err := db.NewSelect().Model(&period).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		ends := period.EndDate.Format("2 January 2006")
		// Twenty days before the period ends: inside the 30-day window.
		run(time.Date(period.EndDate.Year(), period.EndDate.Month(), period.EndDate.Day(), 12, 0, 0, 0, time.UTC).AddDate(0, 0, -20).Sub(clk.Now()))
		srv.Wait(t, 4)
		run(24 * time.Hour)
		run(24 * time.Hour)
		// Every active membership of the period is reminded: Alex's and
		// Robin's, and those the demo seeds as registered already.
		n, err := db.NewSelect().Model((*engine.Membership)(nil)).Where("period_id = ? AND status = ?", period.ID, engine.MembershipActive).Count(ctx)
		active := int(n)
		if err != nil || active < 2 {
			t.Fatalf("%d active memberships, %v", active, err)
		}
		got := subjects()
		if want := "Riverside Rowing Club: your membership ends on " + ends; got[want] != active || len(srv.Received()) != 2+active {
			t.Fatalf("near the end: %v, want %d of %q", got, active, want)
		}
	})
}

// TestRenewalPrompts: when the next season is open, each household of the
// ending season gets one prompt, from the lead time before its end on,
// naming only the persons not registered yet, with the hash link into the
// next season and List-Unsubscribe; re-runs send nothing more, and no
// expiry reminder goes out beside them.
func TestRenewalPrompts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		srv, clk := e.srv, e.clk
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "renewal-secret-0123456789",
			UnsubscribeAddress: "portal@club.example", Now: clk.Now})
		demo := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		demo.Pay(demo.Commit(alex, robin))
		next := demo.OpenNextPeriod()
		// Jamie (seeded as a member of this season) is registered for the
		// next one already; Kim, of another household, is not.
		if _, err := db.NewInsert().Model(&engine.Membership{PersonID: 4, PeriodID: next.ID, MembershipTypeID: 2, MemberType: engine.MemberRenewal,
			Status: engine.MembershipPending, CreatedAt: clk.Now()}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		kim := &engine.Person{OrganisationID: 1, FirstName: "Kim", LastName: "Lee", DateOfBirth: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), Email: "kim@example.org"}
		if _, err := db.NewInsert().Model(kim).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewInsert().Model(&engine.UserPerson{UserKey: "kim-key", PersonID: kim.ID, OrganisationID: 1}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewInsert().Model(&engine.Membership{PersonID: kim.ID, PeriodID: engine.DemoPeriodID, MembershipTypeID: 1, MemberType: engine.MemberNew,
			Status: engine.MembershipActive, CreatedAt: clk.Now(), ActivatedAt: ptrTime(clk.Now())}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, clk.Now, e.quiet)
		message.ScheduleMessages(e.r, db, clk.Now, e.quiet)
		prompts := func() []mailtest.Received { return withSubject(t, srv.Received(), "renew your membership") }
		var ending engine.MembershipPeriod
		if err := db.NewSelect().Model(&ending).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		endNoon := time.Date(ending.EndDate.Year(), ending.EndDate.Month(), ending.EndDate.Day(), 12, 0, 0, 0, time.UTC)
		e.run(t, endNoon.AddDate(0, 0, -message.DefaultRenewalLeadDays-1).Sub(clk.Now()))
		if got := prompts(); len(got) != 0 {
			t.Fatalf("%d prompts before the lead time", len(got))
		}
		e.run(t, 48*time.Hour)
		e.run(t, 24*time.Hour)
		got := prompts()
		if len(got) != 2 {
			t.Fatalf("%d prompts, want one per household (2)", len(got))
		}
		byTo := map[string]string{}
		for _, m := range got {
			h, parts := decoded(t, m.Data)
			if !strings.Contains(h.Get("List-Unsubscribe"), "mailto:portal@club.example") {
				t.Fatalf("no List-Unsubscribe: %v", h)
			}
			byTo[strings.Join(m.To, ",")] = parts["text/plain"]
		}
		demoText, kimText := byTo["alex.morgan@example.org"], byTo["kim@example.org"]
		link := "https://portal.example/membership/register/3?u=" + engine.DemoUserKey + "&h=" + hashlink.Sign("renewal-secret-0123456789", engine.DemoUserKey)
		if !strings.Contains(demoText, link) || !strings.Contains(demoText, "Alex and Robin") || strings.Contains(demoText, "Jamie") {
			t.Fatalf("the household's prompt (want %s, Alex and Robin, not Jamie):\n%s", link, demoText)
		}
		if !strings.Contains(kimText, "/membership/register/3?u=kim-key&h=") || !strings.Contains(kimText, next.Name) {
			t.Fatalf("Kim's prompt:\n%s", kimText)
		}
		if n, err := db.NewSelect().Model((*engine.OutboxMessage)(nil)).Where("kind = ?", message.KindRenewalPrompt).Count(ctx); err != nil || n != 2 {
			t.Fatalf("%d renewal messages queued, %v", n, err)
		}
		// The next season is open: the prompts replace the expiry reminders.
		if n := len(withSubject(t, srv.Received(), "your membership ends on")); n != 0 {
			t.Fatalf("%d expiry reminders beside the renewal prompts", n)
		}
	})
}

// TestRenewalPromptAfterTheEnd: a next season opened only after the ending
// one's last day prompts the household with "ended on" that day, never
// "ends on" a date already past.
func TestRenewalPromptAfterTheEnd(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "renewal-secret-0123456789",
			UnsubscribeAddress: "portal@club.example", Now: e.clk.Now})
		demo := enginetest.Seed(t, db, engine.WithClock(e.clk.Now))
		demo.Pay(demo.Commit(alex, robin))
		var ending engine.MembershipPeriod
		if err := db.NewSelect().Model(&ending).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, e.clk.Now, e.quiet)
		message.ScheduleMessages(e.r, db, e.clk.Now, e.quiet)
		dayAfter := time.Date(ending.EndDate.Year(), ending.EndDate.Month(), ending.EndDate.Day()+1, 12, 0, 0, 0, time.UTC)
		e.run(t, dayAfter.Sub(e.clk.Now()))
		demo.OpenNextPeriod()
		e.run(t, 24*time.Hour)
		got := withSubject(t, e.srv.Received(), "renew your membership")
		if len(got) != 1 {
			t.Fatalf("%d prompts after the end, want 1", len(got))
		}
		_, parts := decoded(t, got[0].Data)
		ends := lang.New("en", language.Und).Date(ending.EndDate)
		for _, part := range []string{"text/plain", "text/html"} {
			if body := parts[part]; !strings.Contains(body, "ended on "+ends) || strings.Contains(body, "ends on") {
				t.Fatalf("%s part, want \"ended on %s\":\n%s", part, ends, body)
			}
		}
	})
}

func ptrTime(t time.Time) *time.Time { return &t }

// withSubject are the messages whose subject contains part.
func withSubject(t *testing.T, got []mailtest.Received, part string) []mailtest.Received {
	t.Helper()
	var out []mailtest.Received
	for _, m := range got {
		h, _ := decoded(t, m.Data)
		if s, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); strings.Contains(s, part) {
			out = append(out, m)
		}
	}
	return out
}

// TestOrganisationMessageSettings: an organisation's own reminder days
// and sender replace the defaults: the unpaid reminder comes on day 2 and
// not on day 3, from its sender name, with replies to its address.
func TestOrganisationMessageSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newScheduledEnv(t, db)
		srv, clk := e.srv, e.clk
		messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "settings-secret-0123456789", Now: clk.Now})
		registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, clk.Now, e.quiet)
		message.ScheduleMessages(e.r, db, clk.Now, e.quiet)
		demo := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		days, name, replyTo := []int{2}, "Riverside Office", "office@riverside.example"
		if _, err := message.Of(demo.Svc).UpdateMessageSettings(ctx, 1, message.SettingsChange{UnpaidReminderDays: &days, SenderName: &name, ReplyTo: &replyTo}); err != nil {
			t.Fatal(err)
		}
		demo.Commit(alex, robin)
		reminders := func() []mailtest.Received { return withSubject(t, srv.Received(), "payment is still open") }
		e.run(t, 24*time.Hour)
		if n := len(reminders()); n != 0 {
			t.Fatalf("%d reminders on day 1", n)
		}
		e.run(t, 24*time.Hour)
		e.run(t, 24*time.Hour)
		got := reminders()
		if len(got) != 1 {
			t.Fatalf("%d reminders by day 3, want the day-2 one", len(got))
		}
		h, parts := decoded(t, got[0].Data)
		from, err := netmail.ParseAddress(h.Get("From"))
		if err != nil || from.Name != name || from.Address != "portal@club.example" || h.Get("Reply-To") != replyTo || !strings.Contains(parts["text/plain"], "2 days ago") {
			t.Fatalf("From %q (%v), Reply-To %q:\n%s", h.Get("From"), err, h.Get("Reply-To"), parts["text/plain"])
		}
	})
}

// TestConfirmationOfAnOrderTakenBackIsNotSent: a returned direct debit
// takes the payment back before the confirmation went out: the
// confirmation is no longer due, and its job ends without a dead job.
func TestConfirmationOfAnOrderTakenBackIsNotSent(t *testing.T) {
	db := dbtest.SQLite(t)
	ctx := context.Background()
	srv := mailtest.Start(t, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	sender, _ := mail.NewSMTP(mail.Config{URL: u, From: netmail.Address{Name: "Portal", Address: "portal@club.example"}})
	r := jobs.New(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	messages.Register(r, messages.Deps{DB: db, Sender: sender, BaseURL: "https://portal.example", HashSecret: "reminder-secret-0123456789"})
	demo := enginetest.Seed(t, db)
	demo.Pay(demo.Commit(alex))
	// What a return does to the order (engine/directdebit/debit_returns.go).
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderUnpaid).Set("paid_at = NULL").Where("1 = 1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		if n, _ := r.Work(ctx, 10); n == 0 {
			break
		}
	}
	if n := len(srv.Received()); n != 0 {
		t.Fatalf("%d messages sent for an order no longer paid", n)
	}
	if n, err := db.NewSelect().Model((*jobs.Job)(nil)).Where("state <> ?", jobs.StateSucceeded).Count(ctx); err != nil || n != 0 {
		t.Fatalf("%d jobs not succeeded (%v)", n, err)
	}
}
