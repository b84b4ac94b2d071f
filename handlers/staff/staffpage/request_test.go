package staffpage

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"portal/engine/staff"
	"portal/handlers/server"
)

// TestStaffContextComputedOncePerRequest follows a staff page request the
// way the payments page's statement upload goes: the staff check, then a
// handler that reads the member of staff and the organisation's paths
// again and again while it builds its page, the frame with its
// navigation, and an error page. The staff member is looked up once and
// the request's staff context computed once, whatever the page asks.
func TestStaffContextComputedOncePerRequest(t *testing.T) {
	computed := 0
	onNewRequest = func() { computed++ }
	t.Cleanup(func() { onNewRequest = nil })

	s := &Server{Server: &server.Server{}}
	lookups := 0
	id := int64(7)
	current := func(echo.Context) (*StaffUser, error) {
		lookups++
		return &StaffUser{OrganisationID: 3, StaffID: &id, Name: "Tess Treasurer", Email: "tess@example.org", Role: staff.RoleTreasurer}, nil
	}
	var first *Request
	page := func(c echo.Context) error {
		first = RequestOf(c)
		for range 4 {
			if u := StaffUserOf(c); u == nil || u.Email != "tess@example.org" {
				t.Fatalf("StaffUserOf = %+v, want the signed-in treasurer", u)
			}
		}
		for range 5 {
			if got := RequestOf(c).StaffPath("/payments"); got != "/staff/payments" {
				t.Fatalf("StaffPath = %q, want /staff/payments", got)
			}
		}
		if RequestOf(c) != first {
			t.Fatal("RequestOf returned another staff context within the same request")
		}
		ch := s.StaffChrome(c, "Payments")
		if ch.UserName != "Tess Treasurer" || len(ch.Nav) == 0 {
			t.Fatalf("chrome = %+v, want the treasurer's name and navigation", ch)
		}
		return s.StaffErrorPage(c, http.StatusConflict, "no bank account")
	}

	e := echo.New()
	for round := 1; round <= 3; round++ {
		req := httptest.NewRequest(http.MethodPost, "/staff/payments/statement", strings.NewReader(""))
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		if err := s.requireStaff(current, staff.RoleTreasurer, page)(c); err != nil {
			t.Fatal(err)
		}
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "no bank account") {
			t.Fatalf("status %d, body without the error page's message", rec.Code)
		}
		if lookups != round || computed != round {
			t.Fatalf("after %d requests: the staff member was looked up %d times and the staff context computed %d times, want %d each",
				round, lookups, computed, round)
		}
		if first.User == nil || first.User.OrganisationID != 3 || first.Texts == nil {
			t.Fatalf("staff context = %+v, want the treasurer of organisation 3 with the staff texts", first)
		}
	}
}

// TestStaffContextWithoutStaffCheck: a page outside the staff check (the
// sign-in and its errors) computes its staff context, without a member of
// staff, once too.
func TestStaffContextWithoutStaffCheck(t *testing.T) {
	computed := 0
	onNewRequest = func() { computed++ }
	t.Cleanup(func() { onNewRequest = nil })

	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/staff/login", nil), httptest.NewRecorder())
	if StaffUserOf(c) != nil {
		t.Fatal("StaffUserOf outside the staff check is not nil")
	}
	r := RequestOf(c)
	if r.User != nil || RequestOf(c) != r || computed != 1 {
		t.Fatalf("staff context %+v computed %d times, want one without a member of staff", r, computed)
	}
}
