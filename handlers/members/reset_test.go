package members_test

import (
	"net/url"
	"testing"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

func TestResetPages(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	c := env.BrowserLogin("demo")
	env.Post(c, "/membership/register/1/persons", url.Values{"person": {"2"}})
	confirm := env.Get(c, "/membership/register/1/reset")
	if confirm.TestID("confirm-reset").Length() != 1 || confirm.TestID("cancel-reset").AttrOr("href", "") != "/membership/register/1" {
		t.Fatalf("reset page:\n%s", confirm.Body)
	}
	handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/reset", url.Values{}), "/membership/register/1/persons")
	if state, _ := env.Get(c, "/membership/register/1").TestID("overview").Attr("data-state"); state != "new" {
		t.Fatalf("after reset: %q", state)
	}
}
