package members_test

import (
	"context"
	"log/slog"
	netmail "net/mail"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/handlers/handlertest"
	"portal/outbound/mail"
	"portal/outbound/mail/mailtest"
	"portal/outbound/messages"
)

// TestRenewalLinkOpensPrefilledRegistration follows the link of a renewal
// prompt, as received over SMTP, into the next season: the registration
// it starts shows last season's answers in its forms.
func TestRenewalLinkOpensPrefilledRegistration(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		env := handlertest.NewEnv(t, db)
		demo := enginetest.Seed(t, db)
		demo.Pay(demo.Commit(1, 3))
		next := demo.OpenNextPeriod()

		var ending engine.MembershipPeriod
		if err := db.NewSelect().Model(&ending).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		// The day before the season ends.
		at := ending.EndDate.AddDate(0, 0, -1).Add(12 * time.Hour)
		mr := newMailRunner(env, func() time.Time { return at })
		if _, err := message.QueueRenewalPrompts(ctx, db, at); err != nil {
			t.Fatal(err)
		}
		mr.work()
		srv := mr.srv
		// The confirmation of the payment went out too: the prompt is the
		// message with a link into the next period.
		link, text := "", ""
		for _, m := range srv.Wait(t, 2) {
			text = handlertest.PlainPart(t, m.Data)
			if link = regexp.MustCompile(regexp.QuoteMeta(env.Server.URL) + `/membership/register/3\?\S+`).FindString(text); link != "" {
				break
			}
		}
		target, err := url.Parse(link)
		if link == "" || err != nil {
			t.Fatalf("no link into the next period (%v) in:\n%s", err, text)
		}
		c := env.NewClient()
		handlertest.ExpectRedirect(t, env.Get(c, target.RequestURI()), "/membership/register/3")
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/3/persons", url.Values{"person": {"1", "3"}}), "/membership/register/3/step/1")
		step1 := env.Get(c, "/membership/register/3/step/1")
		for _, id := range []string{"#answer-1", "#answer-3"} {
			if v := step1.Doc.Find(id).AttrOr("value", ""); v != "0612345678" {
				t.Fatalf("%s on step 1 of %s: %q, want last season's 0612345678:\n%s", id, next.Name, v, step1.Body)
			}
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/3/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0612345678"}}), "/membership/register/3/step/2")
		step2 := env.Get(c, "/membership/register/3/step/2")
		if v := step2.Doc.Find("#answer-1 option[selected]").AttrOr("value", ""); v != "M" {
			t.Fatalf("shirt size on step 2: %q, want last season's M:\n%s", v, step2.Body)
		}
	})
}

// mailRunner delivers the jobs of env's database (messages through a real
// SMTP server in-process), on a clock of the test's.
type mailRunner struct {
	t   testing.TB
	srv *mailtest.Server
	r   *jobs.Runner
}

func newMailRunner(env *handlertest.Env, now func() time.Time) *mailRunner {
	env.TB.Helper()
	srv := mailtest.Start(env.TB, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	sender, err := mail.NewSMTP(mail.Config{URL: u, From: netmail.Address{Name: "Portal", Address: "portal@club.example"}})
	if err != nil {
		env.TB.Fatal(err)
	}
	r := jobs.New(env.DB, jobs.Config{Logger: slog.New(slog.DiscardHandler), Now: now})
	messages.Register(r, messages.Deps{DB: env.DB, Sender: sender, BaseURL: env.Server.URL, HashSecret: handlertest.HashSecret, UnsubscribeAddress: "portal@club.example", Now: now})
	return &mailRunner{t: env.TB, srv: srv, r: r}
}

// work runs jobs until none is due.
func (m *mailRunner) work() {
	m.t.Helper()
	for {
		n, err := m.r.Work(context.Background(), 10)
		if err != nil {
			m.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}
