package staffview

import (
	"context"
	"strings"

	"portal/views/lang"
)

// MandateModel is a registration's SEPA mandate as staff see it.
type MandateModel struct {
	Reference, CreditorID, Holder, IBAN, BIC, Language, Signed, Version, Text string
	// Ended says when and why the mandate ended; "" while it holds.
	Ended string
	// RevokeAction is where staff revoke it (treasurers and
	// administrators, while it holds); "" otherwise. Registration is the
	// registration's id the form posts, to come back to its page.
	RevokeAction, Registration string
}

// MandateTexts label a mandate on the staff registration page.
type MandateTexts struct {
	Heading, Reference, CreditorID, Holder, IBAN, BIC, Language, Signed, Version, Text    string
	Ended, Revoke, RevokeHint, RevokeQuestion, RevokeDetail, RevokeYes, RevokeNo, Revoked string
	// EndReasons name engine.MandateEnd... (a return's reason code follows "return:").
	EndReasons map[string]string
}

// EndReason names why a mandate ended (engine.MandateEnd...), with a
// returned debit's reason code.
func (t *MandateTexts) EndReason(reason string) string {
	if code, ok := strings.CutPrefix(reason, "return:"); ok {
		return t.EndReasons["return:"] + " (" + code + ")"
	}
	if w, ok := t.EndReasons[reason]; ok {
		return w
	}
	return reason
}

// staffMandateTexts are the mandate labels in every language: the group staff_mandate of
// views/lang/locales/staff.<code>.json.
var staffMandateTexts = lang.LoadTexts[MandateTexts]("staff_mandate")

// MandateTextIn is the mandate labels in the language of ctx.
func MandateTextIn(ctx context.Context) *MandateTexts { return staffMandateTexts.In(ctx) }
