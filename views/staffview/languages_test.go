package staffview

import (
	"context"
	"testing"

	"golang.org/x/text/language"

	"portal/views/lang"
)

// TestStaffTextsFollowTheLanguage: the request's language chooses the
// texts; without one, or in a language without staff texts, English.
func TestStaffTextsFollowTheLanguage(t *testing.T) {
	in := func(code string) context.Context {
		return lang.With(context.Background(), lang.New(code, language.Und))
	}
	for _, tc := range []struct {
		ctx              context.Context
		signOut, payment string
	}{
		{context.Background(), "Sign out", "Payments"},
		{in("en"), "Sign out", "Payments"},
		{in("de"), "Abmelden", "Zahlungen"},
		{in("fr"), "Se déconnecter", "Paiements"},
	} {
		if got := TextIn(tc.ctx).SignOut; got != tc.signOut {
			t.Errorf("SignOut %q, want %q", got, tc.signOut)
		}
		if got := OpsTextIn(tc.ctx).NavPayments; got != tc.payment {
			t.Errorf("NavPayments %q, want %q", got, tc.payment)
		}
	}
}
