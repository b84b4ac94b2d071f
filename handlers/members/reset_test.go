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
	if confirm.Testid("confirm-reset").Length() != 1 || confirm.Testid("cancel-reset").AttrOr("href", "") != "/membership/register/1" {
		t.Fatalf("reset page:\n%s", confirm.Body)
	}
	handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/reset", url.Values{}), "/membership/register/1/persons")
	if state, _ := env.Get(c, "/membership/register/1").Testid("overview").Attr("data-state"); state != "new" {
		t.Fatalf("after reset: %q", state)
	}
}
