package privacy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/bankstatement"
	"portal/engine/definition"
	"portal/engine/directdebit"
	"portal/engine/internal/store"
	"portal/engine/invitation"
	"portal/engine/message"
	"portal/engine/registration"
)

// The personal-data export (issue 30): everything the club holds about a
// household (a member's "Your data" page) or one person (staff, the admin
// API, `portal persons export`), in one documented JSON shape.
//
// The export is table-driven: personalDataSections lists each part of the
// document with the tables it reads. The export-completeness test reads
// the schema for every table with a person or household column and fails
// for one that no section (nor notPersonalTables) names, so a new table
// holding members' data cannot be forgotten here. A new part is one
// section: a field of PersonalData and a gather function.

// PersonalDataFormat names the shape of the export; a change that is not
// backwards-compatible gets a new number.
const PersonalDataFormat = "portal-personal-data/1"

// PersonalData is the export: what the organisation holds about a
// household or a person. Lists are never null in its JSON.
type PersonalData struct {
	Format        string               `json:"format"`
	GeneratedAt   time.Time            `json:"generatedAt"`
	Language      string               `json:"language"`
	Organisation  ExportOrg            `json:"organisation"`
	Subject       ExportSubject        `json:"subject"`
	Persons       []ExportPerson       `json:"persons"`
	Registrations []ExportRegistration `json:"registrations"`
	Memberships   []ExportMembership   `json:"memberships"`
	Orders        []ExportOrder        `json:"orders"`
	BankCredits   []ExportBankCredit   `json:"bankCredits"`
	Messages      []ExportMessage      `json:"messages"`
	OptOuts       []ExportOptOut       `json:"optOuts"`
	Invitations   []ExportInvitation   `json:"invitations"`
	Mandates      []ExportMandate      `json:"mandates"`
	Sessions      []ExportSession      `json:"sessions"`
	Requests      []DataRequest        `json:"requests"`
	// Consents and AccessLog: consents.go, access_log.go.
	Consents  []engine.ConsentView `json:"consents"`
	AccessLog []ExportAccess       `json:"accessLog"`
}

// ExportOrg is the organisation that holds the data (the controller).
type ExportOrg struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	ContactEmail string `json:"contactEmail"`
}

// ExportSubject says whom the export is about: a household (its user
// key) or one person.
type ExportSubject struct {
	Kind     string   `json:"kind"` // "household" or "person"
	UserKeys []string `json:"userKeys"`
	PersonID *int64   `json:"personId,omitempty"`
}

// ExportPerson is a person as stored.
type ExportPerson struct {
	ID          int64      `json:"id"`
	FirstName   string     `json:"firstName"`
	LastName    string     `json:"lastName"`
	DateOfBirth string     `json:"dateOfBirth"`
	Email       string     `json:"email"`
	ExternalID  string     `json:"externalId,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	ErasedAt    *time.Time `json:"erasedAt,omitempty"`
}

// ExportRegistration is one registration with its answers as the member
// saw the questions and choices (in the export's language).
type ExportRegistration struct {
	ID        int64               `json:"id"`
	PeriodID  int64               `json:"periodId"`
	Period    string              `json:"period"`
	Status    engine.ProcessState `json:"status"`
	StartedAt time.Time           `json:"startedAt"`
	EndedAt   *time.Time          `json:"endedAt,omitempty"`
	Language  string              `json:"language"`
	PersonIDs []int64             `json:"personIds"`
	Answers   []ExportAnswer      `json:"answers"`
	// ArchivedAt is set when the answers were archived after the season.
	ArchivedAt *time.Time `json:"archivedAt,omitempty"`
}

// ExportAnswer is one answer: the question's text, the stored value and,
// for a choice, the label the member chose.
type ExportAnswer struct {
	PersonID *int64 `json:"personId,omitempty"`
	Step     string `json:"step"`
	Question string `json:"question"`
	Value    string `json:"value"`
	Label    string `json:"label,omitempty"`
}

// ExportMembership is one membership.
type ExportMembership struct {
	ID             int64                   `json:"id"`
	PersonID       int64                   `json:"personId"`
	PeriodID       int64                   `json:"periodId"`
	Period         string                  `json:"period"`
	Type           string                  `json:"type"`
	MemberType     string                  `json:"memberType"`
	Status         engine.MembershipStatus `json:"status"`
	RegistrationID *int64                  `json:"registrationId,omitempty"`
	CreatedAt      time.Time               `json:"createdAt"`
	ActivatedAt    *time.Time              `json:"activatedAt,omitempty"`
}

// ExportOrder is an order with its lines and payment attempts.
type ExportOrder struct {
	ID             int64              `json:"id"`
	RegistrationID int64              `json:"registrationId"`
	PeriodID       int64              `json:"periodId"`
	Status         engine.OrderStatus `json:"status"`
	TotalMinor     int64              `json:"totalMinor"`
	Currency       string             `json:"currency"`
	PayReference   string             `json:"payReference,omitempty"`
	CreatedAt      time.Time          `json:"createdAt"`
	PaidAt         *time.Time         `json:"paidAt,omitempty"`
	Lines          []ExportOrderLine  `json:"lines"`
	Payments       []ExportPayment    `json:"payments"`
}

// ExportOrderLine is one line of an order.
type ExportOrderLine struct {
	PersonID    *int64 `json:"personId,omitempty"`
	Kind        string `json:"kind"`
	Code        string `json:"code"`
	Description string `json:"description"`
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
}

// ExportPayment is one payment attempt.
type ExportPayment struct {
	Reference    string               `json:"reference"`
	Provider     string               `json:"provider"`
	AmountMinor  int64                `json:"amountMinor"`
	Currency     string               `json:"currency"`
	Status       engine.PaymentStatus `json:"status"`
	RefundStatus engine.RefundStatus  `json:"refundStatus,omitempty"`
	CreatedAt    time.Time            `json:"createdAt"`
	UpdatedAt    time.Time            `json:"updatedAt"`
}

// ExportBankCredit is a bank transfer received for one of the orders, as
// the bank statement described it.
type ExportBankCredit struct {
	PaymentReference string     `json:"paymentReference"`
	AmountMinor      int64      `json:"amountMinor"`
	Currency         string     `json:"currency"`
	BookedOn         *time.Time `json:"bookedOn,omitempty"`
	DebtorName       string     `json:"debtorName"`
	DebtorIBAN       string     `json:"debtorIban"`
	Remittance       string     `json:"remittance"`
}

// ExportMessage is an e-mail the portal sent (or will send): its kind,
// when and to which address.
type ExportMessage struct {
	Kind      engine.MessageKind `json:"kind"`
	Recipient string             `json:"recipient"`
	CreatedAt time.Time          `json:"createdAt"`
	SentAt    *time.Time         `json:"sentAt,omitempty"`
}

// ExportOptOut is an address that unsubscribed from a category.
type ExportOptOut struct {
	Address   string    `json:"address"`
	Category  string    `json:"category"`
	CreatedAt time.Time `json:"createdAt"`
}

// ExportInvitation is an invitation link issued to the household.
type ExportInvitation struct {
	ID        int64      `json:"id"`
	PeriodID  int64      `json:"periodId"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	OpenedAt  *time.Time `json:"openedAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// ExportMandate is a SEPA direct-debit mandate the household gave: the
// account and the text exactly as signed.
type ExportMandate struct {
	Reference   string     `json:"reference"`
	CreditorID  string     `json:"creditorId"`
	Holder      string     `json:"holder"`
	IBAN        string     `json:"iban"`
	BIC         string     `json:"bic,omitempty"`
	Language    string     `json:"language"`
	Text        string     `json:"text"`
	TextVersion string     `json:"textVersion"`
	SignedAt    time.Time  `json:"signedAt"`
	RevokedAt   *time.Time `json:"revokedAt,omitempty"`
}

// ExportSession is a signed-in session of the household (no token).
type ExportSession struct {
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// exportScope is whom an export (or an erasure) is about, resolved once.
type exportScope struct {
	org       *engine.Organisation
	household bool
	lang      string
	userKeys  []string
	persons   []engine.Person
	personIDs []int64
	emails    []string // lower case, distinct
	// Filled by the sections as they go, for the later ones.
	instanceIDs []int64
	orderIDs    []int64
	references  []string
}

func (sc *exportScope) hasPerson(id *int64) bool {
	return id != nil && slices.Contains(sc.personIDs, *id)
}

// personalDataSection is one part of the export: the tables it reads and
// how it fills its part. Sections run in order; later ones may use what
// earlier ones put in the scope (registrations before orders).
type personalDataSection struct {
	Key    string
	Tables []string
	gather func(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error
}

// personalDataSections are the parts of the export, in order.
var personalDataSections = []personalDataSection{
	{"persons", []string{"persons", "user_persons"}, gatherPersons},
	{"registrations", []string{"process_instances", "process_data", "process_archives"}, gatherRegistrations},
	{"memberships", []string{"memberships", "membership_cards"}, gatherMemberships},
	{"orders", []string{"orders", "order_lines", "payments"}, gatherOrders},
	{"bankCredits", []string{"bank_credits"}, gatherBankCredits},
	{"messages", []string{"outbox_messages"}, gatherMessages},
	{"optOuts", []string{"message_opt_outs"}, gatherOptOuts},
	{"invitations", []string{"invitations"}, gatherInvitations},
	{"mandates", []string{"debit_mandates"}, gatherMandates},
	{"sessions", []string{"sessions"}, gatherSessions},
	{"requests", []string{"data_requests"}, gatherRequests},
	{"consents", []string{"consent_records", "consent_texts"}, gatherConsents},
	{"accessLog", []string{"staff_access_log"}, gatherAccessLog},
}

// PersonalDataTables lists the tables the export reads, by section.
func PersonalDataTables() map[string][]string {
	out := map[string][]string{}
	for _, s := range personalDataSections {
		out[s.Key] = slices.Clone(s.Tables)
	}
	return out
}

// NotPersonalDataTables are tables with a column that looks like a
// person's or household's but holds no member's data, and why.
var NotPersonalDataTables = map[string]string{
	"staff_members":  "the club's staff, not its members",
	"bun_migrations": "the schema's own history",
}

// ExportHousehold gathers what the organisation holds about the household
// of userKey: every person linked to it and what they did. A member's
// session asks for its own user key only, so another household's data
// never enters.
func (s *Service) ExportHousehold(ctx context.Context, orgID int64, userKey string) (_ *PersonalData, err error) {
	if !engine.InScope(ctx, orgID) || userKey == "" {
		return nil, engine.Errorf(engine.CodeNotFound, "household not found")
	}
	org, err := engine.LoadOrganisation(ctx, s.DB(), orgID)
	if err != nil {
		return nil, err
	}
	sc := &exportScope{org: org, household: true, userKeys: []string{userKey}}
	var persons []engine.Person
	if err := s.DB().NewSelect().Model(&persons).
		Where("id IN (?)", s.DB().NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").Where("user_key = ? AND organisation_id = ?", userKey, orgID)).
		OrderExpr("date_of_birth, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load household: %w", err)
	}
	sc.setPersons(persons)
	return s.exportScoped(ctx, s.DB(), sc, ExportSubject{Kind: "household", UserKeys: sc.userKeys})
}

// ExportPerson gathers what the organisation holds about one person: the
// person, their answers, memberships and the orders they are on, the
// messages to their address, and the household links they have.
func (s *Service) ExportPerson(ctx context.Context, orgID, personID int64) (_ *PersonalData, err error) {
	sc, err := s.personScope(ctx, s.DB(), orgID, personID)
	if err != nil {
		return nil, err
	}
	id := personID
	return s.exportScoped(ctx, s.DB(), sc, ExportSubject{Kind: "person", UserKeys: sc.userKeys, PersonID: &id})
}

// personScope resolves one person of an organisation with their user keys.
func (s *Service) personScope(ctx context.Context, db bun.IDB, orgID, personID int64) (*exportScope, error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "person not found")
	}
	org, err := engine.LoadOrganisation(ctx, db, orgID)
	if err != nil {
		return nil, err
	}
	var p engine.Person
	if err := db.NewSelect().Model(&p).Where("id = ? AND organisation_id = ?", personID, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "person")
	}
	sc := &exportScope{org: org}
	if err := db.NewSelect().Model((*engine.UserPerson)(nil)).Column("user_key").
		Where("person_id = ? AND organisation_id = ?", personID, orgID).Order("user_key").Scan(ctx, &sc.userKeys); err != nil {
		return nil, fmt.Errorf("load user keys: %w", err)
	}
	// Households the person was registered in and no longer belongs to
	// (unlinked since): their registrations and orders are the person's too.
	var past []string
	if err := db.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("user_key").Distinct().
		Where("organisation_id = ?", orgID).
		WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			return w.Where("id IN (?)", db.NewSelect().Model((*engine.Membership)(nil)).Column("process_instance_id").Where("person_id = ?", personID)).
				WhereOr("id IN (?)", db.NewSelect().TableExpr("orders AS o").Column("o.process_instance_id").
					Join("JOIN order_lines AS l ON l.order_id = o.id").Where("l.person_id = ?", personID))
		}).Scan(ctx, &past); err != nil {
		return nil, fmt.Errorf("load past households: %w", err)
	}
	for _, k := range past {
		if !slices.Contains(sc.userKeys, k) {
			sc.userKeys = append(sc.userKeys, k)
		}
	}
	sc.setPersons([]engine.Person{p})
	return sc, nil
}

func (sc *exportScope) setPersons(persons []engine.Person) {
	sc.persons = persons
	for _, p := range persons {
		sc.personIDs = append(sc.personIDs, p.ID)
		if e := strings.ToLower(strings.TrimSpace(p.Email)); e != "" && !slices.Contains(sc.emails, e) {
			sc.emails = append(sc.emails, e)
		}
	}
}

func (s *Service) exportScoped(ctx context.Context, db bun.IDB, sc *exportScope, subject ExportSubject) (*PersonalData, error) {
	sc.lang = cmp.Or(engine.LanguageOf(ctx), sc.org.DefaultLanguage)
	if subject.UserKeys == nil {
		subject.UserKeys = []string{}
	}
	out := &PersonalData{Format: PersonalDataFormat, GeneratedAt: s.Clock().UTC(), Language: sc.lang,
		Organisation: ExportOrg{ID: sc.org.ID, Name: sc.org.Name, ContactEmail: sc.org.ContactEmail}, Subject: subject,
		Persons: []ExportPerson{}, Registrations: []ExportRegistration{}, Memberships: []ExportMembership{}, Orders: []ExportOrder{},
		BankCredits: []ExportBankCredit{}, Messages: []ExportMessage{}, OptOuts: []ExportOptOut{}, Invitations: []ExportInvitation{}, Mandates: []ExportMandate{},
		Sessions: []ExportSession{}, Requests: []DataRequest{}, Consents: []engine.ConsentView{}, AccessLog: []ExportAccess{}}
	for _, sec := range personalDataSections {
		if err := sec.gather(ctx, db, sc, out); err != nil {
			return nil, fmt.Errorf("export %s: %w", sec.Key, err)
		}
	}
	return out, nil
}

func gatherPersons(_ context.Context, _ bun.IDB, sc *exportScope, out *PersonalData) error {
	for _, p := range sc.persons {
		ep := ExportPerson{ID: p.ID, FirstName: p.FirstName, LastName: p.LastName, DateOfBirth: p.DateOfBirth.Format(time.DateOnly),
			Email: p.Email, CreatedAt: p.CreatedAt.UTC(), ErasedAt: p.ErasedAt}
		if p.ExternalID != nil {
			ep.ExternalID = *p.ExternalID
		}
		out.Persons = append(out.Persons, ep)
	}
	return nil
}

func gatherRegistrations(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.userKeys) == 0 {
		return nil
	}
	var insts []engine.ProcessInstance
	if err := db.NewSelect().Model(&insts).Where("organisation_id = ? AND user_key IN (?)", sc.org.ID, bun.List(sc.userKeys)).
		OrderExpr("id").Scan(ctx); err != nil {
		return fmt.Errorf("load registrations: %w", err)
	}
	if len(insts) == 0 {
		return nil
	}
	ids := make([]int64, len(insts))
	for i, in := range insts {
		ids[i] = in.ID
	}
	var data []engine.ProcessData
	if err := db.NewSelect().Model(&data).Where("instance_id IN (?) AND data_key = ?", bun.List(ids), engine.DataAnswer).OrderExpr("id").Scan(ctx); err != nil {
		return fmt.Errorf("load answers: %w", err)
	}
	var archives []archiveRow
	if err := db.NewSelect().Model(&archives).Where("instance_id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return fmt.Errorf("load archives: %w", err)
	}
	archived := map[int64]archiveRow{}
	for _, a := range archives {
		archived[a.InstanceID] = a
		if a.Data == nil {
			continue
		}
		var kept []registration.ArchivedAnswer
		if err := json.Unmarshal([]byte(*a.Data), &kept); err != nil {
			return fmt.Errorf("archive of %d: %w", a.InstanceID, err)
		}
		for _, k := range kept {
			if k.Key == engine.DataAnswer {
				data = append(data, engine.ProcessData{InstanceID: a.InstanceID, StepID: k.StepID, PersonID: k.PersonID, DataKey: k.Key, DataValue: k.Value})
			}
		}
	}
	periods := map[int64]string{}
	steps := map[int64]stepLabels{}
	for _, in := range insts {
		mine := sc.household || slices.ContainsFunc(in.SelectedPersons, func(id int64) bool { return slices.Contains(sc.personIDs, id) })
		var answers []ExportAnswer
		for _, d := range data {
			if d.InstanceID != in.ID || (!sc.hasPerson(d.PersonID) && !(sc.household && d.PersonID == nil)) {
				continue
			}
			mine = true
			a := ExportAnswer{PersonID: d.PersonID, Value: d.DataValue}
			if d.StepID != nil {
				sl, err := labelsOf(ctx, db, steps, *d.StepID)
				if err != nil {
					return err
				}
				a.Step, a.Question, a.Label = sl.name, sl.question(sc.lang), sl.label(sc.lang, d.DataValue)
			}
			answers = append(answers, a)
		}
		if !mine {
			continue
		}
		name, ok := periods[in.RelatedEntityID]
		if !ok {
			p, err := store.LoadPeriod(ctx, db, in.RelatedEntityID)
			if err != nil {
				return err
			}
			p.Localize(sc.lang)
			name, periods[in.RelatedEntityID] = p.Name, p.Name
		}
		r := ExportRegistration{ID: in.ID, PeriodID: in.RelatedEntityID, Period: name, Status: in.Status, StartedAt: in.StartTime.UTC(),
			EndedAt: in.EndTime, Language: in.Language, PersonIDs: in.SelectedPersons, Answers: answers}
		if r.PersonIDs == nil {
			r.PersonIDs = []int64{}
		}
		if r.Answers == nil {
			r.Answers = []ExportAnswer{}
		}
		if a, ok := archived[in.ID]; ok {
			at := a.ArchivedAt.UTC()
			r.ArchivedAt = &at
		}
		out.Registrations = append(out.Registrations, r)
		sc.instanceIDs = append(sc.instanceIDs, in.ID)
	}
	return nil
}

// archiveRow is a process_archives row with its archived answers.
type archiveRow struct {
	bun.BaseModel `bun:"table:process_archives"`
	InstanceID    int64     `bun:"instance_id,pk"`
	ArchivedAt    time.Time `bun:"archived_at"`
	Data          *string   `bun:"data"`
}

// stepLabels are a step's question and choice labels, per language.
type stepLabels struct {
	name, text string
	texts      definition.StepTexts
	options    map[string]string
}

func (l stepLabels) question(lang string) string {
	if q := l.texts.Question[lang]; q != "" {
		return q
	}
	return l.text
}

// label is the label of a stored value: a choice's label, or the labels
// of a multiple choice stored as a JSON list, joined; "" for free text.
func (l stepLabels) label(lang, value string) string {
	one := func(v string) string {
		if t := l.texts.Options[v][lang]; t != "" {
			return t
		}
		return l.options[v]
	}
	var many []string
	if strings.HasPrefix(value, "[") && json.Unmarshal([]byte(value), &many) == nil {
		labels := make([]string, 0, len(many))
		for _, v := range many {
			labels = append(labels, cmp.Or(one(v), v))
		}
		return strings.Join(labels, ", ")
	}
	return one(value)
}

func labelsOf(ctx context.Context, db bun.IDB, cache map[int64]stepLabels, stepID int64) (stepLabels, error) {
	if l, ok := cache[stepID]; ok {
		return l, nil
	}
	var st engine.ProcessStep
	if err := db.NewSelect().Model(&st).Where("?TableAlias.id = ?", stepID).Relation("Options").Scan(ctx); err != nil {
		return stepLabels{}, engine.NotFoundOr(err, "step")
	}
	texts, err := definition.ParseTexts(st.Texts)
	if err != nil {
		return stepLabels{}, fmt.Errorf("step %d texts: %w", stepID, err)
	}
	l := stepLabels{name: st.Name, text: st.QuestionText, texts: texts, options: map[string]string{}}
	for _, o := range st.Options {
		if o.Kind == engine.OptionChoice {
			l.options[o.Value] = o.Label
		}
	}
	cache[stepID] = l
	return l, nil
}

func gatherMemberships(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.personIDs) == 0 {
		return nil
	}
	var rows []struct {
		engine.Membership
		TypeName    string       `bun:"type_name"`
		TypeTexts   engine.Texts `bun:"type_texts"`
		PeriodName  string       `bun:"period_name"`
		PeriodTexts engine.Texts `bun:"period_texts"`
	}
	if err := db.NewSelect().TableExpr("memberships AS m").ColumnExpr("m.*").
		ColumnExpr("t.name AS type_name, t.name_texts AS type_texts, p.name AS period_name, p.name_texts AS period_texts").
		Join("JOIN membership_types AS t ON t.id = m.membership_type_id").Join("JOIN membership_periods AS p ON p.id = m.period_id").
		Where("m.person_id IN (?) AND p.organisation_id = ?", bun.List(sc.personIDs), sc.org.ID).OrderExpr("m.id").Scan(ctx, &rows); err != nil {
		return fmt.Errorf("load memberships: %w", err)
	}
	for _, r := range rows {
		out.Memberships = append(out.Memberships, ExportMembership{ID: r.ID, PersonID: r.PersonID, PeriodID: r.PeriodID,
			Period: r.PeriodTexts.In(sc.lang, r.PeriodName), Type: r.TypeTexts.In(sc.lang, r.TypeName), MemberType: r.MemberType,
			Status: r.Status, RegistrationID: r.ProcessInstanceID, CreatedAt: r.CreatedAt.UTC(), ActivatedAt: r.ActivatedAt})
	}
	return nil
}

func gatherOrders(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.instanceIDs) == 0 {
		return nil
	}
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no") }).
		Where("?TableAlias.organisation_id = ? AND ?TableAlias.process_instance_id IN (?)", sc.org.ID, bun.List(sc.instanceIDs)).
		OrderExpr("?TableAlias.id").Scan(ctx); err != nil {
		return fmt.Errorf("load orders: %w", err)
	}
	for _, o := range orders {
		eo := ExportOrder{ID: o.ID, RegistrationID: o.ProcessInstanceID, PeriodID: o.PeriodID, Status: o.Status, TotalMinor: o.TotalMinor,
			Currency: o.Currency, PayReference: o.PayReference, CreatedAt: o.CreatedAt.UTC(), PaidAt: o.PaidAt,
			Lines: []ExportOrderLine{}, Payments: []ExportPayment{}}
		mine := sc.household
		for _, l := range o.Lines {
			// A person's export shows their own lines and the
			// household's (no person), not another person's.
			if !sc.household && l.PersonID != nil && !sc.hasPerson(l.PersonID) {
				continue
			}
			mine = mine || sc.hasPerson(l.PersonID)
			eo.Lines = append(eo.Lines, ExportOrderLine{PersonID: l.PersonID, Kind: string(l.Kind), Code: l.Code, Description: l.Description,
				AmountMinor: l.AmountMinor, Currency: l.Currency})
		}
		if !mine {
			continue
		}
		var pays []engine.Payment
		if err := db.NewSelect().Model(&pays).Where("order_id = ?", o.ID).OrderExpr("id").Scan(ctx); err != nil {
			return fmt.Errorf("load payments: %w", err)
		}
		for _, p := range pays {
			eo.Payments = append(eo.Payments, ExportPayment{Reference: p.Reference, Provider: p.Provider, AmountMinor: p.AmountMinor,
				Currency: p.Currency, Status: p.Status, RefundStatus: p.RefundStatus, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()})
			sc.references = append(sc.references, p.Reference)
		}
		out.Orders = append(out.Orders, eo)
		sc.orderIDs = append(sc.orderIDs, o.ID)
	}
	return nil
}

func gatherBankCredits(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.references) == 0 {
		return nil
	}
	var credits []bankstatement.BankCredit
	if err := db.NewSelect().Model(&credits).Where("payment_reference IN (?)", bun.List(sc.references)).OrderExpr("id").Scan(ctx); err != nil {
		return fmt.Errorf("load bank credits: %w", err)
	}
	for _, c := range credits {
		out.BankCredits = append(out.BankCredits, ExportBankCredit{PaymentReference: *c.PaymentReference, AmountMinor: c.AmountMinor,
			Currency: c.Currency, BookedOn: c.BookedOn, DebtorName: c.DebtorName, DebtorIBAN: c.DebtorIBAN, Remittance: c.Remittance})
	}
	return nil
}

// scopeMessages are the outbox messages about the scope: those whose
// payload names one of its orders, registrations, persons or invitations,
// or its household; the outbox has no organisation column, so the ids,
// not the address, decide (another club's message to the same address is
// not this club's data).
func scopeMessages(ctx context.Context, db bun.IDB, sc *exportScope) ([]engine.OutboxMessage, error) {
	if len(sc.emails) == 0 && len(sc.userKeys) == 0 {
		return nil, nil
	}
	var candidates []engine.OutboxMessage
	q := db.NewSelect().Model(&candidates)
	q = q.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
		for _, e := range sc.emails {
			w = w.WhereOr(engine.FoldSQL(db, "recipient")+" LIKE ?"+engine.LikeEscape, engine.ContainsPattern(e))
		}
		for _, k := range sc.userKeys {
			w = w.WhereOr("payload LIKE ?"+engine.LikeEscape, engine.ContainsPattern(strconv.Quote(k)))
		}
		return w
	})
	if err := q.OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	var invitations []int64
	if len(sc.userKeys) > 0 {
		if err := db.NewSelect().Model((*invitation.Invitation)(nil)).Column("id").Where("organisation_id = ? AND user_key IN (?)", sc.org.ID, bun.List(sc.userKeys)).
			Scan(ctx, &invitations); err != nil {
			return nil, fmt.Errorf("load invitations: %w", err)
		}
	}
	var memberships []int64
	if len(sc.personIDs) > 0 {
		if err := db.NewSelect().Model((*engine.Membership)(nil)).Column("id").Where("person_id IN (?)", bun.List(sc.personIDs)).Scan(ctx, &memberships); err != nil {
			return nil, fmt.Errorf("load memberships: %w", err)
		}
	}
	// The requests of the scope, a household's or those about or by the
	// person: their answers (data_request_done) name only the request.
	var requests []int64
	rq := db.NewSelect().Model((*DataRequest)(nil)).Column("id").Where("organisation_id = ?", sc.org.ID)
	if sc.household {
		rq = rq.Where("user_key IN (?)", bun.List(sc.userKeys))
	} else {
		rq = rq.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			return w.Where("person_id IN (?)", bun.List(sc.personIDs)).WhereOr("writer_person_id IN (?)", bun.List(sc.personIDs))
		})
	}
	if len(sc.userKeys) > 0 || !sc.household {
		if err := rq.Scan(ctx, &requests); err != nil {
			return nil, fmt.Errorf("load requests: %w", err)
		}
	}
	var out []engine.OutboxMessage
	for _, m := range candidates {
		var p messageRefs
		if json.Unmarshal([]byte(m.Payload), &p) != nil {
			continue
		}
		ours := slices.Contains(sc.orderIDs, p.OrderID) || slices.Contains(sc.instanceIDs, p.InstanceID) ||
			slices.Contains(invitations, p.InvitationID) || slices.Contains(memberships, p.MembershipID) ||
			slices.Contains(sc.personIDs, p.PersonID) ||
			(p.OrganisationID == sc.org.ID && slices.Contains(requests, p.RequestID)) ||
			(p.OrganisationID == sc.org.ID && slices.ContainsFunc(p.PersonIDs, func(id int64) bool { return slices.Contains(sc.personIDs, id) })) ||
			(p.OrganisationID == sc.org.ID && sc.household && slices.Contains(sc.userKeys, p.UserKey))
		if ours {
			out = append(out, m)
		}
	}
	return out, nil
}

// messageRefs are what a message's payload says it is about: one of
// these is set in every kind's payload.
type messageRefs struct {
	OrderID        int64   `json:"orderId"`
	InstanceID     int64   `json:"instanceId"`
	InvitationID   int64   `json:"invitationId"`
	MembershipID   int64   `json:"membershipId"`
	RequestID      int64   `json:"requestId"`
	PersonID       int64   `json:"personId"`
	PersonIDs      []int64 `json:"personIds"`
	OrganisationID int64   `json:"organisationId"`
	UserKey        string  `json:"userKey"`
}

// organisation is the organisation the message is from, found by what
// its payload names; 0 when it names nothing of any organisation's.
func (r messageRefs) organisation(ctx context.Context, db bun.IDB) (int64, error) {
	if r.OrganisationID != 0 {
		return r.OrganisationID, nil
	}
	var q *bun.SelectQuery
	switch {
	case r.OrderID != 0:
		q = db.NewSelect().Model((*engine.Order)(nil)).Column("organisation_id").Where("id = ?", r.OrderID)
	case r.InstanceID != 0:
		q = db.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("organisation_id").Where("id = ?", r.InstanceID)
	case r.InvitationID != 0:
		q = db.NewSelect().Model((*invitation.Invitation)(nil)).Column("organisation_id").Where("id = ?", r.InvitationID)
	case r.PersonID != 0:
		q = db.NewSelect().Model((*engine.Person)(nil)).Column("organisation_id").Where("id = ?", r.PersonID)
	case r.MembershipID != 0:
		q = db.NewSelect().TableExpr("memberships AS m").ColumnExpr("p.organisation_id").Join("JOIN membership_periods AS p ON p.id = m.period_id").
			Where("m.id = ?", r.MembershipID)
	default:
		return 0, nil
	}
	var ids []int64
	if err := q.Scan(ctx, &ids); err != nil {
		return 0, fmt.Errorf("load message's organisation: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}

// messagesTo are the organisation's messages with address among their
// recipients (compared whole, in any case), whatever they are about: a
// data request's answer names only the request, yet went to the
// household's addresses. Another organisation's message to the same
// address is not this one's.
func messagesTo(ctx context.Context, db bun.IDB, orgID int64, address string) ([]engine.OutboxMessage, error) {
	var candidates []engine.OutboxMessage
	if err := db.NewSelect().Model(&candidates).Where(engine.FoldSQL(db, "recipient")+" LIKE ?"+engine.LikeEscape, engine.ContainsPattern(engine.FoldText(address))).
		OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	var out []engine.OutboxMessage
	for _, m := range candidates {
		if !slices.ContainsFunc(recipients(m.Recipient), func(a string) bool { return strings.EqualFold(a, address) }) {
			continue
		}
		var p messageRefs
		if json.Unmarshal([]byte(m.Payload), &p) != nil {
			continue
		}
		org, err := p.organisation(ctx, db)
		if err != nil {
			return nil, err
		}
		if org == orgID {
			out = append(out, m)
		}
	}
	return out, nil
}

// recipients are the addresses of a message's recipient column.
func recipients(to string) []string {
	var out []string
	for _, a := range strings.Split(to, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func gatherMessages(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	msgs, err := scopeMessages(ctx, db, sc)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		out.Messages = append(out.Messages, ExportMessage{Kind: m.Kind, Recipient: m.Recipient, CreatedAt: m.CreatedAt.UTC(), SentAt: m.SentAt})
	}
	return nil
}

func gatherOptOuts(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.emails) == 0 {
		return nil
	}
	var rows []message.StoredOptOut
	if err := db.NewSelect().Model(&rows).Where("organisation_id = ? AND address IN (?)", sc.org.ID, bun.List(sc.emails)).
		OrderExpr("address, category").Scan(ctx); err != nil {
		return fmt.Errorf("load opt-outs: %w", err)
	}
	for _, r := range rows {
		out.OptOuts = append(out.OptOuts, ExportOptOut{Address: r.Address, Category: r.Category, CreatedAt: r.CreatedAt.UTC()})
	}
	return nil
}

func gatherInvitations(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.userKeys) == 0 {
		return nil
	}
	var rows []invitation.Invitation
	if err := db.NewSelect().Model(&rows).Where("organisation_id = ? AND user_key IN (?)", sc.org.ID, bun.List(sc.userKeys)).
		OrderExpr("id").Scan(ctx); err != nil {
		return fmt.Errorf("load invitations: %w", err)
	}
	for _, r := range rows {
		out.Invitations = append(out.Invitations, ExportInvitation{ID: r.ID, PeriodID: r.PeriodID, CreatedAt: r.CreatedAt.UTC(),
			ExpiresAt: r.ExpiresAt.UTC(), OpenedAt: r.OpenedAt, RevokedAt: r.RevokedAt})
	}
	return nil
}

// gatherMandates lists the direct-debit mandates of the export: a
// household's every mandate it gave; a person's only those about them,
// the ones they hold (holder_person_id is theirs) and the ones that paid an
// order with a line of theirs. Another holder's mandate of a household
// they are or were in is not theirs, nor one given after they left it.
func gatherMandates(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if len(sc.userKeys) == 0 {
		return nil
	}
	q := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Where("organisation_id = ? AND user_key IN (?)", sc.org.ID, bun.List(sc.userKeys))
	var rows []directdebit.DebitMandate
	if err := q.OrderExpr("id").Scan(ctx, &rows); err != nil {
		return fmt.Errorf("load mandates: %w", err)
	}
	var paid []int64
	if !sc.household && len(rows) > 0 {
		if err := db.NewSelect().TableExpr("orders AS o").ColumnExpr("DISTINCT o.debit_mandate_id").
			Join("JOIN order_lines AS l ON l.order_id = o.id").
			Where("o.organisation_id = ? AND o.debit_mandate_id IS NOT NULL AND l.person_id IN (?)", sc.org.ID, bun.List(sc.personIDs)).
			Scan(ctx, &paid); err != nil {
			return fmt.Errorf("load mandates: %w", err)
		}
	}
	for _, r := range rows {
		if !sc.household && !slices.Contains(paid, r.ID) && !sc.hasPerson(r.HolderPersonID) {
			continue
		}
		out.Mandates = append(out.Mandates, ExportMandate{Reference: r.Reference, CreditorID: r.CreditorID, Holder: r.Holder,
			IBAN: r.IBAN, BIC: r.BIC, Language: r.Language, Text: r.Text, TextVersion: r.TextVersion, SignedAt: r.SignedAt.UTC(), RevokedAt: r.RevokedAt})
	}
	return nil
}

// sessionTimes is what the export shows of a session row: never its id
// hash or its values (tokens).
type sessionTimes struct {
	bun.BaseModel `bun:"table:sessions"`
	CreatedAt     time.Time `bun:"created_at"`
	LastSeenAt    time.Time `bun:"last_seen_at"`
	ExpiresAt     time.Time `bun:"expires_at"`
}

// gatherSessions lists the household's sessions kept in the database
// (not those of a Redis store, which the engine cannot see): those
// started in this organisation (the store's organisation_id, from the
// session's organisation attribute) under the household's user key. The
// same user key in another club is another household.
func gatherSessions(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	if !sc.household || len(sc.userKeys) == 0 {
		return nil
	}
	var rows []sessionTimes
	if err := db.NewSelect().Model(&rows).Column("created_at", "last_seen_at", "expires_at").
		Where("organisation_id = ? AND user_key IN (?)", sc.org.ID, bun.List(sc.userKeys)).OrderExpr("created_at").Scan(ctx); err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	for _, r := range rows {
		out.Sessions = append(out.Sessions, ExportSession{CreatedAt: r.CreatedAt.UTC(), LastSeenAt: r.LastSeenAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()})
	}
	return nil
}

func gatherRequests(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	q := db.NewSelect().Model(&out.Requests).Where("organisation_id = ?", sc.org.ID)
	if sc.household {
		q = q.Where("user_key IN (?)", bun.List(sc.userKeys))
	} else {
		q = q.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			return w.Where("person_id IN (?)", bun.List(sc.personIDs)).WhereOr("writer_person_id IN (?)", bun.List(sc.personIDs))
		})
	}
	if err := q.OrderExpr("id").Scan(ctx); err != nil {
		return fmt.Errorf("load requests: %w", err)
	}
	if out.Requests == nil {
		out.Requests = []DataRequest{}
	}
	return nil
}

// gatherConsents is the export's consents: those of its persons.
func gatherConsents(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	consents, err := engine.PersonConsents(ctx, db, sc.org.ID, sc.personIDs)
	if err != nil {
		return err
	}
	out.Consents = append(out.Consents, consents...)
	return nil
}
