package payments_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"
	"golang.org/x/text/language"

	"portal/engine"
	"portal/engine/banktransfer"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/report"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	"portal/views/lang"
)

// yearSeason is what a season's registrations brought, to compare the
// report with.
type yearSeason struct{ paid, income, outstanding int64 }

// seedYearSeason registers four households by bank transfer: two paid
// (one of them then refunded), one paid in part, one not at all; a
// membership type's name is a formula.
func seedYearSeason(t *testing.T, env *handlertest.StaffEnv, db *bun.DB) yearSeason {
	t.Helper()
	ctx := context.Background()
	if err := demodata.SeedDemo(ctx, db, 3, clock.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	bt, err := banktransfer.New(handlertest.StaffCreditor, func(ref string, amount int64) string {
		return server.PaymentLinks(env.Server.URL).PayLink("", ref, amount)
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := engine.NewService(db, bt)
	d := &enginetest.Demo{T: t, DB: db, Svc: svc}
	order := func(userKey string, persons ...int64) engine.Order {
		if len(persons) == 0 {
			if err := db.NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").Where("user_key = ?", userKey).Order("person_id").Scan(ctx, &persons); err != nil {
				t.Fatal(err)
			}
		}
		d.CommitAs(userKey, persons...)
		var o engine.Order
		if err := db.NewSelect().Model(&o).Where("user_key = ? AND status = ?", userKey, engine.OrderUnpaid).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		return o
	}
	capture := func(o engine.Order, amount int64) {
		if _, err := payment.Of(svc).CapturePayment(ctx, payment.Capture{Reference: o.PayReference, AmountMinor: amount}); err != nil {
			t.Fatal(err)
		}
	}
	var s yearSeason
	o0 := order(engine.DemoUserKey, 1, 3) // an adult and a junior
	capture(o0, o0.TotalMinor)
	o1 := order("demo-1")
	capture(o1, o1.TotalMinor)
	var p1 engine.Payment
	if err := db.NewSelect().Model(&p1).Where("order_id = ? AND status = ?", o1.ID, engine.PaymentSucceeded).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if err := staff.Of(svc).RefundPayment(ctx, engine.Actor{Name: "treasurer@example.org"}, 1, o1.ProcessInstanceID, p1.Reference, ""); err != nil {
		t.Fatal(err)
	}
	o2 := order("demo-2")
	capture(o2, 5000)
	o3 := order("demo-3")
	s.paid = o0.TotalMinor + o1.TotalMinor
	s.income = o0.TotalMinor + 5000
	s.outstanding = o2.TotalMinor - 5000 + o3.TotalMinor
	if _, err := db.NewUpdate().Model((*engine.MembershipType)(nil)).Set("name = ?", `=HYPERLINK("http://evil.example")`).Set("name_texts = ''").
		Where("id = 2").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStaffYearReport: the treasurer's year-end report as a page, a CSV
// and a PDF, whose totals (parsed back) equal the registrations made, in
// English and German; the staff navigation leads there; only treasurers
// and administrators see it.
func TestStaffYearReport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		want := seedYearSeason(t, env, db)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		en := lang.New("en", language.Und)
		period := "?period=" + "1"

		ov := env.Get(tr, "/staff")
		if href := ov.TestID("staff-nav").Find(`a[href="/staff/year-report"]`); href.Length() != 1 {
			t.Fatalf("the navigation does not lead to the report: %s", ov.TestID("staff-nav").Text())
		}
		p := env.Get(tr, "/staff/year-report"+period)
		if p.Status != http.StatusOK {
			t.Fatalf("page: %d %s", p.Status, p.Body)
		}
		figure := func(p handlertest.Page, table, label string) string {
			var v string
			p.TestID("year-report-" + table).Find(`[data-testid="year-report-row"]`).Each(func(_ int, r *goquery.Selection) {
				if strings.TrimSpace(r.Find("th").Text()) == label {
					v = r.Find("td").Last().AttrOr("data-value", "")
				}
			})
			return v
		}
		for _, c := range []struct{ table, label, want string }{
			{"summary", "Paid orders", engine.FormatAmount(want.paid)},
			{"summary", "Income", engine.FormatAmount(want.income)},
			{"summary", "Outstanding (open orders)", engine.FormatAmount(want.outstanding)},
			{"by-type", "Total", engine.FormatAmount(want.paid)},
			{"by-rule", "Total", engine.FormatAmount(want.paid)},
			{"by-method", "Bank transfer", engine.FormatAmount(want.income)},
			{"members-by-type", "Total", "9"}, // eight registered and Jamie, seeded
		} {
			if got := figure(p, c.table, c.label); got != c.want {
				t.Errorf("page %s %q: %q, want %q", c.table, c.label, got, c.want)
			}
		}
		if text := p.TestID("year-report-summary").Text(); !strings.Contains(text, en.Money(want.income, "EUR")) {
			t.Errorf("income not written as money: %s", text)
		}

		res := env.Get(tr, "/staff/year-report.csv"+period)
		recs, err := csv.NewReader(bytes.NewReader(res.Body)).ReadAll()
		if err != nil || res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("csv: %d %v %q", res.Status, err, res.Body)
		}
		for _, c := range []struct{ section, item, want string }{
			{"Summary", "Paid orders", engine.FormatAmount(want.paid)},
			{"Summary", "Income", engine.FormatAmount(want.income)},
			{"Summary", "Outstanding (open orders)", engine.FormatAmount(want.outstanding)},
			{"Paid orders by membership type", "Total", engine.FormatAmount(want.paid)},
		} {
			if got, _ := handlertest.CSVFigure(recs, c.section, c.item, "Amount"); got != c.want {
				t.Errorf("csv %s %q: %q, want %q", c.section, c.item, got, c.want)
			}
		}
		if _, ok := handlertest.CSVFigure(recs, "Members by membership type", `'=HYPERLINK("http://evil.example")`, "Total"); !ok {
			t.Errorf("the formula type name is not neutralised: %q", recs)
		}

		res = env.Get(tr, "/staff/year-report.pdf"+period)
		if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("pdf: %d %s", res.Status, res.Header.Get("Content-Type"))
		}
		text := handlertest.PDFText(t, res.Body)
		for _, w := range []string{"Riverside Rowing Club", "Year-end report", "Income", en.Money(want.income, "EUR"), en.Money(want.paid, "EUR"),
			en.Money(want.outstanding, "EUR"), "Bank transfer"} {
			if !strings.Contains(text, strings.ReplaceAll(w, "\u00a0", " ")) {
				t.Errorf("PDF lacks %q:\n%s", w, text)
			}
		}

		// In German: the page, the CSV and the PDF.
		handlertest.ExpectRedirect(t, env.Get(tr, "/staff/year-report?lang=de"), "/staff/year-report")
		de := lang.New("de", language.Und)
		p = env.Get(tr, "/staff/year-report"+period)
		if got := figure(p, "summary", "Einnahmen"); got != engine.FormatAmount(want.income) {
			t.Errorf("German page: income %q", got)
		}
		if text := p.TestID("year-report-summary").Text(); !strings.Contains(text, de.Money(want.income, "EUR")) {
			t.Errorf("German money: %s", text)
		}
		// A priced answer (the demo's accident insurance, taken by the
		// first person) is named in the page's language, as rules are.
		if rules := p.TestID("year-report-by-rule").Text(); !strings.Contains(rules, "Unfallversicherung") || strings.Contains(rules, "Accident insurance") {
			t.Errorf("German price rules: %s", rules)
		}
		recs, _ = csv.NewReader(bytes.NewReader(env.Get(tr, "/staff/year-report.csv"+period).Body)).ReadAll()
		if got, _ := handlertest.CSVFigure(recs, "Übersicht", "Einnahmen", "Betrag"); got != engine.FormatAmount(want.income) {
			t.Errorf("German csv income %q: %q", got, recs)
		}
		text = handlertest.PDFText(t, env.Get(tr, "/staff/year-report.pdf"+period).Body)
		if !strings.Contains(text, "Jahresbericht") || !strings.Contains(text, strings.ReplaceAll(de.Money(want.income, "EUR"), "\u00a0", " ")) {
			t.Errorf("German PDF:\n%s", text)
		}

		// And in French, the PDF too.
		handlertest.ExpectRedirect(t, env.Get(tr, "/staff/year-report?lang=fr"), "/staff/year-report")
		fr := lang.New("fr", language.Und)
		if got := figure(env.Get(tr, "/staff/year-report"+period), "summary", "Recettes"); got != engine.FormatAmount(want.income) {
			t.Errorf("French page: income %q", got)
		}
		text = handlertest.PDFText(t, env.Get(tr, "/staff/year-report.pdf"+period).Body)
		if !strings.Contains(text, "Rapport annuel") || !strings.Contains(text, "Restant dû") ||
			!strings.Contains(strings.ReplaceAll(text, "\u202f", " "), strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(fr.Money(want.outstanding, "EUR"))) {
			t.Errorf("French PDF (%s):\n%s", fr.Money(want.outstanding, "EUR"), text)
		}

		if p := env.Get(tr, "/staff/year-report?period=x"); p.Status != http.StatusBadRequest {
			t.Errorf("bad period: %d", p.Status)
		}
		if p := env.Get(tr, "/staff/year-report?period=999"); p.Status != http.StatusNotFound {
			t.Errorf("unknown period: %d", p.Status)
		}
		for _, r := range []staff.StaffRole{staff.RoleViewer, staff.RoleRegistrar} {
			env.AddStaff(string(r)+"@example.org", r)
			c := env.MustStaffSignIn(string(r)+"@example.org", "/staff")
			for _, path := range []string{"/staff/year-report", "/staff/year-report.csv", "/staff/year-report.pdf"} {
				if p := env.Get(c, path); p.Status != http.StatusForbidden {
					t.Errorf("%s %s: %d", r, path, p.Status)
				}
			}
		}
	})
}

// TestStaffYearReportRefundsTakenOff: in English, German and French the
// summary says refunds as amounts taken off the money received (a label
// that says so and the amount, never "less refunded EUR -258.50"), and the
// season overview's Received is the report's Money received: one
// definition, part payments included. Money by payment method takes the
// page's width, its figures labelled for the narrow layout.
func TestStaffYearReportRefundsTakenOff(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		seedYearSeason(t, env, db)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		r, err := report.Of(env.Engine).YearReport(t.Context(), 1, 1)
		if err != nil || r.RefundedMinor == 0 || r.PartialMinor == 0 {
			t.Fatalf("the season has no refund or part payment: %+v %v", r, err)
		}
		for _, tc := range []struct{ code, refunded, received string }{
			{"en", "Refunded (taken off)", "Money received"},
			{"de", "Erstattet (abgezogen)", "Eingegangenes Geld"},
			{"fr", "Remboursé (déduit)", "Argent reçu"},
		} {
			handlertest.ExpectRedirect(t, env.Get(tr, "/staff/year-report?lang="+tc.code), "/staff/year-report")
			l := lang.New(tc.code, language.Und)
			p := env.Get(tr, "/staff/year-report?period=1")
			var refunded, received *goquery.Selection
			p.TestID("year-report-summary").Find(`[data-testid="year-report-row"]`).Each(func(_ int, row *goquery.Selection) {
				switch strings.TrimSpace(row.Find("th").Text()) {
				case tc.refunded:
					refunded = row
				case tc.received:
					received = row
				}
			})
			if refunded == nil || received == nil {
				t.Fatalf("%s: no rows %q and %q: %s", tc.code, tc.refunded, tc.received, p.TestID("year-report-summary").Text())
			}
			cell := refunded.Find("td").Last()
			if cell.AttrOr("data-value", "") != engine.FormatAmount(r.RefundedMinor) || strings.TrimSpace(cell.Text()) != l.Money(r.RefundedMinor, "EUR") {
				t.Errorf("%s: refunded %q (%s), want %s", tc.code, cell.Text(), cell.AttrOr("data-value", ""), l.Money(r.RefundedMinor, "EUR"))
			}
			if strings.Contains(p.TestID("year-report-summary").Text(), "-") && strings.Contains(p.TestID("year-report-summary").Text(), l.Money(-r.RefundedMinor, "EUR")) {
				t.Errorf("%s: a refund as a negative amount: %s", tc.code, p.TestID("year-report-summary").Text())
			}
			// Money by payment method takes the page's width and, below a
			// tablet's, shows each figure under its column's name.
			byMethod := p.TestID("year-report-by-method")
			heads := byMethod.Find("thead th")
			if !byMethod.HasClass("lg:col-span-2") || heads.Length() != 6 {
				t.Errorf("%s: money by payment method is not laid out wide: %s", tc.code, byMethod.AttrOr("class", ""))
			}
			byMethod.Find(`[data-testid="year-report-row"]`).Each(func(_ int, row *goquery.Selection) {
				row.Find("td").Each(func(i int, td *goquery.Selection) {
					if want := strings.TrimSpace(heads.Eq(i + 1).Text()); td.AttrOr("data-label", "") != want {
						t.Errorf("%s: figure %d of %q under %q, want %q", tc.code, i+1, row.Find("th").Text(), td.AttrOr("data-label", ""), want)
					}
				})
			})
			ov := env.Get(tr, "/staff?period=1")
			if got, want := strings.TrimSpace(ov.TestID("money-received").Text()), strings.TrimSpace(received.Find("td").Last().Text()); got != want {
				t.Errorf("%s: the overview's Received %q, the report's Money received %q", tc.code, got, want)
			}
		}
	})
}
