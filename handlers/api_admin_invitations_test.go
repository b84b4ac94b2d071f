package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/invitation"
	"portal/engine/organisation"
	"portal/handlers/adminapi"
)

type invitationDTO struct {
	ID       int64    `json:"id"`
	UserKey  string   `json:"userKey"`
	State    string   `json:"state"`
	Link     string   `json:"link"`
	Persons  []string `json:"persons"`
	OpenedAt *string  `json:"openedAt"`
}

func TestAdminInvitations(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{invitations: testInvitations})
		write, _ := env.apiKey(2, organisation.ScopeWrite)
		read, _ := env.apiKey(2, organisation.ScopeRead)
		rowing, _ := env.apiKey(1, organisation.ScopeWrite)
		const path = "/api/admin/periods/3/invitations"

		expectHTTPError(t, env.admin(read, http.MethodPost, path, map[string]any{"all": true}), http.StatusForbidden, path)
		bad := env.admin(write, http.MethodPost, path, map[string]any{"all": true, "userKeys": []string{"demo"}, "expiresInHours": 100000})
		if e := expectHTTPError(t, bad, http.StatusUnprocessableEntity, path); len(e.Errors) != 2 {
			t.Fatalf("want persons and expires: %s", bad.body)
		}
		expectHTTPError(t, env.admin(write, http.MethodPost, "/api/admin/periods/1/invitations", map[string]any{"all": true}), http.StatusNotFound, "/api/admin/periods/1/invitations")
		if n, _ := db.NewSelect().Model((*invitation.Invitation)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("%d invitations after refusals", n)
		}

		res := env.admin(write, http.MethodPost, path, map[string]any{"userKeys": []string{"demo", "stranger"}, "expiresInHours": 48})
		var rep struct {
			Created []invitationDTO `json:"created"`
			Skipped []struct {
				UserKey string `json:"userKey"`
				Reason  string `json:"reason"`
			} `json:"skipped"`
		}
		res.json(t, &rep)
		if res.status != http.StatusCreated || len(rep.Created) != 1 || len(rep.Skipped) != 1 || rep.Skipped[0].UserKey != "stranger" {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
		// The created invitation names the household's persons, as the list does.
		created := rep.Created[0].Persons
		link, err := url.Parse(rep.Created[0].Link)
		if err != nil || !strings.HasPrefix(link.Path, "/invite/") || link.Host != strings.TrimPrefix(env.srv.URL, "http://") {
			t.Fatalf("link %q", rep.Created[0].Link)
		}
		// The external system mails the link; the member opens it.
		c := env.newClient()
		expectRedirect(t, env.get(c, link.Path), "/membership/register/3")

		var list []invitationDTO
		res = env.admin(read, http.MethodGet, path, nil)
		res.json(t, &list)
		if res.status != http.StatusOK || len(list) != 1 || list[0].State != "opened" || list[0].OpenedAt == nil || len(list[0].Persons) != 2 {
			t.Fatalf("list: %d %s", res.status, res.body)
		}
		if strings.Join(created, ",") != strings.Join(list[0].Persons, ",") {
			t.Fatalf("created with persons %q, listed with %q", created, list[0].Persons)
		}
		expectHTTPError(t, env.admin(rowing, http.MethodGet, path, nil, "Host", rowingHost), http.StatusNotFound, path)

		revokePath := fmt.Sprintf("/api/admin/invitations/%d/revoke", list[0].ID)
		expectHTTPError(t, env.admin(rowing, http.MethodPost, revokePath, nil, "Host", rowingHost), http.StatusNotFound, revokePath)
		var revoked invitationDTO
		res = env.admin(write, http.MethodPost, revokePath, nil)
		res.json(t, &revoked)
		if res.status != http.StatusOK || revoked.State != "revoked" || revoked.Link != "" {
			t.Fatalf("revoke: %d %s", res.status, res.body)
		}
		if p := env.get(env.newClient(), link.Path); p.status != http.StatusGone {
			t.Fatalf("revoked link: %d", p.status)
		}
	})
}

// checkInvitationResponses produces every documented response of the
// invitation operations, for TestOpenAPIResponses (organisation 1's keys;
// period 1 is open, period 2 closed).
func checkInvitationResponses(t *testing.T, ck *apiChecker, anon *http.Client, write, read string, crossSite []string) {
	t.Helper()
	invs := "/api/admin/periods/1/invitations"
	created := ck.conforming(anon, http.MethodPost, invs, map[string]any{"userKeys": []string{"demo-2", "nobody"}, "send": true}, bearerOf(write)...)
	wantStatus(t, created, http.StatusCreated)
	var rep struct{ Created []invitationDTO }
	created.json(t, &rep)
	wantStatus(t, ck.conforming(anon, http.MethodPost, invs, map[string]any{}, bearerOf(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/periods/2/invitations", map[string]any{"all": true}, bearerOf(write)...), http.StatusConflict)
	wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/periods/999/invitations", map[string]any{"all": true}, bearerOf(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPost, invs, `{"all":`, bearerOf(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, invs, "x", bearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, invs, `{"userKeys":["`+strings.Repeat("k", adminapi.MaxBulkBytes)+`"]}`, bearerOf(write)...), http.StatusRequestEntityTooLarge)
	wantStatus(t, ck.do(anon, http.MethodPost, invs, map[string]any{"all": true}, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, invs, map[string]any{"all": true}, bearerOf(write, crossSite...)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, invs, map[string]any{"all": true}), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodGet, invs, nil, bearerOf(read)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/periods/999/invitations", nil, bearerOf(read)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodGet, invs, nil), http.StatusUnauthorized)

	revoke := fmt.Sprintf("/api/admin/invitations/%d/revoke", rep.Created[0].ID)
	wantStatus(t, ck.conforming(anon, http.MethodPost, revoke, nil, bearerOf(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/invitations/999/revoke", nil, bearerOf(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPost, revoke, nil, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, revoke, nil), http.StatusUnauthorized)
}

// bearerOf is the Authorization header of an admin API key, with more headers.
func bearerOf(key string, more ...string) []string {
	return append([]string{"Authorization", "Bearer " + key}, more...)
}
