package adminapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/invitation"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/registration"
	"portal/engine/staff"
	"portal/handlers"
	"portal/handlers/adminapi"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	staffpages "portal/handlers/staff"
	"portal/relay/session"
)

// mountedAdminRoutes are the admin API's routes as the router has them,
// "METHOD /api/admin/path", every optional route on.
func mountedAdminRoutes(mutating bool) []string {
	e := handlers.New(handlers.Deps{Gateway: &payment.TestGateway{}})
	var out []string
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, server.AdminPrefix+"/") || r.Method == echoRouteNotFound {
			continue
		}
		if mutating && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			continue
		}
		if k := r.Method + " " + r.Path; !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// echoRouteNotFound is the method echo lists for its own catch-all entries.
const echoRouteNotFound = "echo_route_not_found"

// auditStep is one change through the admin API: its route as mounted,
// the request (built when it runs, from what earlier steps made) and the
// status it must answer.
type auditStep struct {
	route   string
	request func(t *testing.T) (path string, body any)
	status  int
	check   func(t *testing.T, rec engine.AuditRecord)
}

// Every change made through the admin API is in the audit log, written
// with the change, naming the staff member of a staff session or the key
// (name and id), its secrets as fingerprints only: one step per mutating
// route of the router, so a route added without its audit fails here.
func TestAdminAPIChangesAreAudited(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		t.Run("staff session", func(t *testing.T) { runAuditSteps(t, db, "staff session") })
		t.Run("API key", func(t *testing.T) { // on a database of its own, of the same kind
			if db.Dialect().Name() == dialect.PG {
				runAuditSteps(t, dbtest.Postgres(t), "API key")
			} else {
				runAuditSteps(t, dbtest.SQLite(t), "API key")
			}
		})
	})
}

func runAuditSteps(t *testing.T, db *bun.DB, kind string) {
	kr, err := session.NewKeyring([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	env := handlertest.NewStaffEnv(t, db, handlertest.Options{Invitations: handlertest.TestInvitations, HashSecrets: kr.Sealer("organisation hash secret")})
	var who handlertest.AdminCaller
	switch kind {
	case "staff session":
		m := env.AddStaff("admin@example.org", staff.RoleAdmin)
		who = handlertest.AdminCaller{C: env.MustStaffSignIn("admin@example.org", "/staff"), Actor: func(r engine.AuditRecord) bool {
			return r.Actor == "admin@example.org" && r.StaffID != nil && *r.StaffID == m.ID
		}}
	default:
		key, id := env.ApiKey(1, organisation.ScopeWrite)
		who = handlertest.AdminCaller{C: env.NewClient(), Key: key, Headers: []string{"Authorization", "Bearer " + key}, Actor: func(r engine.AuditRecord) bool {
			return r.StaffID == nil && strings.HasPrefix(r.Actor, fmt.Sprintf("API key test (id %d, ", id))
		}}
	}
	const secret = "a-new-hash-secret-of-the-club"
	var typeID, periodID, invitationID, webhookID, deliveryID, runID int64
	var orderRef, paymentRef string
	var f *registration.Form
	idOf := func(t *testing.T, res handlertest.Response) int64 {
		var v struct{ ID int64 }
		res.JSON(t, &v)
		return v.ID
	}
	steps := []auditStep{
		{route: "PATCH /api/admin/payment-settings", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/payment-settings", map[string]any{"provider": "bank_transfer", "bankCreditorName": "Riverside Rowing Club", "bankIban": "AT61 1904 3002 3457 3201"}
		}, check: func(t *testing.T, r engine.AuditRecord) {
			if !strings.Contains(r.AfterJSON, "AT611904300234573201") {
				t.Errorf("the new account is not in the entry: %s", r.AfterJSON)
			}
		}},
		{route: "PATCH /api/admin/organisation", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/organisation", map[string]any{"contactEmail": "desk@rowing.example", "hashSecret": secret}
		}, check: func(t *testing.T, r engine.AuditRecord) {
			if !strings.Contains(r.AfterJSON, "desk@rowing.example") || !strings.Contains(r.AfterJSON, `"hashSecret":"set `) || strings.Contains(r.AfterJSON+r.BeforeJSON, secret) {
				t.Errorf("entry %s: want the address and the secret's fingerprint only", r.AfterJSON)
			}
		}},
		{route: "POST /api/admin/persons/import", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/persons/import", map[string]any{"persons": []map[string]any{{"externalId": "ext-audit-1", "firstName": "Ada",
				"lastName": "Audit", "dateOfBirth": "1990-01-02", "email": "ada@example.org"}}}
		}},
		{route: "POST /api/admin/persons/unlink", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/persons/unlink", map[string]any{"links": []map[string]any{{"externalId": "ext-audit-1", "userKey": "nobody"}}}
		}},
		{route: "POST /api/admin/membership-types", status: http.StatusCreated, request: func(*testing.T) (string, any) {
			return "/api/admin/membership-types", map[string]any{"code": "AUDIT", "name": "Audited"}
		}},
		{route: "PATCH /api/admin/membership-types/:id", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/membership-types/%d", typeID), map[string]any{"name": "Audited twice"}
		}},
		{route: "DELETE /api/admin/membership-types/:id", status: http.StatusNoContent, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/membership-types/%d", typeID), nil
		}},
		{route: "POST /api/admin/definitions", status: http.StatusCreated, request: func(t *testing.T) (string, any) {
			v1 := env.Call(who, http.MethodGet, "/api/admin/definitions/membership/versions/1", nil)
			var spec map[string]any
			v1.JSON(t, &spec)
			spec["name"] = "Membership, audited edition"
			return "/api/admin/definitions", spec
		}},
		{route: "POST /api/admin/definitions/:key/versions/:version/deactivate", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/definitions/membership/versions/1/deactivate", nil
		}},
		{route: "POST /api/admin/definitions/:key/versions/:version/activate", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/definitions/membership/versions/1/activate", nil
		}},
		{route: "POST /api/admin/periods", status: http.StatusCreated, request: func(*testing.T) (string, any) {
			return "/api/admin/periods", map[string]any{"name": "Audit 2031", "startDate": "2031-01-01", "endDate": "2031-12-31", "currency": "EUR", "definitionKey": "membership"}
		}},
		{route: "PATCH /api/admin/periods/:id", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/periods/%d", periodID), map[string]any{"name": "Audit 2031 renamed"}
		}},
		{route: "PUT /api/admin/periods/:id/price-rules", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/periods/%d/price-rules", periodID), map[string]any{"rules": []any{}}
		}},
		{route: "POST /api/admin/periods/:id/invitations", status: http.StatusCreated, request: func(*testing.T) (string, any) {
			return "/api/admin/periods/1/invitations", map[string]any{"userKeys": []string{engine.DemoUserKey}}
		}},
		{route: "POST /api/admin/invitations/:id/revoke", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/invitations/%d/revoke", invitationID), nil
		}},
		{route: "POST /api/admin/webhooks", status: http.StatusCreated, request: func(*testing.T) (string, any) {
			return "/api/admin/webhooks", map[string]any{"url": "https://club.example/hooks", "events": []string{"payment.succeeded"}}
		}, check: func(t *testing.T, r engine.AuditRecord) {
			if strings.Contains(r.AfterJSON, "whsec_") {
				t.Errorf("the signing secret is in the entry: %s", r.AfterJSON)
			}
		}},
		{route: "PATCH /api/admin/webhooks/:id", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/webhooks/%d", webhookID), map[string]any{"active": true}
		}},
		{route: "POST /api/admin/webhooks/:id/rotate-secret", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/webhooks/%d/rotate-secret", webhookID), nil
		}},
		{route: "POST /api/admin/webhooks/:id/deliveries/:delivery/replay", status: http.StatusAccepted, request: func(t *testing.T) (string, any) {
			ctx := context.Background()
			if _, err := env.DB.ExecContext(ctx, "INSERT INTO webhook_events (public_id, organisation_id, type, body, created_at) VALUES (?, 1, ?, ?, ?)",
				"evt_audit", engine.EventRegistrationCommitted, `{"id":"evt_audit"}`, clock.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := env.DB.ExecContext(ctx, "INSERT INTO webhook_deliveries (event_id, endpoint_id, job_key, status, attempts, created_at) "+
				"SELECT id, ?, 'webhook:evt_audit', ?, 1, ? FROM webhook_events WHERE public_id = 'evt_audit'", webhookID, engine.DeliveryDelivered, clock.Now()); err != nil {
				t.Fatal(err)
			}
			if err := env.DB.NewSelect().Table("webhook_deliveries").Column("id").Where("job_key = 'webhook:evt_audit'").Scan(ctx, &deliveryID); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("/api/admin/webhooks/%d/deliveries/%d/replay", webhookID, deliveryID), nil
		}},
		{route: "DELETE /api/admin/webhooks/:id", status: http.StatusNoContent, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/webhooks/%d", webhookID), nil
		}},
		{route: "POST /api/admin/payments/:reference/capture", status: http.StatusOK, request: func(t *testing.T) (string, any) {
			// A registration paying by bank transfer (the settings' first step).
			svc := engine.NewService(env.DB, env.Gateway, handlertest.OrganisationPayments(env.DB, handlertest.Options{}, env.Gateway)...)
			f = (&enginetest.Demo{T: t, DB: env.DB, Svc: svc}).Commit(2)
			u, err := url.Parse(f.PaymentURL)
			if err != nil {
				t.Fatal(err)
			}
			orderRef = strings.TrimPrefix(u.Path, "/pay/")
			return "/api/admin/payments/" + orderRef + "/capture", map[string]any{"amount": "1.00", "date": "2026-11-20", "note": "first part"}
		}},
		{route: "POST /api/admin/payments/:reference/refunded", status: http.StatusOK, request: func(t *testing.T) (string, any) {
			// The member resets; the whole transfer arrives anyway: owed back by hand.
			var p engine.Payment
			if err := env.DB.NewSelect().Model(&p).Where("provider = 'bank_transfer'").Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
				t.Fatal(err)
			}
			paymentRef = p.Reference
			svc := engine.NewService(env.DB, env.Gateway, handlertest.OrganisationPayments(env.DB, handlertest.Options{}, env.Gateway)...)
			if _, err := registration.Of(svc).Reset(context.Background(), engine.DemoUserKey, f.ProcessIDString()); err != nil {
				t.Fatal(err)
			}
			if res := env.Call(who, http.MethodPost, "/api/admin/payments/"+orderRef+"/capture", map[string]any{"amount": engine.FormatAmount(p.AmountMinor), "id": "credit-2"}); res.Status != http.StatusOK {
				t.Fatalf("the whole transfer: %d %s", res.Status, res.Body)
			}
			return "/api/admin/payments/" + paymentRef + "/refunded", map[string]any{"note": "transferred back"}
		}},
		{route: "POST /api/admin/debit-runs", status: http.StatusCreated, request: func(t *testing.T) (string, any) {
			// The club collects by direct debit too; the household gives a mandate.
			svc := engine.NewService(env.DB, env.Gateway, handlertest.OrganisationPayments(env.DB, handlertest.Options{}, env.Gateway)...)
			ci := "DE98ZZZ09999999999"
			if _, err := settings.Of(svc).SetPaymentSettings(context.Background(), 1, settings.PaymentSettingsChange{DebitCreditorID: &ci,
				Methods: &[]string{payment.BankTransferProvider, payment.DirectDebitProvider}}); err != nil {
				t.Fatal(err)
			}
			(&enginetest.Demo{T: t, DB: env.DB, Svc: svc}).CommitPayingBy(payment.DirectDebitProvider, engine.DemoUserKey, 2)
			var o engine.Order
			if err := env.DB.NewSelect().Model(&o).Where("payment_method = ?", payment.DirectDebitProvider).Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := directdebit.Of(svc).GiveMandate(context.Background(), o.PayReference, directdebit.MandateInput{Holder: "Sam Example", IBAN: "DE02120300000000202051", Consent: true}); err != nil {
				t.Fatal(err)
			}
			return "/api/admin/debit-runs", map[string]any{"until": clock.Now().AddDate(0, 2, 0).Format(time.DateOnly)}
		}, check: func(t *testing.T, e engine.AuditRecord) {
			if e.Action != "debit_run.create" || !strings.Contains(e.AfterJSON, `"debits":1`) {
				t.Errorf("collection run entry: %+v", e)
			}
		}},
		{route: "POST /api/admin/debit-runs/:id/cancel", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return fmt.Sprintf("/api/admin/debit-runs/%d/cancel", runID), nil
		}},
		{route: "POST /api/admin/debit-runs/:id/sent", status: http.StatusOK, request: func(t *testing.T) (string, any) {
			res := env.Call(who, http.MethodPost, "/api/admin/debit-runs", map[string]any{"until": clock.Now().AddDate(0, 2, 0).Format(time.DateOnly)})
			if res.Status != http.StatusCreated {
				t.Fatalf("a second run: %d %s", res.Status, res.Body)
			}
			return fmt.Sprintf("/api/admin/debit-runs/%d/sent", idOf(t, res)), nil
		}, check: func(t *testing.T, e engine.AuditRecord) {
			if e.Action != "debit_run.send" || !strings.Contains(e.AfterJSON, `"debits":1`) {
				t.Errorf("run sent entry: %+v", e)
			}
		}},
		{route: "POST /api/admin/persons/:id/erase", status: http.StatusOK, request: func(*testing.T) (string, any) {
			return "/api/admin/persons/3/erase", map[string]any{"force": true} // personal_data.go
		}, check: func(t *testing.T, e engine.AuditRecord) {
			if e.Action != "person.erase" || e.TargetID != "3" {
				t.Errorf("erasure entry: %+v", e)
			}
		}},
	}
	// What each step made, for the steps after it.
	made := map[string]func(t *testing.T, res handlertest.Response){
		"POST /api/admin/membership-types": func(t *testing.T, res handlertest.Response) { typeID = idOf(t, res) },
		"POST /api/admin/periods":          func(t *testing.T, res handlertest.Response) { periodID = idOf(t, res) },
		"POST /api/admin/webhooks":         func(t *testing.T, res handlertest.Response) { webhookID = idOf(t, res) },
		"POST /api/admin/debit-runs":       func(t *testing.T, res handlertest.Response) { runID = idOf(t, res) },
		"POST /api/admin/periods/:id/invitations": func(t *testing.T, res handlertest.Response) {
			var rep struct{ Created []struct{ ID int64 } }
			if res.JSON(t, &rep); len(rep.Created) != 1 {
				t.Fatalf("invitations: %s", res.Body)
			}
			invitationID = rep.Created[0].ID
		},
	}

	var covered []string
	for _, step := range steps {
		covered = append(covered, step.route)
		before := lastAuditID(t, env.DB)
		method, _, _ := strings.Cut(step.route, " ")
		path, body := step.request(t)
		res := env.Call(who, method, path, body)
		if res.Status != step.status {
			t.Fatalf("%s: %d %s, want %d", step.route, res.Status, res.Body, step.status)
		}
		if m := made[step.route]; m != nil {
			m(t, res)
		}
		var entries []engine.AuditRecord
		if err := env.DB.NewSelect().Model(&entries).Where("id > ?", before).Order("id ASC").Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			t.Errorf("%s: not audited", step.route)
			continue
		}
		for _, e := range entries {
			if !who.Actor(e) || e.OrganisationID != 1 {
				t.Errorf("%s: entry %q by %q (staff %v) of organisation %d, want the %s", step.route, e.Action, e.Actor, e.StaffID, e.OrganisationID, kind)
			}
			// Secrets only as fingerprints: no hash secret, signing secret or key.
			for _, leak := range []string{secret, "whsec_", "ptl_" + strings.TrimPrefix(who.Key, "ptl_")} {
				if leak != "ptl_" && strings.Contains(e.Actor+e.BeforeJSON+e.AfterJSON, leak) {
					t.Errorf("%s: entry %q holds a secret: %s %s %s", step.route, e.Action, e.Actor, e.BeforeJSON, e.AfterJSON)
				}
			}
		}
		if step.check != nil {
			step.check(t, entries[len(entries)-1])
		}
	}
	for _, r := range mountedAdminRoutes(true) {
		if !slices.Contains(covered, r) {
			t.Errorf("%s changes something and has no audit step here", r)
		}
	}
}

func lastAuditID(t *testing.T, db *bun.DB) int64 {
	t.Helper()
	var id int64
	if err := db.NewSelect().Model((*engine.AuditRecord)(nil)).ColumnExpr("COALESCE(MAX(id), 0)").Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// Every admin API route has its row in the role table, and every row's
// page is a staff route: the API's staff roles are the pages'.
func TestAdminRoutesTableIsComplete(t *testing.T) {
	rows := map[string]adminapi.AdminRoute{}
	for _, r := range adminapi.AdminRoutes() {
		rows[r.Method+" "+server.AdminPrefix+r.Path] = r
		if r.Page == "" {
			continue
		}
		found := false
		for _, p := range staffpages.StaffRoutes() {
			found = found || p.Method+" "+p.Path == r.Page
		}
		if !found {
			t.Errorf("%s %s: its page %q is no staff route", r.Method, r.Path, r.Page)
		}
	}
	for _, r := range mountedAdminRoutes(false) {
		if _, ok := rows[r]; !ok {
			t.Errorf("%s has no row in AdminRoutes", r)
		}
		delete(rows, r)
	}
	for k := range rows {
		t.Errorf("AdminRoutes names %s, which is not mounted", k)
	}
}

// A staff session gets through the admin API exactly what its role gets
// on the pages: every route × every role. A registrar neither exports
// the registrations (403, as registrations.csv) nor reads live invitation
// links, which no list shows to anyone.
func TestAdminAPIRolesArePagesRoles(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{Invitations: handlertest.TestInvitations})
		callers := map[staff.StaffRole]*http.Client{}
		for _, r := range staff.StaffRoles {
			email := string(r) + "@example.org"
			env.AddStaff(email, r)
			callers[r] = env.MustStaffSignIn(email, "/staff")
		}
		if _, err := invitation.Of(env.Engine).CreateInvitations(context.Background(), engine.CommandLine, 1, invitation.Request{PeriodID: 1,
			UserKeys: []string{engine.DemoUserKey}}); err != nil {
			t.Fatal(err)
		}
		for _, route := range adminapi.AdminRoutes() {
			path := server.AdminPrefix + route.Path
			if route.Example != "" {
				path = server.AdminPrefix + route.Example
			}
			var body any
			if route.Method != http.MethodGet && route.Method != http.MethodDelete {
				body = map[string]any{}
			}
			for _, role := range staff.StaffRoles {
				res := env.Do(callers[role], route.Method, path, body, "Origin", env.Server.URL)
				allowed := role.AtLeast(route.Min())
				switch {
				case !allowed && res.Status != http.StatusForbidden:
					t.Errorf("%s %s as %s: %d, want 403 (least role %s)", route.Method, path, role, res.Status, route.Min())
				case allowed && (res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden || res.Status >= 500):
					t.Errorf("%s %s as %s: %d %s, want in (least role %s)", route.Method, path, role, res.Status, res.Body, route.Min())
				}
			}
		}

		// Fixed expectations beside the table: a wrong Page mapping in
		// AdminRoutes would move a route's least role with the table, and
		// the matrix above alone would follow it.
		fixed := map[string]staff.StaffRole{
			"GET /periods/:id/export/:kind":     staff.RoleTreasurer,
			"POST /periods/:id/invitations":     staff.RoleAdmin,
			"GET /organisation":                 staff.RoleAdmin,
			"PATCH /organisation":               staff.RoleAdmin,
			"GET /payment-settings":             staff.RoleAdmin,
			"PATCH /payment-settings":           staff.RoleAdmin,
			"POST /payments/:reference/capture": staff.RoleTreasurer,
			"POST /persons/unlink":              staff.RoleAdmin,
		}
		for _, route := range adminapi.AdminRoutes() {
			if want, ok := fixed[route.Method+" "+route.Path]; ok {
				if got := route.Min(); got != want {
					t.Errorf("%s %s: least role %s, want %s", route.Method, route.Path, got, want)
				}
				delete(fixed, route.Method+" "+route.Path)
			}
		}
		for r := range fixed {
			t.Errorf("no admin route %s", r)
		}

		registrar := callers[staff.RoleRegistrar]
		if res := env.Do(registrar, http.MethodGet, "/api/admin/periods/1/export/registrations", nil); res.Status != http.StatusForbidden {
			t.Errorf("registrar's export of the registrations: %d, want 403 as on /staff/registrations.csv", res.Status)
		}
		if res := env.Get(registrar, "/staff/registrations.csv"); res.Status != http.StatusForbidden {
			t.Errorf("registrar's registrations.csv: %d", res.Status)
		}
		key, _ := env.ApiKey(1, organisation.ScopeRead)
		for name, res := range map[string]handlertest.Response{
			"registrar": env.Do(registrar, http.MethodGet, "/api/admin/periods/1/invitations", nil),
			"admin":     env.Do(callers[staff.RoleAdmin], http.MethodGet, "/api/admin/periods/1/invitations", nil),
			"key":       env.Do(env.NewClient(), http.MethodGet, "/api/admin/periods/1/invitations", nil, "Authorization", "Bearer "+key),
		} {
			var list []map[string]any
			res.JSON(t, &list)
			if res.Status != http.StatusOK || len(list) != 1 {
				t.Fatalf("invitations as %s: %d %s", name, res.Status, res.Body)
			}
			if _, ok := list[0]["link"]; ok || strings.Contains(string(res.Body), "/invite/") {
				t.Errorf("the list shows %s the live link: %s", name, res.Body)
			}
		}
	})
}
