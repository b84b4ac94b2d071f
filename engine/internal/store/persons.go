package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
)

// Store functions for persons (persons) and their links to user keys (user_persons).

// LinkedPersons lists the persons userKey may register in an organisation.
func LinkedPersons(ctx context.Context, db bun.IDB, userKey string, orgID int64) ([]engine.Person, error) {
	var persons []engine.Person
	err := db.NewSelect().Model(&persons).
		Join("JOIN user_persons AS up ON up.person_id = person.id").
		Where("up.user_key = ? AND up.organisation_id = ?", userKey, orgID).
		Order("person.date_of_birth ASC", "person.id ASC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load linked persons: %w", err)
	}
	return persons, nil
}

// PersonsByID loads persons in the order of ids.
func PersonsByID(ctx context.Context, db bun.IDB, ids []int64) ([]engine.Person, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []engine.Person
	if err := db.NewSelect().Model(&rows).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons: %w", err)
	}
	byID := make(map[int64]engine.Person, len(rows))
	for _, p := range rows {
		byID[p.ID] = p
	}
	out := make([]engine.Person, 0, len(ids))
	for _, id := range ids {
		if p, ok := byID[id]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// LinkedAmong returns which of personIDs are still linked to userKey in an
// organisation. On PostgreSQL the links are read FOR SHARE, so an unlink
// running at the same time waits for this transaction instead of slipping
// in after the check; SQLite runs one writer at a time anyway.
func LinkedAmong(ctx context.Context, tx bun.Tx, userKey string, orgID int64, personIDs []int64) ([]int64, error) {
	var linked []int64
	q := tx.NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").
		Where("user_key = ? AND organisation_id = ? AND person_id IN (?)", userKey, orgID, bun.List(personIDs))
	if tx.Dialect().Name() == dialect.PG {
		q = q.For("SHARE")
	}
	if err := q.Scan(ctx, &linked); err != nil {
		return nil, fmt.Errorf("check person links: %w", err)
	}
	return linked, nil
}

// ActiveMembersOf loads the persons whose membership from an instance is active, by id.
func ActiveMembersOf(ctx context.Context, db bun.IDB, instanceID int64) ([]engine.Person, error) {
	var persons []engine.Person
	if err := db.NewSelect().Model(&persons).
		Where("id IN (?)", db.NewSelect().Model((*engine.Membership)(nil)).Column("person_id").
			Where("process_instance_id = ? AND status = ?", instanceID, engine.MembershipActive)).
		Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons to confirm: %w", err)
	}
	return persons, nil
}

// UniqueAddresses are the persons' e-mail addresses in order, each once
// (compared without case), skipping persons without one.
func UniqueAddresses(persons []engine.Person) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range persons {
		addr := strings.TrimSpace(p.Email)
		if addr != "" && !seen[strings.ToLower(addr)] {
			seen[strings.ToLower(addr)] = true
			out = append(out, addr)
		}
	}
	return out
}

// SameName says whether a and b are one name as people write it: the
// same words whatever their order and case, a comma between last and
// first name or not ("Morgan, Alex", "ALEX MORGAN", "Alex Morgan").
func SameName(a, b string) bool {
	words := func(s string) []string {
		f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
		slices.Sort(f)
		return f
	}
	wa := words(a)
	return len(wa) > 0 && slices.Equal(wa, words(b))
}

// HouseholdPersonNamed is the one person linked to the household of
// userKey whose whole name is name (SameName); ok is false when none or
// more than one is. It is how the person behind a name a member or a bank
// wrote (a mandate's account holder, a transfer's payer) is recorded at
// the write, once, so that later their records are found by that id and
// never again by a name.
func HouseholdPersonNamed(ctx context.Context, db bun.IDB, orgID int64, userKey, name string) (id int64, ok bool, err error) {
	persons, err := LinkedPersons(ctx, db, userKey, orgID)
	if err != nil {
		return 0, false, err
	}
	for _, p := range persons {
		if SameName(name, p.FirstName+" "+p.LastName) {
			if ok {
				return 0, false, nil // two of the household: nobody in particular
			}
			id, ok = p.ID, true
		}
	}
	return id, ok, nil
}

// PersonRef is a person id to store in a nullable column: nil unless ok.
func PersonRef(id int64, ok bool) *int64 {
	if !ok {
		return nil
	}
	return &id
}
