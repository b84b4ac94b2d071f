package views_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/language"

	"portal/views"
	"portal/views/lang"
)

// render renders an error page, the smallest page in the member frame, and
// parses it.
func render(t *testing.T, ctx context.Context, m views.ErrorModel) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := views.ErrorPage(m).Render(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPageFrameShowsTheOrganisationsBrand: the frame every member page
// shares prints the organisation's name (as text, whatever it holds), its
// accent colour as a stylesheet under its own address, its contact and the
// language of the page, and without a brand the portal's own.
func TestPageFrameShowsTheOrganisationsBrand(t *testing.T) {
	model := views.ErrorModel{Chrome: views.Chrome{Title: "Not found", Assets: views.Assets{CSS: "/static/app.css"}},
		Message: "No such page.", Link: "/o/rivers/", LinkText: "Back"}
	brand := views.Brand{Name: `Rivers <script>alert(1)</script> & Co`, Accent: "#0a7f5c", Contact: "office@rivers.example",
		Base: "/o/rivers"}
	ctx := views.WithBrand(lang.With(context.Background(), lang.New("de", language.Und)), brand)
	doc := render(t, ctx, model)

	if got := doc.Find("html").AttrOr("lang", ""); got != "de" {
		t.Errorf("html lang = %q, want de", got)
	}
	if got := doc.Find("[data-testid=brand-name]").Text(); got != brand.Name {
		t.Errorf("brand name = %q, want %q as text", got, brand.Name)
	}
	if n := doc.Find("script:not([src])").Length(); n != 0 {
		t.Errorf("%d inline scripts: the brand's name was not escaped", n)
	}
	var sheets []string
	doc.Find(`link[rel=stylesheet]`).Each(func(_ int, s *goquery.Selection) { sheets = append(sheets, s.AttrOr("href", "")) })
	if strings.Join(sheets, " ") != "/static/app.css /o/rivers/brand.css?c=0a7f5c" {
		t.Errorf("stylesheets %q, want the portal's and the organisation's accent under its address", sheets)
	}
	if got := doc.Find("[data-testid=brand-contact] a").AttrOr("href", ""); got != "mailto:office@rivers.example" {
		t.Errorf("contact link %q", got)
	}
	if doc.Find("[data-testid=error-message]").Text() != "No such page." || doc.Find("[data-testid=error-page] a").AttrOr("href", "") != "/o/rivers/" {
		t.Errorf("error page body: %q", doc.Find("[data-testid=error-page]").Text())
	}
	if doc.Find("title").Text() == "" || doc.Find("#main").Length() != 1 || doc.Find(`a[href="#main"]`).Length() != 1 {
		t.Error("the frame lacks its title, main region or skip link")
	}

	plain := render(t, lang.With(context.Background(), lang.New("en", language.Und)), model)
	if got := plain.Find("[data-testid=brand-name]").Text(); got == "" || got == brand.Name {
		t.Errorf("without a brand the name is %q, want the portal's own", got)
	}
	if plain.Find(`link[href*="brand.css"]`).Length() != 0 || plain.Find("[data-testid=brand-contact]").Length() != 0 {
		t.Error("without a brand the page still links an accent stylesheet or a contact")
	}
}
