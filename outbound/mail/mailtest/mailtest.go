// Package mailtest is a real SMTP server for tests (github.com/emersion/go-smtp),
// in-process: it records what it receives, can offer STARTTLS or implicit
// TLS with a certificate its clients are told to trust, require a login,
// refuse recipients, and be stopped and started again on the same address.
package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options choose what the server offers.
type Options struct {
	// STARTTLS offers STARTTLS (with a certificate for 127.0.0.1).
	STARTTLS bool
	// ImplicitTLS speaks TLS from the first byte (smtps).
	ImplicitTLS bool
	// Users, when set, is who may log in (AUTH PLAIN); mail needs a login then.
	Users map[string]string
	// RefuseRcpt, when set, answers RCPT TO for an address.
	RefuseRcpt func(addr string) error
}

// Received is one delivered message.
type Received struct {
	From     string
	To       []string
	Data     []byte
	User     string // who logged in, if anyone
	TLS      bool   // whether the session was encrypted
	AuthSeen bool   // whether the client tried to log in
}

// Server is a running test SMTP server.
type Server struct {
	Addr string
	opts Options
	tls  *tls.Config
	pool *x509.CertPool

	mu       sync.Mutex
	received []Received
	auths    int
	srv      *smtp.Server
	ln       net.Listener
}

// Start runs a server on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts}
	s.tls, s.pool = selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// Host and Port of the server's address.
func (s *Server) Host() string { h, _, _ := net.SplitHostPort(s.Addr); return h }

func (s *Server) Port() string { _, p, _ := net.SplitHostPort(s.Addr); return p }

// ClientTLS is a client TLS configuration that trusts the server's certificate.
func (s *Server) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: s.pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

func (s *Server) serve(ln net.Listener) {
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{s: s, tls: isTLS}, nil
	}))
	srv.Domain = "127.0.0.1"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 10 << 20
	srv.AllowInsecureAuth = false
	srv.EnableSMTPUTF8 = true
	if s.opts.STARTTLS {
		srv.TLSConfig = s.tls
	}
	if s.opts.ImplicitTLS {
		ln = tls.NewListener(ln, s.tls)
	}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go srv.Serve(ln) //nolint:errcheck // ends with Stop
}

// Stop closes the server: deliveries fail until Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, ln := s.srv, s.ln
	s.srv, s.ln = nil, nil
	s.mu.Unlock()
	if srv != nil {
		ln.Close() // Serve may not have taken it over yet
		srv.Close()
	}
}

// Restart serves again on the same address.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		if ln, err = net.Listen("tcp", s.Addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("restart on %s: %v", s.Addr, err)
	}
	s.serve(ln)
}

// Received returns what the server has received so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// AuthAttempts counts AUTH commands the server saw.
func (s *Server) AuthAttempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths
}

// Wait polls until n messages have arrived (or fails the test after 10 s).
func (s *Server) Wait(t testing.TB, n int) []Received {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := s.Received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages arrived, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type session struct {
	s    *Server
	tls  bool
	user string
	auth bool
	from string
	to   []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.opts.Users == nil {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	ss.s.mu.Lock()
	ss.s.auths++
	ss.s.mu.Unlock()
	ss.auth = true
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if want, ok := ss.s.opts.Users[username]; !ok || want != password {
			return errors.New("invalid credentials")
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.Users != nil && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.s.opts.RefuseRcpt != nil {
		if err := ss.s.opts.RefuseRcpt(to); err != nil {
			return err
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	ss.s.received = append(ss.s.received, Received{From: ss.from, To: ss.to, Data: b, User: ss.user, TLS: ss.tls, AuthSeen: ss.auth})
	ss.s.mu.Unlock()
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, pool
}
