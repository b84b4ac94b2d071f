// Package mail delivers the portal's e-mail: to an SMTP server named by
// PORTAL_SMTP_URL (github.com/wneessen/go-mail), or, with none configured,
// to the log, so that development needs no mail server. It sends what
// outbound/messages composes; it knows nothing of what the mail says.
package mail

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"portal/engine/jobs"
)

// Message is one e-mail, composed.
type Message struct {
	// FromName is the sender's display name (the club's name); empty: the
	// name of PORTAL_MAIL_FROM. The address is always PORTAL_MAIL_FROM's.
	FromName string
	To       []string
	Subject  string // UTF-8; encoded as the header needs
	Text     string // the text/plain alternative
	HTML     string // the text/html alternative; empty: text only
	// ID is the Message-ID's left part. Deterministic per message (the
	// outbox key's hash), so that a retry after a half-finished delivery
	// carries the same id and receivers can discard the duplicate.
	ID string
	// Headers are extra headers, such as List-Unsubscribe.
	Headers     map[string]string
	Attachments []Attachment
	Date        time.Time
}

// Attachment is a file sent with a message.
type Attachment struct {
	Name        string
	ContentType string
	Data        []byte
	// ContentID, when set, makes the file an inline part of the HTML
	// (Content-Disposition inline, Content-ID <ContentID>), which the
	// HTML refers to as cid:ContentID: an image that shows without the
	// mail client loading anything from the web.
	ContentID string
}

// Sender delivers messages. An error is temporary (retry later) unless
// jobs.IsPermanent says otherwise.
type Sender interface {
	Send(ctx context.Context, m *Message) error
	// Describe says where mail goes, for the start-up log.
	Describe() string
}

// DKIMSignedHeaders are the header fields the DKIM signature covers: go-mail's
// default set and the one-click unsubscribe pair, which RFC 8058 section 4
// requires in the signature (without it providers show no unsubscribe
// button). A listed field a message lacks is signed as absent (RFC 6376
// 5.4), so none can be added in transit either.
var DKIMSignedHeaders = []string{"From", "To", "Subject", "Date", "Message-ID", "Content-Type", "MIME-Version",
	"List-Unsubscribe", "List-Unsubscribe-Post"}

// DKIM signs outgoing mail for Domain with the key published at
// Selector._domainkey.Domain.
type DKIM struct {
	Domain, Selector string
	Key              crypto.Signer
}

// ParseDKIMKey reads a PEM private key (RSA PKCS#1 or PKCS#8, Ed25519).
func ParseDKIMKey(pem []byte) (crypto.Signer, error) { return gomail.PrivKeyFromPEM(pem) }

// Config is where and as whom mail goes.
type Config struct {
	// URL is smtp://user:password@host:port, credentials and port optional (STARTTLS when offered, and
	// required when there are credentials; port 587 by default) or
	// smtps://... (implicit TLS, port 465 by default).
	URL  *url.URL
	From netmail.Address
	DKIM *DKIM
	// TLS overrides the TLS configuration (tests trust their own CA).
	TLS *tls.Config
	// Timeout bounds one delivery: connect, conversation, data (default 30s).
	Timeout time.Duration
}

// ParseURL checks an SMTP URL: scheme smtp or smtps, a host, an optional
// numeric port, nothing else.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must be smtp://host, smtp://user:password@host:port (STARTTLS) or smtps://... (implicit TLS)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("has an invalid port")
		}
	}
	return u, nil
}

// ParseFrom reads "Name <address>" (or a bare address).
func ParseFrom(raw string) (netmail.Address, error) {
	a, err := netmail.ParseAddress(raw)
	if err != nil {
		return netmail.Address{}, errors.New(`must be an address such as "Club Portal <portal@example.org>"`)
	}
	return *a, nil
}

// SMTP delivers through an SMTP server, one connection per message.
type SMTP struct {
	cfg  Config
	opts []gomail.Option
	host string
}

// NewSMTP returns a Sender for cfg.URL.
func NewSMTP(cfg Config) (*SMTP, error) {
	if cfg.URL == nil {
		return nil, errors.New("no SMTP URL")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	u := cfg.URL
	s := &SMTP{cfg: cfg, host: u.Hostname()}
	port := 587
	opts := []gomail.Option{gomail.WithTimeout(cfg.Timeout)}
	if u.Scheme == "smtps" {
		port = 465
		opts = append(opts, gomail.WithSSL())
	} else if u.User != nil {
		// Credentials never travel in clear: without STARTTLS the
		// delivery fails before AUTH.
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p) // ParseURL checked it
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil {
		pass, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	tlsCfg := cfg.TLS
	if tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tlsCfg = tlsCfg.Clone()
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = s.host
	}
	opts = append(opts, gomail.WithTLSConfig(tlsCfg))
	if cfg.DKIM != nil {
		signer := gomail.NewDKIMSigner(cfg.DKIM.Domain, cfg.DKIM.Selector, cfg.DKIM.Key)
		signer.SignHeaders(DKIMSignedHeaders...)
		opts = append(opts, gomail.WithAlwaysDKIMSign(signer))
	}
	s.opts = opts
	// Check the options once now, so a bad setting fails at start-up.
	if _, err := gomail.NewClient(s.host, opts...); err != nil {
		return nil, fmt.Errorf("SMTP client: %w", err)
	}
	return s, nil
}

// Describe names the server, without credentials.
func (s *SMTP) Describe() string {
	u := *s.cfg.URL
	u.User = nil
	desc := u.String()
	if s.cfg.DKIM != nil {
		desc += " (DKIM " + s.cfg.DKIM.Selector + "._domainkey." + s.cfg.DKIM.Domain + ")"
	}
	return desc
}

// Send delivers m. A 5xx answer of the server is permanent; anything else
// (the server unreachable, 4xx, a timeout) is temporary.
func (s *SMTP) Send(ctx context.Context, m *Message) error {
	msg, err := build(s.cfg.From, m)
	if err != nil {
		return jobs.Permanent(err)
	}
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return fmt.Errorf("SMTP client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && se.ErrorCode() >= 500 && se.ErrorCode() < 600 {
			return jobs.Permanent(fmt.Errorf("the mail server refused the message: %w", err))
		}
		return fmt.Errorf("deliver mail: %w", err)
	}
	return nil
}

// build turns m into a go-mail message from the configured address.
func build(from netmail.Address, m *Message) (*gomail.Msg, error) {
	if len(m.To) == 0 {
		return nil, errors.New("message without recipients")
	}
	msg := gomail.NewMsg(gomail.WithCharset(gomail.CharsetUTF8), gomail.WithEncoding(gomail.EncodingQP))
	name := m.FromName
	if name == "" {
		name = from.Name
	}
	if err := msg.FromFormat(name, from.Address); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	if err := msg.To(m.To...); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	msg.Subject(m.Subject)
	date := m.Date
	if date.IsZero() {
		date = time.Now()
	}
	msg.SetDateWithValue(date)
	if m.ID != "" {
		msg.SetMessageIDWithValue(m.ID + "@" + domainOf(from.Address))
	} else {
		msg.SetMessageID()
	}
	msg.SetUserAgent("portal")
	for k, v := range m.Headers {
		msg.SetGenHeader(gomail.Header(k), v)
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	for _, a := range m.Attachments {
		ct := gomail.ContentType(a.ContentType)
		if a.ContentID != "" {
			if err := msg.EmbedReader(a.Name, bytes.NewReader(a.Data), gomail.WithFileContentType(ct),
				gomail.WithFileContentID("<"+a.ContentID+">")); err != nil {
				return nil, fmt.Errorf("embed %s: %w", a.Name, err)
			}
			continue
		}
		if err := msg.AttachReader(a.Name, bytes.NewReader(a.Data), gomail.WithFileContentType(ct)); err != nil {
			return nil, fmt.Errorf("attach %s: %w", a.Name, err)
		}
	}
	return msg, nil
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return "localhost"
}

// Log stands in for a mail server when there is none (no PORTAL_SMTP_URL):
// nothing is sent. With Texts (development: `make run`, a loopback base
// URL) each message is written to the log at info, recipients and text
// included, to be read there. Without it (a deployment) the log says only
// that a message was not sent and why: the log is kept apart from the
// database, where no erasure reaches, so it must not hold members'
// addresses and the texts that name them.
type Log struct {
	Logger *slog.Logger
	From   netmail.Address
	// Texts writes each message's recipients, subject and text to the log.
	Texts bool
}

// Describe says that mail is not sent.
func (l Log) Describe() string {
	if l.Texts {
		return "the log (no PORTAL_SMTP_URL: e-mail is not sent, its text is logged)"
	}
	return "nowhere (no PORTAL_SMTP_URL: e-mail is not sent; the log says so, without the text)"
}

// Send logs m: with Texts its recipients, subject, the text part and the
// attachments' names; without, that it was not sent, its id and how many
// recipients it had.
func (l Log) Send(ctx context.Context, m *Message) error {
	if _, err := build(l.From, m); err != nil {
		return jobs.Permanent(err) // what SMTP would refuse, the log refuses too
	}
	if !l.Texts {
		l.Logger.WarnContext(ctx, "e-mail not sent: no mail server is configured (PORTAL_SMTP_URL)",
			"message_id", m.ID, "recipients", len(m.To), "attachments", len(m.Attachments))
		return nil
	}
	names := make([]string, len(m.Attachments))
	for i, a := range m.Attachments {
		names[i] = fmt.Sprintf("%s (%d bytes)", a.Name, len(a.Data))
	}
	l.Logger.InfoContext(ctx, "e-mail (not sent: no PORTAL_SMTP_URL)", "to", strings.Join(m.To, ", "), "subject", m.Subject,
		"attachments", strings.Join(names, ", "), "text", m.Text)
	return nil
}
