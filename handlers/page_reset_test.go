package handlers_test

import (
	"net/url"
	"testing"

	"portal/engine/dbtest"
)

func TestResetPages(t *testing.T) {
	env := newEnv(t, dbtest.SQLite(t))
	c := env.browserLogin("demo")
	env.post(c, "/membership/register/1/persons", url.Values{"person": {"2"}})
	confirm := env.get(c, "/membership/register/1/reset")
	if confirm.testid("confirm-reset").Length() != 1 || confirm.testid("cancel-reset").AttrOr("href", "") != "/membership/register/1" {
		t.Fatalf("reset page:\n%s", confirm.body)
	}
	expectRedirect(t, env.post(c, "/membership/register/1/reset", url.Values{}), "/membership/register/1/persons")
	if state, _ := env.get(c, "/membership/register/1").testid("overview").Attr("data-state"); state != "new" {
		t.Fatalf("after reset: %q", state)
	}
}
