package messages_test

import (
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/privacy"
)

// A member's data request reaches the club's contact address over real
// SMTP; staff marking it done tells the household, in the request's
// language, with their note.
func TestDataRequestMails(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("contact_email = 'office@riverside.example'").Where("id = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		svc := e.demo.Svc
		req, err := privacy.Of(svc).RequestDataChange(engine.WithLanguage(ctx, "de"), 1, engine.DemoUserKey,
			privacy.NewDataRequest{Kind: privacy.DataRequestCorrection, Message: "Mein Geburtstag ist der 13."})
		if err != nil {
			t.Fatal(err)
		}
		e.work(t)
		e.srv.Wait(t, 1)
		h, text := plainText(t, e.srv.Received()[0].Data)
		if !strings.Contains(h.Get("To"), "office@riverside.example") || !strings.Contains(text, "Mein Geburtstag ist der 13.") ||
			!strings.Contains(text, "https://portal.example/staff/data-requests") {
			t.Fatalf("the club's e-mail: %v\n%s", h, text)
		}
		if err := privacy.Of(svc).CompleteDataRequest(ctx, engine.Actor{Name: "registrar@club.example"}, 1, req.ID, "Korrigiert."); err != nil {
			t.Fatal(err)
		}
		e.work(t)
		e.srv.Wait(t, 2)
		h, text = plainText(t, e.srv.Received()[1].Data)
		subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
		if !strings.Contains(h.Get("To"), "alex.morgan@example.org") || !strings.Contains(subject, "erledigt") || !strings.Contains(text, "Korrigiert.") {
			t.Fatalf("the household's e-mail: %v %q\n%s", h, subject, text)
		}
	})
}

// plainText is a text-only message's header and decoded body.
func plainText(t *testing.T, data []byte) (netmail.Header, string) {
	t.Helper()
	m, err := netmail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader = m.Body
	if m.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
		body = quotedprintable.NewReader(m.Body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return m.Header, string(b)
}
