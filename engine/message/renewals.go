package message

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Renewal prompts: when an organisation's next period of the same kind
// (the same registration definition) accepts registrations, the members of
// the period that ends before it who have not registered for it yet get a
// link into it. One message per household (the user key that registered
// them, the identity of the link) and next period, naming only the persons
// still to register; the registration the link starts is pre-filled with
// last season's answers (prefillFromLastSeason).

// Message kinds of renewal prompts.
const (
	KindRenewalPrompt engine.MessageKind = "renewal_prompt"
)

// RenewalPromptPayload names a household's renewal prompt.
type RenewalPromptPayload struct {
	OrganisationID int64   `json:"organisationId"`
	EndingPeriodID int64   `json:"endingPeriodId"`
	NextPeriodID   int64   `json:"nextPeriodId"`
	UserKey        string  `json:"userKey"`
	PersonIDs      []int64 `json:"personIds"`
}

// previousPeriod is the period of the same organisation and kind that
// ended last before next started, or nil.
func previousPeriod(periods map[int64]engine.MembershipPeriod, next engine.MembershipPeriod) *engine.MembershipPeriod {
	var prev *engine.MembershipPeriod
	for _, p := range periods {
		if p.ID == next.ID || p.OrganisationID != next.OrganisationID || p.DefinitionKey != next.DefinitionKey ||
			!p.StartDate.Before(next.StartDate) || !p.EndDate.Before(next.EndDate) {
			continue
		}
		if prev == nil || p.EndDate.After(prev.EndDate) || (p.EndDate.Equal(prev.EndDate) && p.ID > prev.ID) {
			prev = &p
		}
	}
	return prev
}

// QueueRenewalPrompts queues the renewal prompt of every household with
// an active membership in a period whose next period accepts
// registrations, for the persons not registered (pending or active) in the
// next one, from the organisation's renewal lead time
// (Settings.RenewalLeadDays) before the ending period's end. The keys
// name the next period and the household, so re-runs, every instance's run
// and a household's second person queue one message. It returns how many
// households it found.
func QueueRenewalPrompts(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	now = now.UTC()
	settings, err := AllMessageSettings(ctx, db)
	if err != nil {
		return 0, err
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	periods, err := periodsByID(ctx, db)
	if err != nil {
		return 0, err
	}
	ids := make([]int64, 0, len(periods))
	for id := range periods {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	n := 0
	for _, id := range ids {
		next := periods[id]
		if !next.AcceptsRegistrations(now) {
			continue
		}
		prev := previousPeriod(periods, next)
		if prev == nil {
			continue
		}
		end := time.Date(prev.EndDate.Year(), prev.EndDate.Month(), prev.EndDate.Day(), 0, 0, 0, 0, time.UTC)
		if today.Before(end.AddDate(0, 0, -settings.Of(next.OrganisationID).RenewalLeadDays)) {
			continue
		}
		households, err := householdsToRenew(ctx, db, prev.ID, next.ID, next.OrganisationID)
		if err != nil {
			return n, err
		}
		msgs := make([]*engine.OutboxMessage, len(households))
		for i, h := range households {
			payload, _ := json.Marshal(RenewalPromptPayload{OrganisationID: next.OrganisationID, EndingPeriodID: prev.ID,
				NextPeriodID: next.ID, UserKey: h.userKey, PersonIDs: h.persons})
			msgs[i] = &engine.OutboxMessage{Kind: KindRenewalPrompt, DedupKey: renewalKey(next.ID, h.userKey), Payload: string(payload), CreatedAt: now}
		}
		if err := store.QueueMessagesNow(ctx, db, msgs); err != nil {
			return n, err
		}
		n += len(msgs)
	}
	return n, nil
}

// renewalKey is a renewal prompt's dedup key: the next period and the
// household, whose user key is hashed so that the key (listed by `portal
// jobs`) does not carry the link's identity.
func renewalKey(nextPeriodID int64, userKey string) string {
	sum := sha256.Sum256([]byte(userKey))
	return fmt.Sprintf("%s:period:%d:household:%s", KindRenewalPrompt, nextPeriodID, hex.EncodeToString(sum[:12]))
}

// household is a user key and the persons it is prompted to renew.
type household struct {
	userKey string
	persons []int64
}

// householdsToRenew groups the persons with an active membership in the
// ending period and none pending or active in the next one by household:
// the user key of the registration that made the membership, else the
// first user key linked to the person (memberships imported without a
// registration). A person no user key may register is left out: there is
// no link to send.
func householdsToRenew(ctx context.Context, db bun.IDB, endingID, nextID, orgID int64) ([]household, error) {
	var rows []struct {
		PersonID int64   `bun:"person_id"`
		UserKey  *string `bun:"user_key"`
	}
	err := db.NewSelect().TableExpr("memberships AS m").
		ColumnExpr("m.person_id").
		ColumnExpr("COALESCE(pi.user_key, (SELECT MIN(up.user_key) FROM user_persons AS up WHERE up.person_id = m.person_id AND up.organisation_id = ?)) AS user_key", orgID).
		Join("LEFT JOIN process_instances AS pi ON pi.id = m.process_instance_id").
		Where("m.period_id = ? AND m.status = ?", endingID, engine.MembershipActive).
		Where("NOT EXISTS (SELECT 1 FROM memberships AS n WHERE n.person_id = m.person_id AND n.period_id = ? AND n.status IN (?))",
			nextID, bun.List([]engine.MembershipStatus{engine.MembershipPending, engine.MembershipActive})).
		OrderExpr("m.person_id").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("find members to renew: %w", err)
	}
	var out []household
	index := map[string]int{}
	for _, r := range rows {
		if r.UserKey == nil || *r.UserKey == "" {
			continue
		}
		i, ok := index[*r.UserKey]
		if !ok {
			i = len(out)
			index[*r.UserKey] = i
			out = append(out, household{userKey: *r.UserKey})
		}
		if !slices.Contains(out[i].persons, r.PersonID) {
			out[i].persons = append(out[i].persons, r.PersonID)
		}
	}
	return out, nil
}

// RenewalPrompt is what a renewal prompt says.
type RenewalPrompt struct {
	Organisation engine.Organisation
	Ending       engine.MembershipPeriod
	Next         engine.MembershipPeriod
	// Persons are the household's persons still to register for the next
	// period when the message goes out; none: nothing is sent.
	Persons    []engine.Person
	Recipients []string
	// Language is the household's last registration's (HouseholdLanguage).
	Language string
}

// LoadRenewalPrompt gathers a renewal prompt, leaving out the persons who
// registered since it was queued.
func LoadRenewalPrompt(ctx context.Context, db bun.IDB, p RenewalPromptPayload) (*RenewalPrompt, error) {
	r := &RenewalPrompt{}
	if err := db.NewSelect().Model(&r.Organisation).Where("id = ?", p.OrganisationID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "organisation")
	}
	for _, x := range []struct {
		id   int64
		into *engine.MembershipPeriod
	}{{p.EndingPeriodID, &r.Ending}, {p.NextPeriodID, &r.Next}} {
		period, err := store.LoadPeriod(ctx, db, x.id)
		if err != nil {
			return nil, err
		}
		*x.into = *period
	}
	statuses, err := store.MembershipStatuses(ctx, db, p.NextPeriodID, p.PersonIDs)
	if err != nil {
		return nil, err
	}
	var open []int64
	for _, id := range p.PersonIDs {
		if statuses[id] == engine.PersonAvailable {
			open = append(open, id)
		}
	}
	if r.Persons, err = store.PersonsByID(ctx, db, open); err != nil {
		return nil, err
	}
	r.Recipients = store.UniqueAddresses(r.Persons)
	if r.Language, err = HouseholdLanguage(ctx, db, p.OrganisationID, p.UserKey); err != nil {
		return nil, err
	}
	r.Ending.Localize(r.Language)
	r.Next.Localize(r.Language)
	return r, nil
}
