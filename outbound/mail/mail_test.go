package mail_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"portal/engine/jobs"
	"portal/outbound/mail"
	"portal/outbound/mail/mailtest"
)

func sender(t *testing.T, srv *mailtest.Server, scheme, user string, dkim *mail.DKIM) *mail.SMTP {
	t.Helper()
	raw := scheme + "://" + srv.Addr
	if user != "" {
		raw = scheme + "://" + url.UserPassword(user, "pa:ss word").String() + "@" + srv.Addr
	}
	u, err := mail.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	from, _ := mail.ParseFrom("Portal <portal@club.example>")
	s, err := mail.NewSMTP(mail.Config{URL: u, From: from, TLS: srv.ClientTLS(), DKIM: dkim})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func message() *mail.Message {
	return &mail.Message{
		FromName: "FC Grün-Weiß", To: []string{"alex@example.org", "robin@example.org"},
		Subject: "Bestätigung ✓ Mitgliedschaft", Text: "Hallo Alex,\nbezahlt.", HTML: "<p style=\"color:#333\">Hallo <b>Alex</b></p>",
		ID: "abc123", Headers: map[string]string{"List-Unsubscribe": "<https://portal.example/unsubscribe/x>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
		Attachments: []mail.Attachment{{Name: "card.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 test")}},
	}
}

// parts returns the message's header and its leaf parts by content type.
func parts(t *testing.T, data []byte) (netmail.Header, map[string][]byte, map[string]string) {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	bodies, names := map[string][]byte{}, map[string]string{}
	var walk func(ct string, r io.Reader, disp string)
	walk = func(ct string, r io.Reader, disp string) {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var body io.Reader = p
				switch p.Header.Get("Content-Transfer-Encoding") {
				case "quoted-printable":
					body = multipartQP(p)
				case "base64":
					body = b64(p)
				}
				walk(p.Header.Get("Content-Type"), body, p.Header.Get("Content-Disposition"))
			}
		}
		b, _ := io.ReadAll(r)
		bodies[mt] = b
		if disp != "" {
			_, dp, _ := mime.ParseMediaType(disp)
			names[mt] = dp["filename"]
		}
	}
	walk(m.Header.Get("Content-Type"), m.Body, "")
	return m.Header, bodies, names
}

func TestSendsAlternativesAttachmentsAndHeaders(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	if err := sender(t, srv, "smtp", "", nil).Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 1)[0]
	if got.From != "portal@club.example" || strings.Join(got.To, ",") != "alex@example.org,robin@example.org" {
		t.Fatalf("envelope %s -> %v", got.From, got.To)
	}
	h, bodies, names := parts(t, got.Data)
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(h.Get("Subject"))
	if err != nil || subject != "Bestätigung ✓ Mitgliedschaft" {
		t.Errorf("subject %q (%v) from %q", subject, err, h.Get("Subject"))
	}
	if from, err := h.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "FC Grün-Weiß" || from[0].Address != "portal@club.example" {
		t.Errorf("From: %q (%v)", h.Get("From"), err)
	}
	if h.Get("Message-Id") != "<abc123@club.example>" || h.Get("List-Unsubscribe") != "<https://portal.example/unsubscribe/x>" || h.Get("Date") == "" {
		t.Errorf("headers %v", h)
	}
	if string(bodies["text/plain"]) != "Hallo Alex,\r\nbezahlt." && string(bodies["text/plain"]) != "Hallo Alex,\nbezahlt." {
		t.Errorf("text part %q", bodies["text/plain"])
	}
	if !strings.Contains(string(bodies["text/html"]), "Hallo <b>Alex</b>") {
		t.Errorf("html part %q", bodies["text/html"])
	}
	if string(bodies["application/pdf"]) != "%PDF-1.4 test" || names["application/pdf"] != "card.pdf" {
		t.Errorf("attachment %q named %q", bodies["application/pdf"], names["application/pdf"])
	}
}

func TestNeverSendsCredentialsWithoutTLS(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{Users: map[string]string{"club": "pa:ss word"}})
	err := sender(t, srv, "smtp", "club", nil).Send(context.Background(), message())
	if err == nil {
		t.Fatal("delivered with credentials over a connection without STARTTLS")
	}
	if srv.AuthAttempts() != 0 || len(srv.Received()) != 0 {
		t.Fatalf("auth attempts %d, received %d", srv.AuthAttempts(), len(srv.Received()))
	}
}

func TestSTARTTLSWithLogin(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{STARTTLS: true, Users: map[string]string{"club": "pa:ss word"}})
	if err := sender(t, srv, "smtp", "club", nil).Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Wait(t, 1)[0]; !got.TLS || got.User != "club" {
		t.Fatalf("tls %v user %q", got.TLS, got.User)
	}
}

func TestSTARTTLSWhenOfferedWithoutLogin(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{STARTTLS: true})
	if err := sender(t, srv, "smtp", "", nil).Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Wait(t, 1)[0]; !got.TLS {
		t.Fatal("STARTTLS was offered but not used")
	}
}

func TestImplicitTLS(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{ImplicitTLS: true, Users: map[string]string{"club": "pa:ss word"}})
	if err := sender(t, srv, "smtps", "club", nil).Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Wait(t, 1)[0]; got.User != "club" {
		t.Fatalf("user %q", got.User)
	}
}

func TestPermanentAndTemporaryRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refusal   error
		permanent bool
	}{
		{"no such user", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}, true},
		{"greylisted", &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "try later"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{RefuseRcpt: func(string) error { return tc.refusal }})
			err := sender(t, srv, "smtp", "", nil).Send(context.Background(), message())
			if err == nil || jobs.IsPermanent(err) != tc.permanent {
				t.Fatalf("err %v, permanent %v, want %v", err, jobs.IsPermanent(err), tc.permanent)
			}
		})
	}
	t.Run("server down", func(t *testing.T) {
		srv := mailtest.Start(t, mailtest.Options{})
		srv.Stop()
		err := sender(t, srv, "smtp", "", nil).Send(context.Background(), message())
		if err == nil || jobs.IsPermanent(err) {
			t.Fatalf("err %v: want a temporary failure", err)
		}
	})
}

func TestDKIMSignature(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	signer, err := mail.ParseDKIMKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	srv := mailtest.Start(t, mailtest.Options{})
	if err := sender(t, srv, "smtp", "", &mail.DKIM{Domain: "club.example", Selector: "portal", Key: signer}).Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	h, _, _ := parts(t, srv.Wait(t, 1)[0].Data)
	sig := h.Get("Dkim-Signature")
	for _, want := range []string{"d=club.example", "s=portal", "a=ed25519-sha256", "b="} {
		if !strings.Contains(sig, want) {
			t.Errorf("DKIM-Signature %q lacks %s", sig, want)
		}
	} // RFC 8058 section 4: the one-click unsubscribe pair is signed.
	var signed []string
	for tag := range strings.SplitSeq(strings.Join(strings.Fields(sig), ""), ";") {
		if v, ok := strings.CutPrefix(tag, "h="); ok {
			signed = strings.Split(strings.ToLower(v), ":")
		}
	}
	for _, want := range []string{"from", "subject", "list-unsubscribe", "list-unsubscribe-post"} {
		if !slices.Contains(signed, want) {
			t.Errorf("DKIM-Signature h=%v lacks %s", signed, want)
		}
	}
}

func TestLogSender(t *testing.T) {
	var buf bytes.Buffer
	from, _ := mail.ParseFrom("Portal <portal@club.example>")
	l := mail.Log{Logger: slog.New(slog.NewTextHandler(&buf, nil)), From: from, Texts: true}
	if err := l.Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"level=INFO", "alex@example.org, robin@example.org", "Bestätigung", "card.pdf (13 bytes)", "bezahlt"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q: %s", want, buf.String())
		}
	}
	m := message()
	m.To = []string{"not an address"}
	if err := l.Send(context.Background(), m); !jobs.IsPermanent(err) {
		t.Errorf("a bad address: %v", err)
	}
}

// TestLogSenderWithoutTexts: a deployment without a mail server logs that a
// message was not sent and why, and nothing of it that names a member: no
// address, subject, text or attachment's name.
func TestLogSenderWithoutTexts(t *testing.T) {
	var buf bytes.Buffer
	from, _ := mail.ParseFrom("Portal <portal@club.example>")
	l := mail.Log{Logger: slog.New(slog.NewTextHandler(&buf, nil)), From: from}
	if err := l.Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "not sent") || !strings.Contains(out, "PORTAL_SMTP_URL") || !strings.Contains(out, "recipients=2") {
		t.Errorf("the log does not say the message was not sent and why: %s", out)
	}
	for _, never := range []string{"alex@example.org", "robin@example.org", "Bestätigung", "bezahlt", "card.pdf"} {
		if strings.Contains(out, never) {
			t.Errorf("the log holds %q: %s", never, out)
		}
	}
}

func TestParseURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"smtp://mail.example:587": true, "smtps://u:p@mail.example": true, "smtp://mail.example": true,
		"http://mail.example": false, "smtp://": false, "smtp://mail.example:99999": false, "smtp://mail.example/x": false, "smtp://h?tls=no": false,
	} {
		if _, err := mail.ParseURL(raw); (err == nil) != ok {
			t.Errorf("ParseURL(%q) = %v", raw, err)
		}
	}
	if _, err := mail.ParseFrom("Club <club@example.org>"); err != nil {
		t.Error(err)
	}
	if _, err := mail.ParseFrom("club at example"); err == nil {
		t.Error("a bad From is accepted")
	}
}

func multipartQP(r io.Reader) io.Reader { return quotedprintable.NewReader(r) }

func b64(r io.Reader) io.Reader { return base64.NewDecoder(base64.StdEncoding, r) }
