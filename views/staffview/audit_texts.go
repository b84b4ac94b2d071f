package staffview

import (
	"context"
	"strings"
	"unicode"

	"portal/views/lang"
)

// AuditTexts are the texts of the audit log's filters and entries
// (the rest of the page is in Texts): who did what to which record,
// when, in words.
type AuditTexts struct {
	Filter, Actor, Action, Record, RecordID, From, Until, Apply, Reset, Any, Newest, CommandLine, Filtered string
	// Kinds of record.
	KindRegistration, KindStaff, KindOrganisation, KindPeriod, KindMembershipType, KindDefinition, KindInvitation,
	KindJob, KindBankCredit, KindWebhook, KindWebhookDelivery, KindAPIKey, KindPerson, KindDataRequest, KindDebitRun string
	// Words of a change.
	Yes, No, Empty2, Removed, RefundDue, RefundDone string
	// What a payment event recorded, and its outcome.
	EventBankTransfer, EventDebitReturn, EventDebitCollected, EventProviderCheck, EventOther                                        string
	OutcomeSuccess, OutcomePending, OutcomeFailed, OutcomeCancelled, OutcomeOpen, OutcomePartial, OutcomeSecondCredit, OutcomeOther string
}

// humanise writes a code as words: "order_status" and "orderStatus" as
// "Order status".
func humanise(code string) string {
	var b strings.Builder
	for i, r := range code {
		switch {
		case r == '_' || r == '-':
			b.WriteRune(' ')
		case unicode.IsUpper(r) && i > 0:
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	s := strings.TrimSpace(b.String())
	if s == "" {
		return code
	}
	rs := []rune(s)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

// staffAuditTexts are the audit log's texts in every language: the group staff_audit of
// views/lang/locales/staff.<code>.json.
var staffAuditTexts = lang.LoadTexts[AuditTexts]("staff_audit")

// AuditTextIn is the audit log's texts in the language of ctx.
func AuditTextIn(ctx context.Context) *AuditTexts { return staffAuditTexts.In(ctx) }

// auditActions name the audited actions (engine AuditEntry.Action), and
// auditFields the fields of changes, in every language: the groups
// audit_actions and audit_fields of views/lang/locales/staff.<code>.json.
var (
	auditActions = lang.LoadTexts[map[string]string]("audit_actions")
	auditFields  = lang.LoadTexts[map[string]string]("audit_fields")
)

// AuditActionIn names an audited action in the language of ctx (in
// English when it has no translation), in words made of its code when it
// is not known at all.
func AuditActionIn(ctx context.Context, action string) string {
	if w, ok := (*auditActions.In(ctx))[action]; ok {
		return w
	}
	return humanise(strings.ReplaceAll(action, ".", " "))
}

// AuditFieldIn names a changed field (its path "a.b" when nested) in the
// language of ctx; an unknown one in words made of its name.
func AuditFieldIn(ctx context.Context, field string) string {
	words := *auditFields.In(ctx)
	var parts []string
	for _, p := range strings.Split(field, ".") {
		if w, ok := words[p]; ok {
			parts = append(parts, w)
		} else {
			parts = append(parts, humanise(p))
		}
	}
	return strings.Join(parts, " › ")
}
