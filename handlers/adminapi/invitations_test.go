package adminapi_test

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
	"portal/handlers/handlertest"
)

func TestAdminInvitations(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{Invitations: handlertest.TestInvitations})
		write, _ := env.ApiKey(2, organisation.ScopeWrite)
		read, _ := env.ApiKey(2, organisation.ScopeRead)
		rowing, _ := env.ApiKey(1, organisation.ScopeWrite)
		const path = "/api/admin/periods/3/invitations"

		handlertest.ExpectHTTPError(t, env.Admin(read, http.MethodPost, path, map[string]any{"all": true}), http.StatusForbidden, path)
		bad := env.Admin(write, http.MethodPost, path, map[string]any{"all": true, "userKeys": []string{"demo"}, "expiresInHours": 100000})
		if e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, path); len(e.Errors) != 2 {
			t.Fatalf("want persons and expires: %s", bad.Body)
		}
		handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPost, "/api/admin/periods/1/invitations", map[string]any{"all": true}), http.StatusNotFound, "/api/admin/periods/1/invitations")
		if n, _ := db.NewSelect().Model((*invitation.Invitation)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("%d invitations after refusals", n)
		}

		res := env.Admin(write, http.MethodPost, path, map[string]any{"userKeys": []string{"demo", "stranger"}, "expiresInHours": 48})
		var rep struct {
			Created []handlertest.InvitationDTO `json:"created"`
			Skipped []struct {
				UserKey string `json:"userKey"`
				Reason  string `json:"reason"`
			} `json:"skipped"`
		}
		res.JSON(t, &rep)
		if res.Status != http.StatusCreated || len(rep.Created) != 1 || len(rep.Skipped) != 1 || rep.Skipped[0].UserKey != "stranger" {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		// The created invitation names the household's persons, as the list does.
		created := rep.Created[0].Persons
		link, err := url.Parse(rep.Created[0].Link)
		if err != nil || !strings.HasPrefix(link.Path, "/invite/") || link.Host != strings.TrimPrefix(env.Server.URL, "http://") {
			t.Fatalf("link %q", rep.Created[0].Link)
		}
		// The external system mails the link; the member opens it.
		c := env.NewClient()
		handlertest.ExpectRedirect(t, env.Get(c, link.Path), "/membership/register/3")

		var list []handlertest.InvitationDTO
		res = env.Admin(read, http.MethodGet, path, nil)
		res.JSON(t, &list)
		if res.Status != http.StatusOK || len(list) != 1 || list[0].State != "opened" || list[0].OpenedAt == nil || len(list[0].Persons) != 2 {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}
		if strings.Join(created, ",") != strings.Join(list[0].Persons, ",") {
			t.Fatalf("created with persons %q, listed with %q", created, list[0].Persons)
		}
		handlertest.ExpectHTTPError(t, env.Admin(rowing, http.MethodGet, path, nil, "Host", handlertest.RowingHost), http.StatusNotFound, path)

		revokePath := fmt.Sprintf("/api/admin/invitations/%d/revoke", list[0].ID)
		handlertest.ExpectHTTPError(t, env.Admin(rowing, http.MethodPost, revokePath, nil, "Host", handlertest.RowingHost), http.StatusNotFound, revokePath)
		var revoked handlertest.InvitationDTO
		res = env.Admin(write, http.MethodPost, revokePath, nil)
		res.JSON(t, &revoked)
		if res.Status != http.StatusOK || revoked.State != "revoked" || revoked.Link != "" {
			t.Fatalf("revoke: %d %s", res.Status, res.Body)
		}
		if p := env.Get(env.NewClient(), link.Path); p.Status != http.StatusGone {
			t.Fatalf("revoked link: %d", p.Status)
		}
	})
}
