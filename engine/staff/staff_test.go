package staff_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/staff"
)

func TestStaffRecordsAndAudit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := demodata.SeedDemo(ctx, db, 0, clock.Now()); err != nil {
			t.Fatal(err)
		}
		svc := engine.NewService(db, nil)

		// Bad input is refused field by field and changes nothing.
		_, err := staff.Of(svc).AddStaff(ctx, engine.CommandLine, 1, staff.StaffInput{Email: "not an address", Name: "", Role: "boss"})
		e, ok := engine.AsError(err)
		if !ok || e.Code != engine.CodeValidation || len(e.Fields) != 3 {
			t.Fatalf("invalid staff: %v", err)
		}
		if _, err := staff.Of(svc).AddStaff(ctx, engine.CommandLine, 99, staff.StaffInput{Email: "a@example.org", Name: "A", Role: staff.RoleAdmin}); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("unknown organisation: %v", err)
		}
		if staff, _ := staff.Of(svc).ListStaff(ctx, 1); len(staff) != 0 {
			t.Fatalf("refused input stored: %+v", staff)
		}

		m, err := staff.Of(svc).AddStaff(ctx, engine.CommandLine, 1, staff.StaffInput{Email: " Kim@Example.ORG ", Name: "Kim", Role: staff.RoleRegistrar})
		if err != nil || m.Email != "kim@example.org" {
			t.Fatalf("add: %+v %v", m, err)
		}
		if _, err := staff.Of(svc).AddStaff(ctx, engine.CommandLine, 1, staff.StaffInput{Email: "kim@example.org", Name: "Kim", Role: staff.RoleAdmin}); engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatalf("second record of one address: %v", err)
		}

		// An unverified address never binds; a verified one does, once.
		if _, err := staff.Of(svc).StaffSignIn(ctx, 1, staff.StaffIdentity{Subject: "s1", Email: "kim@example.org"}); engine.ErrorCode(err) != engine.CodeUnauthorized {
			t.Fatalf("unverified sign-in: %v", err)
		}
		got, err := staff.Of(svc).StaffSignIn(ctx, 1, staff.StaffIdentity{Subject: "s1", Email: "KIM@example.org", EmailVerified: true})
		if err != nil || got.ID != m.ID || got.Subject == nil || *got.Subject != "s1" {
			t.Fatalf("verified sign-in: %+v %v", got, err)
		}
		if _, err := staff.Of(svc).StaffSignIn(ctx, 1, staff.StaffIdentity{Subject: "s2", Email: "kim@example.org", EmailVerified: true}); engine.ErrorCode(err) != engine.CodeUnauthorized {
			t.Fatalf("a second subject took a bound record: %v", err)
		}
		if got, err := staff.Of(svc).StaffSignIn(ctx, 1, staff.StaffIdentity{Subject: "s1"}); err != nil || got.ID != m.ID {
			t.Fatalf("sign-in by subject: %+v %v", got, err)
		}
		// The binding is per organisation.
		if _, err := staff.Of(svc).StaffSignIn(ctx, 2, staff.StaffIdentity{Subject: "s1"}); engine.ErrorCode(err) != engine.CodeUnauthorized {
			t.Fatalf("subject bound in another organisation: %v", err)
		}

		// Removed: no sign-in; added again: a fresh binding.
		if err := staff.Of(svc).RemoveStaff(ctx, engine.CommandLine, 1, "kim@example.org"); err != nil {
			t.Fatal(err)
		}
		if err := staff.Of(svc).RemoveStaff(ctx, engine.CommandLine, 1, "kim@example.org"); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Fatalf("second removal: %v", err)
		}
		if _, err := staff.Of(svc).StaffSignIn(ctx, 1, staff.StaffIdentity{Subject: "s1"}); engine.ErrorCode(err) != engine.CodeUnauthorized {
			t.Fatalf("removed staff signed in: %v", err)
		}
		again, err := staff.Of(svc).AddStaff(ctx, engine.CommandLine, 1, staff.StaffInput{Email: "kim@example.org", Name: "Kim B", Role: staff.RoleTreasurer})
		if err != nil || again.ID != m.ID || again.Subject != nil || !again.Active() || again.Role != staff.RoleTreasurer {
			t.Fatalf("added again: %+v %v", again, err)
		}

		// Every change is in the audit log, newest first, with before and after.
		log, err := svc.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, r := range log {
			actions = append(actions, r.Action)
		}
		want := []string{"staff.enable", "staff.remove", "staff.bind", "staff.add"}
		if len(actions) != len(want) {
			t.Fatalf("audit actions %v, want %v", actions, want)
		}
		for i := range want {
			if actions[i] != want[i] {
				t.Fatalf("audit actions %v, want %v", actions, want)
			}
		}
		if r := log[1]; r.Actor != "command line" || r.BeforeJSON == "" || r.AfterJSON == "" || r.TargetID == "" {
			t.Fatalf("removal entry: %+v", r)
		}
		if r := log[2]; r.StaffID == nil || *r.StaffID != m.ID {
			t.Fatalf("binding entry names no staff: %+v", r)
		}

		// The log is append-only in the database itself.
		if _, err := db.NewUpdate().Model((*engine.AuditRecord)(nil)).Set("action = 'forged'").Where("id = ?", log[0].ID).Exec(ctx); err == nil {
			t.Fatal("an audit row was updated")
		}
		if _, err := db.NewDelete().Model((*engine.AuditRecord)(nil)).Where("id = ?", log[0].ID).Exec(ctx); err == nil {
			t.Fatal("an audit row was deleted")
		}

		// An action's audit entry goes with its transaction.
		err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := svc.Audit(ctx, tx, engine.CommandLine, engine.AuditEntry{OrganisationID: 1, Action: "test.rollback", TargetType: "test", TargetID: "1"}); err != nil {
				return err
			}
			return engine.Errorf(engine.CodeConflict, "roll back")
		})
		if engine.ErrorCode(err) != engine.CodeConflict {
			t.Fatal(err)
		}
		if after, _ := svc.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1}); len(after) != len(log) {
			t.Fatalf("a rolled-back action left its audit entry: %d rows", len(after))
		}
	})
}

func TestStaffRoles(t *testing.T) {
	cases := []struct {
		role, min staff.StaffRole
		want      bool
	}{
		{staff.RoleViewer, staff.RoleViewer, true},
		{staff.RoleViewer, staff.RoleRegistrar, false},
		{staff.RoleRegistrar, staff.RoleViewer, true},
		{staff.RoleTreasurer, staff.RoleRegistrar, true},
		{staff.RoleTreasurer, staff.RoleAdmin, false},
		{staff.RoleAdmin, staff.RoleTreasurer, true},
		{"", staff.RoleViewer, false},
		{"root", staff.RoleViewer, false},
	}
	for _, c := range cases {
		if got := c.role.AtLeast(c.min); got != c.want {
			t.Errorf("%q.AtLeast(%q) = %v", c.role, c.min, got)
		}
	}
}
