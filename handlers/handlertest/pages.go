package handlertest

import (
	"bytes"
	"image"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"golang.org/x/net/html"

	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/dbtest"
	"portal/handlers/server"
	"portal/relay/hashlink"
	"portal/relay/invitelink"
)

// SpacedText is the text of a selection with its text nodes apart, so
// that words of adjacent elements do not run together.
func SpacedText(s *goquery.Selection) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range s.Nodes {
		walk(n)
	}
	return b.String()
}

// BankTransferEnv is a server whose payments are bank transfers to the
// creditor; its pay links point at the server itself.
func BankTransferEnv(t *testing.T, creditor banking.Creditor) *Env {
	t.Helper()
	var base string // known once the server runs, before any registration
	bt, err := banktransfer.New(creditor, func(ref string, amount int64) string { return server.PaymentLinks(base).PayLink("", ref, amount) })
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnvWith(t, dbtest.SQLite(t), Options{Provider: bt})
	base = env.Server.URL
	return env
}

// MustIBAN parses s, failing the test if it is no IBAN.
func MustIBAN(t *testing.T, s string) banking.IBAN {
	t.Helper()
	iban, err := banking.ParseIBAN(s)
	if err != nil {
		t.Fatal(err)
	}
	return iban
}

// DecodeQR reads a QR code from pixels, as a phone does.
func DecodeQR(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	// PURE_BARCODE: the image is the code alone. gozxing's detector
	// sometimes misreads the size of a QR-bill's code, whose Swiss cross
	// covers the centre alignment pattern.
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_CHARACTER_SET: "UTF-8",
		gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decode QR: %v", err)
	}
	return res.GetText()
}

// TestInvitations signs and checks the invitation links of the tests.
var TestInvitations = invitelink.NewSigner([][]byte{bytes.Repeat([]byte("v"), 32)})

// StringPtr returns a pointer to s.
func StringPtr(s string) *string { return &s }

// Page is a fetched HTML page.
type Page struct {
	Response
	Doc *goquery.Document
}

// Get fetches a page with c.
func (env *Env) Get(c *http.Client, path string, headers ...string) Page {
	env.TB.Helper()
	return env.Parse(env.Do(c, http.MethodGet, path, nil, headers...))
}

// Post posts form to path with c, as a browser's form does, and parses the answer.
func (env *Env) Post(c *http.Client, path string, form url.Values, headers ...string) Page {
	env.TB.Helper()
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		env.TB.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return env.Parse(RoundTrip(env.TB, c, req, headers...))
}

// Parse reads r as an HTML page.
func (env *Env) Parse(r Response) Page {
	env.TB.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		env.TB.Fatal(err)
	}
	return Page{Response: r, Doc: doc}
}

// TestID selects the elements of p with data-testid id.
func (p Page) TestID(id string) *goquery.Selection {
	return p.Doc.Find(`[data-testid="` + id + `"]`)
}

// ExpectRedirect fails the test unless p is a 303 to location.
func ExpectRedirect(t testing.TB, p Page, location string) {
	t.Helper()
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != location {
		t.Fatalf("got %d to %q, want 303 to %q", p.Status, p.Header.Get("Location"), location)
	}
}

// BrowserLogin follows the demo's e-mail link and returns the signed-in client.
func (env *Env) BrowserLogin(userKey string) *http.Client {
	env.TB.Helper()
	c := env.NewClient()
	p := env.Get(c, "/membership/register/1?u="+userKey+"&h="+hashlink.Sign(HashSecret, userKey))
	ExpectRedirect(env.TB, p, "/membership/register/1")
	return c
}

// FollowPayment decides at the test gateway and follows its return.
func (env *Env) FollowPayment(c *http.Client, pay *url.URL, outcome string) Page {
	env.TB.Helper()
	pay = env.Checkout(c, pay.String())
	decided := env.Post(c, pay.Path, url.Values{"status": {outcome}})
	ret, err := url.Parse(decided.Header.Get("Location"))
	if decided.Status != http.StatusSeeOther || err != nil {
		env.TB.Fatalf("gateway: %d %q", decided.Status, decided.Header.Get("Location"))
	}
	return env.Get(c, ret.RequestURI())
}
