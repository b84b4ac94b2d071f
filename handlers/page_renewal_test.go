package handlers_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/message"
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
		env := newEnv(t, db)
		demo := enginetest.Seed(t, db)
		demo.Pay(demo.Commit(1, 3))
		next := demo.OpenNextPeriod()

		var ending engine.MembershipPeriod
		if err := db.NewSelect().Model(&ending).Where("id = ?", engine.DemoPeriodID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		// The day before the season ends.
		at := ending.EndDate.AddDate(0, 0, -1).Add(12 * time.Hour)
		mr := env.newMailRunner(func() time.Time { return at })
		if _, err := message.QueueRenewalPrompts(ctx, db, at); err != nil {
			t.Fatal(err)
		}
		mr.work()
		srv := mr.srv
		// The confirmation of the payment went out too: the prompt is the
		// message with a link into the next period.
		link, text := "", ""
		for _, m := range srv.Wait(t, 2) {
			text = plainPart(t, m.Data)
			if link = regexp.MustCompile(regexp.QuoteMeta(env.srv.URL) + `/membership/register/3\?\S+`).FindString(text); link != "" {
				break
			}
		}
		target, err := url.Parse(link)
		if link == "" || err != nil {
			t.Fatalf("no link into the next period (%v) in:\n%s", err, text)
		}
		c := env.newClient()
		expectRedirect(t, env.get(c, target.RequestURI()), "/membership/register/3")
		expectRedirect(t, env.post(c, "/membership/register/3/persons", url.Values{"person": {"1", "3"}}), "/membership/register/3/step/1")
		step1 := env.get(c, "/membership/register/3/step/1")
		for _, id := range []string{"#answer-1", "#answer-3"} {
			if v := step1.doc.Find(id).AttrOr("value", ""); v != "0612345678" {
				t.Fatalf("%s on step 1 of %s: %q, want last season's 0612345678:\n%s", id, next.Name, v, step1.body)
			}
		}
		expectRedirect(t, env.post(c, "/membership/register/3/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0612345678"}}), "/membership/register/3/step/2")
		step2 := env.get(c, "/membership/register/3/step/2")
		if v := step2.doc.Find("#answer-1 option[selected]").AttrOr("value", ""); v != "M" {
			t.Fatalf("shirt size on step 2: %q, want last season's M:\n%s", v, step2.body)
		}
	})
}

// plainPart is the decoded text/plain part of a received message.
func plainPart(t *testing.T, data []byte) string {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var find func(ct string, r io.Reader) string
	find = func(ct string, r io.Reader) string {
		mt, params, _ := mime.ParseMediaType(ct)
		if !strings.HasPrefix(mt, "multipart/") {
			if mt != "text/plain" {
				return ""
			}
			b, _ := io.ReadAll(r)
			return string(b)
		}
		mr := multipart.NewReader(r, params["boundary"])
		for {
			p, err := mr.NextPart() // decodes quoted-printable
			if err != nil {
				return ""
			}
			if s := find(p.Header.Get("Content-Type"), p); s != "" {
				return s
			}
		}
	}
	return find(m.Header.Get("Content-Type"), m.Body)
}

// mailRunner delivers the jobs of env's database (messages through a real
// SMTP server in-process), on a clock of the test's.
type mailRunner struct {
	t   testing.TB
	srv *mailtest.Server
	r   *jobs.Runner
}

func (env *testEnv) newMailRunner(now func() time.Time) *mailRunner {
	env.t.Helper()
	srv := mailtest.Start(env.t, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	sender, err := mail.NewSMTP(mail.Config{URL: u, From: netmail.Address{Name: "Portal", Address: "portal@club.example"}})
	if err != nil {
		env.t.Fatal(err)
	}
	r := jobs.New(env.db, jobs.Config{Logger: slog.New(slog.DiscardHandler), Now: now})
	messages.Register(r, messages.Deps{DB: env.db, Sender: sender, BaseURL: env.srv.URL, HashSecret: testSecret, UnsubscribeAddress: "portal@club.example", Now: now})
	return &mailRunner{t: env.t, srv: srv, r: r}
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
