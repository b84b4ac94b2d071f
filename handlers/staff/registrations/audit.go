package registrations

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/directdebit"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// auditPath is the audit log below StaffPrefix.
const auditPath = "/audit"

// auditPageSize is how many entries a page of the audit log shows.
const auditPageSize = 50

func staffAuditTextIn(c echo.Context) *staffview.AuditTexts {
	return staffview.AuditTextIn(c.Request().Context())
}

// auditQuery reads the log's filters from the query string; ok is false
// when one does not parse.
func auditQuery(c echo.Context, orgID int64) (q engine.AuditQuery, ok bool) {
	q = engine.AuditQuery{OrganisationID: orgID, Limit: auditPageSize, Actor: strings.TrimSpace(c.QueryParam("actor")),
		Action: strings.TrimSpace(c.QueryParam("action")), TargetType: strings.TrimSpace(c.QueryParam("record")),
		TargetID: strings.TrimSpace(c.QueryParam("record_id"))}
	for _, v := range []string{q.Actor, q.Action, q.TargetType, q.TargetID} {
		if len(v) > 200 {
			return q, false
		}
	}
	if raw := c.QueryParam("before"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			return q, false
		}
		q.BeforeID = n
	}
	for name, dst := range map[string]*time.Time{"from": &q.From, "until": &q.Until} {
		raw := strings.TrimSpace(c.QueryParam(name))
		if raw == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, raw)
		if err != nil {
			return q, false
		}
		*dst = d
	}
	if !q.Until.IsZero() {
		q.Until = q.Until.AddDate(0, 0, 1) // until a day: to its end
	}
	return q, true
}

// auditURL is the log's address with q's filters, from before (0: the
// newest).
func auditURL(c echo.Context, q engine.AuditQuery, before int64) string {
	v := url.Values{}
	for name, val := range map[string]string{"actor": q.Actor, "action": q.Action, "record": q.TargetType, "record_id": q.TargetID} {
		if val != "" {
			v.Set(name, val)
		}
	}
	if !q.From.IsZero() {
		v.Set("from", q.From.Format(time.DateOnly))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.AddDate(0, 0, -1).Format(time.DateOnly))
	}
	if before > 0 {
		v.Set("before", strconv.FormatInt(before, 10))
	}
	u := staffpage.RequestOf(c).StaffPath(auditPath)
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// StaffAuditPage answers GET /staff/audit (viewer and up): the audit log
// of the organisation, newest first, 50 a page (?before=ID pages on),
// filtered by ?actor=, ?action=, ?record= (kind) and ?record_id=, and
// ?from= and ?until= (dates, both included).
func (s *Server) StaffAuditPage(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	q, ok := auditQuery(c, u.OrganisationID)
	if !ok {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	ctx := c.Request().Context()
	rows, err := s.engine.AuditLog(ctx, q)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	facets, err := s.engine.AuditFacets(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	names, err := s.auditNames(c, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	t := staffAuditTextIn(c)
	m := staffview.AuditModel{Chrome: s.StaffChrome(c, staffpage.StaffTextIn(c).AuditTitle), Action: staffpage.RequestOf(c).StaffPath(auditPath),
		Rows: names.rows(c, rows), RecordID: q.TargetID,
		Filtered: q.Actor != "" || q.Action != "" || q.TargetType != "" || q.TargetID != "" || !q.From.IsZero() || !q.Until.IsZero()}
	if !q.From.IsZero() {
		m.From = q.From.Format(time.DateOnly)
	}
	if !q.Until.IsZero() {
		m.Until = q.Until.AddDate(0, 0, -1).Format(time.DateOnly)
	}
	option := func(values []string, selected string, label func(string) string) []staffview.Option {
		out := []staffview.Option{{Value: "", Label: t.Any}}
		for _, v := range values {
			out = append(out, staffview.Option{Value: v, Label: label(v), Selected: v == selected})
		}
		return out
	}
	m.Actors = option(facets.Actors, q.Actor, func(v string) string {
		if who, detail := names.actor(c, v, nil); detail != "" {
			return who + " (" + detail + ")"
		} else {
			return who
		}
	})
	m.Actions = option(facets.Actions, q.Action, func(v string) string { return staffview.AuditActionIn(ctx, v) })
	m.Kinds = option(facets.TargetTypes, q.TargetType, func(v string) string { return auditKindLabel(t, v) })
	if len(rows) == auditPageSize {
		m.OlderURL = auditURL(c, q, rows[len(rows)-1].ID)
	}
	if q.BeforeID != 0 {
		m.NewestURL = auditURL(c, q, 0)
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.Audit(m))
}

// auditNames are the names the log's entries refer to by id: staff
// members, periods and membership types.
type auditNames struct {
	staff          map[int64]staff.StaffMember
	staffByEmail   map[string]staff.StaffMember
	periods, types map[string]string
}

func (s *Server) auditNames(c echo.Context, orgID int64) (*auditNames, error) {
	ctx := c.Request().Context()
	n := &auditNames{staff: map[int64]staff.StaffMember{}, staffByEmail: map[string]staff.StaffMember{}, periods: map[string]string{}, types: map[string]string{}}
	members, err := staff.Of(s.engine).ListStaff(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		n.staff[m.ID] = m
		n.staffByEmail[strings.ToLower(m.Email)] = m
	}
	periods, err := organisation.Of(s.engine).Periods(ctx, orgID)
	if err != nil {
		return nil, err
	}
	code := server.LangOf(c).Code
	for _, p := range periods {
		n.periods[strconv.FormatInt(p.ID, 10)] = p.NameTexts.In(code, p.Name)
	}
	types, err := organisation.Of(s.engine).MembershipTypes(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		n.types[strconv.FormatInt(t.ID, 10)] = t.NameTexts.In(code, t.Name)
	}
	return n, nil
}

// staffAuditRows prints audit records (the log, a registration's detail).
func (s *Server) staffAuditRows(c echo.Context, rows []engine.AuditRecord) []staffview.AuditRow {
	names, err := s.auditNames(c, staffpage.StaffUserOf(c).OrganisationID)
	if err != nil {
		s.LogFor(c).Warn("audit names not loaded; entries show ids", "err", err)
		names = &auditNames{}
	}
	return names.rows(c, rows)
}

// actor is how the log names who made a change: a staff member's name,
// with their e-mail address as detail, else what was recorded.
func (n *auditNames) actor(c echo.Context, recorded string, staffID *int64) (who, detail string) {
	if recorded == engine.CommandLine.Name {
		return staffAuditTextIn(c).CommandLine, ""
	}
	m, ok := staff.StaffMember{}, false
	if staffID != nil {
		m, ok = n.staff[*staffID]
	}
	if !ok {
		m, ok = n.staffByEmail[strings.ToLower(recorded)]
	}
	if ok && m.Name != "" && !strings.EqualFold(m.Name, recorded) {
		return m.Name, recorded
	}
	return recorded, ""
}

// rows prints records as sentences with their changes.
func (n *auditNames) rows(c echo.Context, rows []engine.AuditRecord) []staffview.AuditRow {
	ctx := c.Request().Context()
	l := server.LangOf(c)
	out := make([]staffview.AuditRow, 0, len(rows))
	for _, r := range rows {
		row := staffview.AuditRow{When: l.Date(r.CreatedAt.UTC()) + ", " + r.CreatedAt.UTC().Format("15:04") + " UTC",
			WhenISO: r.CreatedAt.UTC().Format(time.RFC3339), Action: staffview.AuditActionIn(ctx, r.Action), ActionCode: r.Action}
		row.Who, row.WhoDetail = n.actor(c, r.Actor, r.StaffID)
		row.Target, row.TargetURL = n.target(c, r)
		row.Changes = auditChanges(c, r.BeforeJSON, r.AfterJSON)
		out = append(out, row)
	}
	return out
}

// auditKindLabel names a kind of record, without its number.
func auditKindLabel(t *staffview.AuditTexts, kind string) string {
	label, ok := auditKinds(t)[kind]
	if !ok {
		return kind
	}
	return strings.TrimSpace(strings.ReplaceAll(label, "%s", ""))
}

// auditKinds are the printed kinds of record ("Registration %s").
func auditKinds(t *staffview.AuditTexts) map[string]string {
	return map[string]string{"registration": t.KindRegistration, "staff": t.KindStaff, "organisation": t.KindOrganisation,
		"period": t.KindPeriod, "membership_type": t.KindMembershipType, "definition": t.KindDefinition, "invitation": t.KindInvitation,
		"job": t.KindJob, "bank_credit": t.KindBankCredit, "webhook_endpoint": t.KindWebhook, "webhook_delivery": t.KindWebhookDelivery, "api_key": t.KindAPIKey,
		"person": t.KindPerson, "data_request": t.KindDataRequest, "debit_run": t.KindDebitRun}
}

// setupSectionOf is the setup section that shows what an entry about the
// organisation, a period or a membership type changed.
func setupSectionOf(r engine.AuditRecord) string {
	switch {
	case r.TargetType == "period" || r.TargetType == "membership_type" || r.Action == "price_rules.replace":
		return "memberships"
	case r.Action == "message_settings.update":
		return "messages"
	case r.Action == "payment_settings.update":
		return "payments"
	case r.Action == "retention_settings.update":
		return "data-protection"
	}
	return "organisation"
}

// target names the record an entry changed, in words, and the page that
// shows it ("" when there is none).
func (n *auditNames) target(c echo.Context, r engine.AuditRecord) (string, string) {
	t := staffAuditTextIn(c)
	id := r.TargetID
	name := id
	var link string
	switch r.TargetType {
	case "registration":
		link = server.StaffPrefix + "/registrations/" + url.PathEscape(id)
		if r.InstanceID != nil {
			link = server.StaffPrefix + "/registrations/" + strconv.FormatInt(*r.InstanceID, 10)
		}
	case "staff":
		link = server.StaffPrefix + server.StaffSetupPath + "/staff"
		if sid, err := strconv.ParseInt(id, 10, 64); err == nil {
			if m, ok := n.staff[sid]; ok {
				name = m.Name + " (" + m.Email + ")"
			}
		}
	case "organisation", "period", "membership_type":
		link = server.StaffPrefix + server.StaffSetupPath + "/" + setupSectionOf(r)
		if v, ok := n.periods[id]; ok && r.TargetType == "period" {
			name = v
		}
		if v, ok := n.types[id]; ok && r.TargetType == "membership_type" {
			name = v
		}
	case "api_key":
		link = server.StaffPrefix + server.StaffSetupPath + "/api-keys"
	case "person":
		link = server.StaffPrefix + server.StaffPersonsPath + "/" + url.PathEscape(id)
	case "data_request":
		link = server.StaffPrefix + server.StaffDataRequestsPath
	case "definition":
		link = server.StaffPrefix + server.StaffDefinitionsPath
	case "invitation":
		link = server.StaffPrefix + "/invitations"
	case "job":
		link = server.StaffPrefix + "/jobs"
	case "bank_credit":
		link = server.StaffPrefix + "/payments"
	case "debit_run":
		link = server.StaffPrefix + server.StaffDebitsPath + "/" + url.PathEscape(id)
	case "webhook_endpoint":
		link = server.StaffPrefix + server.StaffWebhooksPath + "/" + url.PathEscape(id)
		if r.Action == "webhook.delete" {
			link = server.StaffPrefix + server.StaffWebhooksPath
		}
	case "webhook_delivery":
		link = server.StaffPrefix + server.StaffWebhooksPath
	}
	format, ok := auditKinds(t)[r.TargetType]
	if !ok {
		return strings.TrimSpace(r.TargetType + " " + id), ""
	}
	text := format
	if strings.Contains(format, "%s") {
		text = fmt.Sprintf(format, name)
	}
	if link != "" {
		link = staffpage.RequestOf(c).Path(link)
	}
	return strings.TrimSpace(text), link
}

// auditIdentifiers are fields that name what a change was made to (the
// payment refunded), or say where it left the order (a part payment
// leaves it unpaid): shown even when before and after agree.
var auditIdentifiers = map[string]bool{"payment": true, "reference": true, "order": true, "code": true, "key": true, "email": true, "order_status": true}

// auditChanges lists the fields of an entry (JSON objects; nested ones
// by path), each printed in the page's language: a field in before and
// after that differs as before → after, one in after only as its value,
// one in before only as what it was; unchanged ones are left out unless
// they name the record.
func auditChanges(c echo.Context, beforeJSON, afterJSON string) []staffview.AuditChange {
	before, after := flattenAudit(beforeJSON), flattenAudit(afterJSON)
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	ctx := c.Request().Context()
	var out []staffview.AuditChange
	for _, k := range keys {
		b, inBefore := before[k]
		a, inAfter := after[k]
		if auditLeftOut(k, b, inBefore, a, inAfter) {
			continue
		}
		ch := staffview.AuditChange{Field: staffview.AuditFieldIn(ctx, k)}
		switch {
		case inBefore && inAfter && fmt.Sprint(b) == fmt.Sprint(a):
			if !auditIdentifiers[k[strings.LastIndex(k, ".")+1:]] {
				continue
			}
			ch.After = auditValue(c, k, a)
		case inBefore && inAfter:
			ch.Before, ch.After = auditValue(c, k, b), auditValue(c, k, a)
		case inAfter:
			ch.After = auditValue(c, k, a)
		default:
			ch.Before = auditValue(c, k, b)
		}
		out = append(out, ch)
	}
	return out
}

// auditInternal are fields kept for the record that say nothing to a
// reader: the order's number (the entry names its registration) and the
// key of a queued message.
var auditInternal = map[string]bool{"order": true, "message": true}

// auditLeftOut reports whether a change of field k is not shown: an
// internal number or key, or a value that is empty where there is nothing
// before it (a capture without a note has no "Note: (empty)").
func auditLeftOut(k string, b any, inBefore bool, a any, inAfter bool) bool {
	last := k[strings.LastIndex(k, ".")+1:]
	if _, number := a.(float64); auditInternal[last] && (number || last == "message") {
		return true
	}
	if s, ok := a.(string); ok && s == "" && inAfter && (!inBefore || b == nil || b == "") {
		return true
	}
	return !inAfter && (b == nil || b == "")
}

// flattenAudit reads a stored before or after: an object's fields by
// path ("settings.provider"); another value as field "value".
func flattenAudit(raw string) map[string]any {
	out := map[string]any{}
	if raw == "" {
		return out
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		out["value"] = raw
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		obj, ok := v.(map[string]any)
		if !ok || (len(obj) == 0 && prefix != "") {
			out[prefix] = v
			return
		}
		for k, x := range obj {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, x)
		}
	}
	if _, ok := v.(map[string]any); !ok {
		out["value"] = v
		return out
	}
	walk("", v)
	return out
}

// auditValue prints one value of a change: states and roles in words,
// yes and no, lists joined, empty said.
func auditValue(c echo.Context, field string, v any) string {
	t := staffAuditTextIn(c)
	switch x := v.(type) {
	case nil:
		return t.Removed
	case bool:
		if x {
			return t.Yes
		}
		return t.No
	case string:
		if x == "" {
			return t.Empty2
		}
		last := field[strings.LastIndex(field, ".")+1:]
		switch {
		case last == "role" && slices.Contains([]staff.StaffRole{staff.RoleViewer, staff.RoleRegistrar, staff.RoleTreasurer, staff.RoleAdmin}, staff.StaffRole(x)):
			return staffpage.StaffRoleLabel(c, staff.StaffRole(x))
		case strings.HasSuffix(last, "status") || last == "state" || last == "refund":
			return auditStateLabel(c, last, x)
		case (last == "payment" || last == "order") && auditIsStatus(x):
			// entries written before the field was called payment_status
			return staffpage.StatusLabel(c, x)
		case last == "event":
			return auditEventLabel(t, x)
		case last == "outcome":
			return auditOutcomeLabel(t, x)
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, auditValue(c, field, e))
		}
		if len(parts) == 0 {
			return t.Empty2
		}
		return strings.Join(parts, ", ")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// auditIsStatus reports whether v is an order's or a payment's stored
// status.
func auditIsStatus(v string) bool {
	switch v {
	case string(engine.OrderUnpaid), string(engine.OrderPaid), string(engine.OrderCancelled),
		string(engine.PaymentPending), string(engine.PaymentSucceeded), string(engine.PaymentFailed), string(engine.PaymentCancelled):
		return true
	}
	return false
}

// auditEventLabel names what a payment event recorded: how the money
// arrived, or went back.
func auditEventLabel(t *staffview.AuditTexts, v string) string {
	switch v {
	case payment.BankCaptureEvent:
		return t.EventBankTransfer
	case directdebit.DebitReturnEvent:
		return t.EventDebitReturn
	case "direct_debit.collected":
		return t.EventDebitCollected
	case "retrieval":
		return t.EventProviderCheck
	}
	return t.EventOther
}

// auditOutcomeLabel names a payment event's outcome: the payment
// complete, a part of it, a second payment owed back, ...
func auditOutcomeLabel(t *staffview.AuditTexts, v string) string {
	switch v {
	case string(engine.OutcomeSuccess):
		return t.OutcomeSuccess
	case string(engine.OutcomePending):
		return t.OutcomePending
	case string(engine.OutcomeFailed):
		return t.OutcomeFailed
	case string(engine.OutcomeCancelled):
		return t.OutcomeCancelled
	case string(engine.OutcomeOpen):
		return t.OutcomeOpen
	case payment.PartialCaptureOutcome:
		return t.OutcomePartial
	case "second_credit":
		return t.OutcomeSecondCredit
	}
	return t.OutcomeOther
}

// auditStateLabel names a stored state of field: a refund's, else a
// registration's process state, else a collection run's, else a
// period's, membership's, order's or payment's (statusLabel).
func auditStateLabel(c echo.Context, field, v string) string {
	t := staffAuditTextIn(c)
	if strings.HasPrefix(field, "refund") {
		switch engine.RefundStatus(v) {
		case engine.RefundDone:
			return t.RefundDone
		case engine.RefundDue:
			return t.RefundDue
		}
		return v
	}
	switch p := engine.ProcessState(v); p {
	case engine.StateInit, engine.StateRunning, engine.StateSuspended, engine.StateDone, engine.StateCompleted, engine.StateCancelled:
		return StateLabel(c, staff.RegistrationStateOf(p))
	}
	// A collection run's (its cancelled is everyone's cancelled).
	switch payment.DebitRunStatus(v) {
	case payment.DebitRunPrepared:
		return staffpage.StaffDebitTextIn(c).StatusPrepared
	case payment.DebitRunSent:
		return staffpage.StaffDebitTextIn(c).StatusSent
	}
	return staffpage.StatusLabel(c, v)
}
