package engine_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/registration"
)

// The tests below follow the rows of the spec's transition table, as the
// engine implements them, and then the errors around them.

// TestLoadNewInstanceStartsInit: no process yet -> INIT at person selection.
func TestLoadNewInstanceStartsInit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		form, created := f.Load(engine.DemoUserKey)
		if !created {
			t.Errorf("created = false for a user key without a process")
		}
		if form.State != engine.StateInit || form.Step != 0 || form.Question != nil || form.PaymentURL != "" || form.TotalSteps != enginetest.DemoSteps {
			t.Errorf("form = state %s step %d question %v paymentUrl %q total %d, want INIT step 0, no question, no link, %d steps",
				form.State, form.Step, form.Question, form.PaymentURL, form.TotalSteps, enginetest.DemoSteps)
		}
		type personWant struct {
			status    string
			canSelect bool
		}
		want := map[int64]personWant{
			enginetest.Alex:  {engine.PersonAvailable, true},
			enginetest.Sam:   {engine.PersonAvailable, true},
			enginetest.Robin: {engine.PersonAvailable, true},
			enginetest.Jamie: {engine.PersonRegistered, false},
		}
		// Persons are listed oldest first.
		if got := enginetest.PersonIDs(form); !slices.Equal(got, []int64{enginetest.Alex, enginetest.Sam, enginetest.Jamie, enginetest.Robin}) {
			t.Errorf("persons = %v, want %v", got, []int64{enginetest.Alex, enginetest.Sam, enginetest.Jamie, enginetest.Robin})
		}
		for _, p := range form.People {
			w := want[p.ID]
			if p.Status != w.status || p.CanSelect != w.canSelect || p.Selected || p.Answer != nil {
				t.Errorf("person %d: status %q canSelect %v selected %v answer %v, want %q canSelect %v, not selected, no answer",
					p.ID, p.Status, p.CanSelect, p.Selected, p.Answer, w.status, w.canSelect)
			}
		}

		again, created := f.Load(engine.DemoUserKey)
		if created {
			t.Errorf("second load: created = true, want false")
		}
		if again.ProcessID != form.ProcessID || again.State != engine.StateInit || again.Step != 0 {
			t.Errorf("second load = process %d state %s step %d, want process %d INIT step 0", again.ProcessID, again.State, again.Step, form.ProcessID)
		}
		if n := f.Count((*engine.ProcessInstance)(nil), "user_key = ?", engine.DemoUserKey); n != 1 {
			t.Errorf("%d instances for the user key, want 1", n)
		}
	})
}

// TestNextSelectionStartsRunning: INIT + next with selected persons -> RUNNING at step 1.
func TestNextSelectionStartsRunning(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	tests := []struct {
		name string
		in   []registration.PersonInput
		want []int64
	}{
		{name: "ids only", in: []registration.PersonInput{{ID: enginetest.Alex}, {ID: enginetest.Robin}}, want: []int64{enginetest.Alex, enginetest.Robin}},
		{name: "selected flags", in: []registration.PersonInput{{ID: enginetest.Alex, Selected: &yes}, {ID: enginetest.Sam, Selected: &no}, {ID: enginetest.Robin, Selected: &yes}}, want: []int64{enginetest.Alex, enginetest.Robin}},
		{name: "unselected registered person is ignored", in: []registration.PersonInput{{ID: enginetest.Sam}, {ID: enginetest.Jamie, Selected: &no}}, want: []int64{enginetest.Sam}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := enginetest.NewFixture(t, db)
				initial, _ := f.Load(engine.DemoUserKey)
				form, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: initial.ProcessIDString(), Step: 0, People: tc.in})
				if err != nil {
					t.Fatalf("next: %v", err)
				}
				if form.State != engine.StateRunning || form.Step != 1 || form.ProcessID != initial.ProcessID {
					t.Fatalf("form = process %d state %s step %d, want process %d RUNNING step 1", form.ProcessID, form.State, form.Step, initial.ProcessID)
				}
				q := form.Question
				if q == nil || q.Name != "emergency_phone" || q.Type != engine.TypeText || !q.Required || q.Text != "Emergency contact phone number" {
					t.Errorf("question = %+v, want the required TXT emergency_phone", q)
				}
				if got := enginetest.PersonIDs(form); !slices.Equal(got, tc.want) {
					t.Errorf("persons = %v, want %v", got, tc.want)
				}
				for _, p := range form.People {
					if !p.Selected || p.Answer != nil || p.Hide {
						t.Errorf("person %d: selected %v answer %v hide %v, want selected, no answer, shown", p.ID, p.Selected, p.Answer, p.Hide)
					}
				}
				inst := f.Instance(initial.ProcessID)
				if inst.Status != engine.StateRunning || !slices.Equal(inst.SelectedPersons, tc.want) || inst.CurrentStepID == nil {
					t.Errorf("stored instance = %s persons %v step %s, want RUNNING %v on the first step", inst.Status, inst.SelectedPersons, enginetest.Deref(inst.CurrentStepID), tc.want)
				}
				if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND data_key = ?", inst.ID, engine.DataSelected); n != len(tc.want) {
					t.Errorf("%d selection rows, want %d", n, len(tc.want))
				}
			})
		})
	}
}

// TestNextAnswersAdvanceStep: RUNNING + next with answers -> RUNNING at the next step.
func TestNextAnswersAdvanceStep(t *testing.T) {
	t.Parallel()
	type question struct {
		name     string
		typ      engine.QuestionType
		required bool
		hidden   []int64
	}
	// The demo definition's questions an answer leads to. Without a
	// transfer, transfer_club (5) is not on the path: 4 leads to 6.
	next := map[int]question{
		2: {name: "shirt_size", typ: engine.TypeDropdown, required: true},
		3: {name: "insurance", typ: engine.TypeCheckbox},
		4: {name: "transfer", typ: engine.TypeCheckbox},
		6: {name: "guardian_consent", typ: engine.TypeAccept, required: true, hidden: []int64{enginetest.Alex}},
		7: {name: "main_contact", typ: engine.TypeOne, required: true},
		8: {name: "terms", typ: engine.TypeAccept, required: true},
	}
	path := []int{1, 2, 3, 4, 6, 7, 8}
	// Answers stored after each step: hidden persons store none.
	stored := map[int]int{1: 2, 2: 4, 3: 6, 4: 8, 6: 9, 7: 11}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		for i, step := range path[:len(path)-1] {
			want, wantStep := next[path[i+1]], path[i+1]
			ok := t.Run(fmt.Sprintf("step %d to %s", step, want.name), func(t *testing.T) {
				form := r.Next(enginetest.DemoAnswers(step, r.Persons))
				if form.State != engine.StateRunning || form.Step != wantStep {
					t.Fatalf("form = state %s step %d, want RUNNING step %d", form.State, form.Step, wantStep)
				}
				// Until transfer is answered, transfer_club counts as ahead.
				wantLen := len(path)
				if wantStep <= 4 {
					wantLen++
				}
				if form.Position != i+2 || form.PathLength != wantLen {
					t.Errorf("form at question %d of %d, want %d of %d", form.Position, form.PathLength, i+2, wantLen)
				}
				q := form.Question
				if q == nil || q.Name != want.name || q.Type != want.typ || q.Required != want.required {
					t.Fatalf("question = %+v, want %s %s required=%v", q, want.name, want.typ, want.required)
				}
				for _, p := range form.People {
					if p.Hide != slices.Contains(want.hidden, p.ID) {
						t.Errorf("person %d hide = %v, want %v", p.ID, p.Hide, !p.Hide)
					}
				}
				if n := f.Count((*engine.ProcessData)(nil), "instance_id = ? AND data_key = ?", r.ID, engine.DataAnswer); n != stored[step] {
					t.Errorf("%d answers stored, want %d", n, stored[step])
				}
				if wantStep == 2 {
					var opts []string
					for _, o := range q.Options {
						opts = append(opts, o.Value+"="+o.Label)
					}
					want := []string{"XS=Extra small", "S=Small", "M=Medium", "L=Large", "XL=Extra large"}
					if !slices.Equal(opts, want) {
						t.Errorf("options = %v, want %v", opts, want)
					}
				}
			})
			if !ok {
				return
			}
		}
	})
}

// TestNextLastAnswerCommits: RUNNING + the last answer -> DONE with pending
// memberships, an unpaid order and a payment link.
func TestNextLastAnswerCommits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		form := r.Commit()
		if form.Step != enginetest.DemoSteps+1 || form.Question != nil || form.PaymentURL == "" {
			t.Fatalf("form = step %d question %v paymentUrl %q, want step %d, no question, a link", form.Step, form.Question, form.PaymentURL, enginetest.DemoSteps+1)
		}
		if got := enginetest.PersonIDs(form); !slices.Equal(got, []int64{enginetest.Alex, enginetest.Robin}) {
			t.Errorf("persons = %v, want %v", got, []int64{enginetest.Alex, enginetest.Robin})
		}
		for _, p := range form.People {
			if p.Status != engine.PersonPendingPayment || p.PaymentURL != form.PaymentURL || !p.Selected {
				t.Errorf("person %d: status %q paymentUrl %q selected %v, want Pending Payment with the form's link", p.ID, p.Status, p.PaymentURL, p.Selected)
			}
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateDone || inst.CurrentStepID != nil {
			t.Errorf("stored instance = %s step %s, want DONE without a current step", inst.Status, enginetest.Deref(inst.CurrentStepID))
		}

		var ms []string
		for _, m := range f.Memberships(r.ID) {
			ms = append(ms, fmt.Sprintf("%d type=%d %s %s", m.PersonID, m.MembershipTypeID, m.MemberType, m.Status))
		}
		wantMs := []string{"1 type=1 RENEWAL Pending Payment", "3 type=2 NEW Pending Payment"}
		if !slices.Equal(ms, wantMs) {
			t.Errorf("memberships = %q, want %q", ms, wantMs)
		}

		orders := f.Orders(r.ID)
		if len(orders) != 1 {
			t.Fatalf("%d orders, want 1", len(orders))
		}
		order := orders[0]
		var lines []string
		for _, l := range order.Lines {
			lines = append(lines, fmt.Sprintf("%s %s %d", enginetest.Deref(l.PersonID), l.Code, l.AmountMinor))
		}
		// Alex renews with insurance, Robin joins; both inside the early-bird window.
		wantLines := []string{
			"1 adult-fee 12000", "1 loyalty -1000", "1 early-bird -1200", "1 insurance 1500",
			"3 junior-fee 6000", "3 joining-fee 1500", "3 early-bird -600",
			"nil admin-fee 250",
		}
		if !slices.Equal(lines, wantLines) {
			t.Errorf("order lines = %q\nwant %q", lines, wantLines)
		}
		if order.Status != engine.OrderUnpaid || order.TotalMinor != 18450 || order.Currency != "EUR" || order.UserKey != engine.DemoUserKey {
			t.Errorf("order = %s %d %s of %q, want Unpaid 18450 EUR of %q", order.Status, order.TotalMinor, order.Currency, order.UserKey, engine.DemoUserKey)
		}

		payments := f.Payments(r.ID)
		if len(payments) != 1 {
			t.Fatalf("%d payments, want 1", len(payments))
		}
		p := payments[0]
		// The form carries the stable pay link of the order; the attempt has
		// the provider's checkout, which the link leads to.
		if want := "/pay/" + order.PayReference + "?amount=184.50&reference=" + order.PayReference; form.PaymentURL != want {
			t.Errorf("form link = %q, want %q", form.PaymentURL, want)
		}
		if p.Status != engine.PaymentPending || p.Reference != f.AttemptOf(form.PaymentURL) || p.AmountMinor != 18450 ||
			!strings.HasPrefix(p.PaymentURL, "http://portal.test/dev/pay/"+p.Reference) || p.ProviderID == nil || p.ExpiresAt == nil {
			t.Errorf("payment = %s %s %d %q, want PENDING %s 18450 with its checkout", p.Status, p.Reference, p.AmountMinor, p.PaymentURL, f.AttemptOf(form.PaymentURL))
		}

		later, created := f.Load(engine.DemoUserKey)
		if created || later.ProcessID != r.ID || later.State != engine.StateDone || later.Step != enginetest.DemoSteps+1 {
			t.Fatalf("later load = created %v process %d state %s step %d, want the DONE process %d", created, later.ProcessID, later.State, later.Step, r.ID)
		}
		if later.PaymentURL != form.PaymentURL {
			t.Errorf("later load link = %q, want the open attempt's %q", later.PaymentURL, form.PaymentURL)
		}
		for _, p := range later.People {
			if p.Status != engine.PersonPendingPayment || p.PaymentURL != form.PaymentURL {
				t.Errorf("later load, person %d: status %q link %q, want Pending Payment with the link", p.ID, p.Status, p.PaymentURL)
			}
		}
		if n := len(f.Payments(r.ID)); n != 1 {
			t.Errorf("%d payment attempts after a later load, want 1", n)
		}
	})
}

// TestResumeSuspended: SUSPENDED (or RESUME) + resume -> RUNNING with the
// saved answers; resuming a running process changes nothing.
func TestResumeSuspended(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from     engine.ProcessState
		wantBump bool
	}{
		{from: engine.StateSuspended, wantBump: true},
		{from: engine.StateResume, wantBump: true},
		{from: engine.StateRunning, wantBump: false},
	}
	for _, tc := range tests {
		t.Run("from "+string(tc.from), func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := enginetest.NewFixture(t, db)
				r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
				r.AdvanceTo(4)
				// Back to the answered insurance question, so that the current step has saved answers.
				if _, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, nil); err != nil {
					t.Fatalf("back: %v", err)
				}
				if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?", tc.from).Where("id = ?", r.ID).Exec(f.Ctx); err != nil {
					t.Fatalf("set status: %v", err)
				}
				before := f.Instance(r.ID)

				form, err := registration.Of(f.Svc).Resume(f.Ctx, r.UserKey, r.PID)
				if err != nil {
					t.Fatalf("resume: %v", err)
				}
				if form.State != engine.StateRunning || form.Step != 3 || form.Question == nil || form.Question.Name != "insurance" {
					t.Fatalf("form = state %s step %d question %+v, want RUNNING at step 3 insurance", form.State, form.Step, form.Question)
				}
				if got, want := enginetest.FormAnswers(form), map[int64]string{enginetest.Alex: "1", enginetest.Robin: "0"}; !maps.Equal(got, want) {
					t.Errorf("answers = %v, want the saved %v", got, want)
				}
				after := f.Instance(r.ID)
				if after.Status != engine.StateRunning {
					t.Errorf("stored status = %s, want RUNNING", after.Status)
				}
				if bumped := after.Version != before.Version; bumped != tc.wantBump {
					t.Errorf("version %d -> %d, want a change: %v", before.Version, after.Version, tc.wantBump)
				}
				r.Form = form
				if next := r.Next(enginetest.DemoAnswers(3, r.Persons)); next.Step != 4 {
					t.Errorf("answering after resume: step %d, want 4", next.Step)
				}
			})
		})
	}
}

// TestResetFromRunning: reset -> INIT at person selection, every answer deleted.
func TestResetFromRunning(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.AdvanceTo(3)
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID); n == 0 {
			t.Fatalf("no process data before the reset")
		}

		form, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID)
		if err != nil {
			t.Fatalf("reset: %v", err)
		}
		if form.State != engine.StateInit || form.Step != 0 || form.Question != nil || form.ProcessID != r.ID || len(form.People) != 4 {
			t.Fatalf("form = process %d state %s step %d question %v persons %d, want process %d INIT step 0 with 4 persons",
				form.ProcessID, form.State, form.Step, form.Question, len(form.People), r.ID)
		}
		for _, p := range form.People {
			if p.Selected {
				t.Errorf("person %d is still selected", p.ID)
			}
		}
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID); n != 0 {
			t.Errorf("%d process data rows after the reset, want 0", n)
		}
		inst := f.Instance(r.ID)
		if inst.Status != engine.StateInit || inst.CurrentStepID != nil || len(inst.SelectedPersons) != 0 {
			t.Errorf("stored instance = %s step %s persons %v, want INIT, no step, no persons", inst.Status, enginetest.Deref(inst.CurrentStepID), inst.SelectedPersons)
		}

		again := f.Start(engine.DemoUserKey, enginetest.Sam)
		if again.ID != r.ID {
			t.Errorf("after the reset the registration is process %d, want the same %d", again.ID, r.ID)
		}
		if got := enginetest.FormAnswers(again.Form); !maps.Equal(got, map[int64]string{enginetest.Sam: "<nil>"}) {
			t.Errorf("first question after the reset has answers %v, want none", got)
		}
	})
}

// TestResetFromDone: reset of a committed registration -> INIT; memberships,
// order and pending payments are cancelled, not deleted, and committing again works.
func TestResetFromDone(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		first := f.AttemptOf(r.Commit().PaymentURL)

		form, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID)
		if err != nil {
			t.Fatalf("reset: %v", err)
		}
		if form.State != engine.StateInit || form.Step != 0 {
			t.Fatalf("form = state %s step %d, want INIT step 0", form.State, form.Step)
		}
		for _, p := range form.People {
			if p.ID == enginetest.Jamie {
				continue
			}
			if p.Status != engine.PersonAvailable || !p.CanSelect || p.Selected {
				t.Errorf("person %d: status %q canSelect %v selected %v, want Available, selectable, not selected", p.ID, p.Status, p.CanSelect, p.Selected)
			}
		}
		statuses := func() (ms, ords, ps []string) {
			for _, m := range f.Memberships(r.ID) {
				ms = append(ms, fmt.Sprintf("%d %s", m.PersonID, m.Status))
			}
			for _, o := range f.Orders(r.ID) {
				ords = append(ords, string(o.Status))
			}
			for _, p := range f.Payments(r.ID) {
				ps = append(ps, string(p.Status))
			}
			return ms, ords, ps
		}
		ms, ords, ps := statuses()
		if want := []string{"1 Cancelled", "3 Cancelled"}; !slices.Equal(ms, want) {
			t.Errorf("memberships = %q, want %q", ms, want)
		}
		if want := []string{string(engine.OrderCancelled)}; !slices.Equal(ords, want) {
			t.Errorf("orders = %q, want %q", ords, want)
		}
		if want := []string{string(engine.PaymentCancelled)}; !slices.Equal(ps, want) {
			t.Errorf("payments = %q, want %q", ps, want)
		}
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID); n != 0 {
			t.Errorf("%d process data rows after the reset, want 0", n)
		}

		again := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		second := f.AttemptOf(again.Commit().PaymentURL)
		if again.ID != r.ID || second == first {
			t.Errorf("second commit: process %d reference %s, want process %d with a reference other than %s", again.ID, second, r.ID, first)
		}
		ms, ords, ps = statuses()
		if want := []string{"1 Cancelled", "1 Pending Payment", "3 Cancelled", "3 Pending Payment"}; !slices.Equal(ms, want) {
			t.Errorf("memberships after the second commit = %q, want %q", ms, want)
		}
		if want := []string{string(engine.OrderCancelled), string(engine.OrderUnpaid)}; !slices.Equal(ords, want) {
			t.Errorf("orders after the second commit = %q, want %q", ords, want)
		}
		if want := []string{string(engine.PaymentCancelled), string(engine.PaymentPending)}; !slices.Equal(ps, want) {
			t.Errorf("payments after the second commit = %q, want %q", ps, want)
		}
	})
}

// TestPaymentReturnSuccess: DONE + a successful payment -> COMPLETED, memberships
// active, order paid, one confirmation queued; the next load starts afresh.
func TestPaymentReturnSuccess(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)

		res := f.Pay(ref, engine.OutcomeSuccess)
		if res.Outcome != engine.OutcomeSuccess || res.Replayed || res.Stale || res.ProcessID != r.ID ||
			res.UserKey != engine.DemoUserKey || res.PeriodID != engine.DemoPeriodID || res.Order == nil || res.Order.Status != engine.OrderPaid {
			t.Fatalf("result = %+v, want a fresh success for process %d with a paid order", res, r.ID)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted || inst.EndTime == nil {
			t.Errorf("stored instance = %s end %v, want COMPLETED with an end time", inst.Status, inst.EndTime)
		}
		for _, m := range f.Memberships(r.ID) {
			if m.Status != engine.MembershipActive || m.ActivatedAt == nil {
				t.Errorf("membership of person %d: %s activated %v, want Active", m.PersonID, m.Status, m.ActivatedAt)
			}
		}
		if orders := f.Orders(r.ID); len(orders) != 1 || orders[0].Status != engine.OrderPaid || orders[0].PaidAt == nil {
			t.Errorf("orders = %+v, want one paid order", orders)
		}
		if ps := f.Payments(r.ID); len(ps) != 1 || ps[0].Status != engine.PaymentSucceeded || enginetest.Deref(ps[0].TransactionID) != "tx-success-"+ref {
			t.Errorf("payments = %+v, want one SUCCEEDED with its transaction id", ps)
		}
		var outbox []engine.OutboxMessage
		if err := db.NewSelect().Model(&outbox).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if len(outbox) != 1 {
			t.Fatalf("%d outbox messages, want 1", len(outbox))
		}
		if m := outbox[0]; m.Kind != "membership_confirmation" || m.DedupKey != fmt.Sprintf("membership_confirmation:order:%d", res.Order.ID) || m.Recipient != "alex.morgan@example.org" {
			t.Errorf("outbox message = %s %s to %q, want the order's confirmation to alex.morgan@example.org", m.Kind, m.DedupKey, m.Recipient)
		}

		form, created := f.Load(engine.DemoUserKey)
		if !created || form.ProcessID == r.ID || form.State != engine.StateInit || form.Step != 0 {
			t.Fatalf("later load = created %v process %d state %s step %d, want a new INIT process", created, form.ProcessID, form.State, form.Step)
		}
		want := map[int64]string{enginetest.Alex: engine.PersonRegistered, enginetest.Robin: engine.PersonRegistered, enginetest.Jamie: engine.PersonRegistered, enginetest.Sam: engine.PersonAvailable}
		for _, p := range form.People {
			if p.Status != want[p.ID] || p.CanSelect != (want[p.ID] == engine.PersonAvailable) {
				t.Errorf("person %d: status %q canSelect %v, want %q", p.ID, p.Status, p.CanSelect, want[p.ID])
			}
		}
	})
}

// TestPaymentReturnFailed: DONE + a failed payment -> still DONE; a retry
// (RetryPayment or Resume) makes a new attempt with a new reference.
func TestPaymentReturnFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		retry func(f *enginetest.Fixture, r *enginetest.Run) (*registration.Form, error)
	}{
		{name: "retry payment", retry: func(f *enginetest.Fixture, r *enginetest.Run) (*registration.Form, error) {
			return registration.Of(f.Svc).RetryPayment(f.Ctx, r.UserKey, r.PID)
		}},
		{name: "resume", retry: func(f *enginetest.Fixture, r *enginetest.Run) (*registration.Form, error) {
			return registration.Of(f.Svc).Resume(f.Ctx, r.UserKey, r.PID)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := enginetest.NewFixture(t, db)
				r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
				first := r.Commit().PaymentURL
				firstRef := f.AttemptOf(first)

				res := f.Pay(firstRef, engine.OutcomeFailed)
				if res.Outcome != engine.OutcomeFailed || res.Replayed || res.Stale || res.Order.Status != engine.OrderUnpaid {
					t.Fatalf("result = %+v, want a fresh failure with the order unpaid", res)
				}
				if inst := f.Instance(r.ID); inst.Status != engine.StateDone {
					t.Errorf("stored instance = %s, want DONE", inst.Status)
				}
				for _, m := range f.Memberships(r.ID) {
					if m.Status != engine.MembershipPending {
						t.Errorf("membership of person %d = %s, want Pending Payment", m.PersonID, m.Status)
					}
				}
				if n := f.Count((*engine.OutboxMessage)(nil), "1 = 1"); n != 0 {
					t.Errorf("%d outbox messages after a failed payment, want 0", n)
				}

				form, err := tc.retry(f, r)
				if err != nil {
					t.Fatalf("retry: %v", err)
				}
				if form.State != engine.StateDone || form.PaymentURL != first {
					t.Fatalf("retry form = state %s link %q, want DONE with the stable link %q", form.State, form.PaymentURL, first)
				}
				second := f.AttemptOf(form.PaymentURL)
				if second == firstRef {
					t.Fatalf("retry reused reference %s", second)
				}
				var ps []string
				for _, p := range f.Payments(r.ID) {
					ps = append(ps, p.Reference+" "+string(p.Status))
				}
				if want := []string{firstRef + " FAILED", second + " PENDING"}; !slices.Equal(ps, want) {
					t.Errorf("payments = %q, want %q", ps, want)
				}

				if res := f.Pay(second, engine.OutcomeSuccess); res.Outcome != engine.OutcomeSuccess || res.Replayed {
					t.Fatalf("paying the retry: %+v", res)
				}
				if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
					t.Errorf("after paying the retry: %s, want COMPLETED", inst.Status)
				}
			})
		})
	}
}

// TestPaymentReturnCancelled: DONE + a cancelled payment -> still DONE; resume
// returns the DONE form with a new payment link.
func TestPaymentReturnCancelled(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		first := f.AttemptOf(r.Commit().PaymentURL)

		res := f.Pay(first, engine.OutcomeCancelled)
		if res.Outcome != engine.OutcomeCancelled || res.Replayed || res.Stale {
			t.Fatalf("result = %+v, want a fresh cancellation", res)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateDone {
			t.Errorf("stored instance = %s, want DONE", inst.Status)
		}
		if orders := f.Orders(r.ID); len(orders) != 1 || orders[0].Status != engine.OrderUnpaid {
			t.Errorf("orders = %+v, want one unpaid order", orders)
		}

		form, err := registration.Of(f.Svc).Resume(f.Ctx, r.UserKey, r.PID)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if form.State != engine.StateDone || form.Step != enginetest.DemoSteps+1 || form.Question != nil || form.PaymentURL == "" {
			t.Fatalf("resume form = state %s step %d question %v link %q, want the DONE form with a link", form.State, form.Step, form.Question, form.PaymentURL)
		}
		if ref := f.AttemptOf(form.PaymentURL); ref == first {
			t.Errorf("resume reused the cancelled reference %s", ref)
		}
		if got := enginetest.PersonIDs(form); !slices.Equal(got, []int64{enginetest.Alex, enginetest.Robin}) {
			t.Errorf("persons = %v, want %v", got, []int64{enginetest.Alex, enginetest.Robin})
		}
		for _, p := range form.People {
			if p.Status != engine.PersonPendingPayment || p.PaymentURL != form.PaymentURL {
				t.Errorf("person %d: status %q link %q, want Pending Payment with the new link", p.ID, p.Status, p.PaymentURL)
			}
		}
	})
}

// TestNextStaleStep: answers for a step other than the current one are a conflict.
func TestNextStaleStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		step int
	}{
		{name: "person selection again", step: 0},
		{name: "the previous step", step: 1},
		{name: "a later step", step: 3},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.AdvanceTo(2)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := f.State()
				in := enginetest.DemoAnswers(tc.step, r.Persons)
				_, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: tc.step, People: in})
				e := enginetest.WantCode(t, err, engine.CodeConflict)
				if e.Step != 2 || e.ProcessID != r.PID {
					t.Errorf("error names process %q step %d, want %q step 2", e.ProcessID, e.Step, r.PID)
				}
				enginetest.AssertUnchanged(t, before, f.State())
			})
		}
	})
}

// TestFinishedProcessRejectsChanges: a committed or completed registration takes no answers.
func TestFinishedProcessRejectsChanges(t *testing.T) {
	t.Parallel()
	type op struct {
		name string
		call func(f *enginetest.Fixture, r *enginetest.Run) error
	}
	next := func(step int) op {
		return op{name: fmt.Sprintf("next step %d", step), call: func(f *enginetest.Fixture, r *enginetest.Run) error {
			_, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: step, People: enginetest.DemoAnswers(step, r.Persons)})
			return err
		}}
	}
	back := op{name: "back", call: func(f *enginetest.Fixture, r *enginetest.Run) error {
		_, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, nil)
		return err
	}}
	reset := op{name: "reset", call: func(f *enginetest.Fixture, r *enginetest.Run) error {
		_, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID)
		return err
	}}
	resume := op{name: "resume", call: func(f *enginetest.Fixture, r *enginetest.Run) error {
		_, err := registration.Of(f.Svc).Resume(f.Ctx, r.UserKey, r.PID)
		return err
	}}
	retry := op{name: "retry payment", call: func(f *enginetest.Fixture, r *enginetest.Run) error {
		_, err := registration.Of(f.Svc).RetryPayment(f.Ctx, r.UserKey, r.PID)
		return err
	}}
	tests := []struct {
		name string
		paid bool
		ops  []op
	}{
		{name: "DONE", ops: []op{next(enginetest.DemoSteps), next(enginetest.DemoSteps + 1), next(0), back}},
		{name: "COMPLETED", paid: true, ops: []op{next(enginetest.DemoSteps), next(enginetest.DemoSteps + 1), next(0), back, reset, resume, retry}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f := enginetest.NewFixture(t, db)
				r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
				form := r.Commit()
				if tc.paid {
					f.Pay(f.AttemptOf(form.PaymentURL), engine.OutcomeSuccess)
				}
				for _, o := range tc.ops {
					t.Run(o.name, func(t *testing.T) {
						before := f.State()
						enginetest.WantCode(t, o.call(f, r), engine.CodeConflict)
						enginetest.AssertUnchanged(t, before, f.State())
					})
				}
			})
		})
	}
}

// TestProcessNotFound: another user key's process and malformed ids are simply not found.
func TestProcessNotFound(t *testing.T) {
	t.Parallel()
	ops := []struct {
		name string
		call func(f *enginetest.Fixture, userKey, pid string) error
	}{
		{"next", func(f *enginetest.Fixture, userKey, pid string) error {
			_, err := registration.Of(f.Svc).Next(f.Ctx, userKey, registration.NextInput{ProcessID: pid, Step: 1, People: enginetest.DemoAnswers(1, []int64{enginetest.Alex})})
			return err
		}},
		{"reset", func(f *enginetest.Fixture, userKey, pid string) error {
			_, err := registration.Of(f.Svc).Reset(f.Ctx, userKey, pid)
			return err
		}},
		{"resume", func(f *enginetest.Fixture, userKey, pid string) error {
			_, err := registration.Of(f.Svc).Resume(f.Ctx, userKey, pid)
			return err
		}},
		{"back", func(f *enginetest.Fixture, userKey, pid string) error {
			_, err := registration.Of(f.Svc).Back(f.Ctx, userKey, pid, nil)
			return err
		}},
		{"retry payment", func(f *enginetest.Fixture, userKey, pid string) error {
			_, err := registration.Of(f.Svc).RetryPayment(f.Ctx, userKey, pid)
			return err
		}},
		{"quote", func(f *enginetest.Fixture, userKey, pid string) error {
			_, err := registration.Of(f.Svc).Quote(f.Ctx, userKey, pid)
			return err
		}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex)
		tests := []struct {
			name    string
			userKey string
			pid     string
		}{
			{name: "another user key's process", userKey: "demo-1", pid: r.PID},
			{name: "empty user key", userKey: "", pid: r.PID},
			{name: "unknown id", userKey: engine.DemoUserKey, pid: "999999"},
			{name: "not a number", userKey: engine.DemoUserKey, pid: "abc"},
			{name: "empty id", userKey: engine.DemoUserKey, pid: ""},
			{name: "zero", userKey: engine.DemoUserKey, pid: "0"},
			{name: "negative", userKey: engine.DemoUserKey, pid: "-" + r.PID},
			{name: "number with trailing text", userKey: engine.DemoUserKey, pid: r.PID + "x"},
			{name: "number with a space", userKey: engine.DemoUserKey, pid: " " + r.PID},
			{name: "too large", userKey: engine.DemoUserKey, pid: "99999999999999999999"},
		}
		for _, tc := range tests {
			for _, o := range ops {
				t.Run(tc.name+"/"+o.name, func(t *testing.T) {
					before := f.State()
					enginetest.WantCode(t, o.call(f, tc.userKey, tc.pid), engine.CodeNotFound)
					enginetest.AssertUnchanged(t, before, f.State())
				})
			}
		}
	})
}

// TestNextInvalidAnswersChangeNothing: answers that break a rule are a
// validation error per person and leave the database as it was.
func TestNextInvalidAnswersChangeNothing(t *testing.T) {
	t.Parallel()
	answers := func(pairs ...any) []registration.PersonInput {
		var in []registration.PersonInput
		for i := 0; i < len(pairs); i += 2 {
			p := registration.PersonInput{ID: pairs[i].(int64)}
			if a, ok := pairs[i+1].(string); ok {
				p.Answer = &a
			}
			in = append(in, p)
		}
		return in
	}
	tests := []struct {
		name     string
		step     int
		in       []registration.PersonInput
		wantCode engine.Code
		want     []engine.PersonError
		wantKeys []string // field errors, for invalid requests
	}{
		{name: "phone of 9 digits", step: 1, in: answers(enginetest.Alex, "061234567", enginetest.Robin, "0612345678"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Alex, Message: "Phone number must be 10 digits"}}},
		{name: "missing required answer", step: 1, in: answers(enginetest.Alex, "0612345678", enginetest.Robin, nil),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Robin, Message: "An answer is required."}}},
		{name: "person left out counts as missing", step: 1, in: answers(enginetest.Alex, "0612345678"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Robin, Message: "An answer is required."}}},
		{name: "both persons wrong", step: 1, in: answers(enginetest.Alex, "", enginetest.Robin, "phone"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Alex, Message: "An answer is required."}, {PersonID: enginetest.Robin, Message: "Phone number must be 10 digits"}}},
		{name: "person not in the registration", step: 1, in: answers(enginetest.Alex, "0612345678", enginetest.Robin, "0612345678", enginetest.Sam, "0612345678"),
			wantCode: engine.CodeInvalid, wantKeys: []string{"people[2].id"}},
		{name: "person named twice", step: 1, in: answers(enginetest.Alex, "0612345678", enginetest.Alex, "0612345678", enginetest.Robin, "0612345678"),
			wantCode: engine.CodeInvalid, wantKeys: []string{"people[1].id"}},
		{name: "unknown shirt size", step: 2, in: answers(enginetest.Alex, "XXL", enginetest.Robin, "M"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Alex, Message: "Choose one of the listed options."}}},
		{name: "checkbox answered yes", step: 3, in: answers(enginetest.Alex, "yes", enginetest.Robin, "0"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Alex, Message: "The answer must be 0 or 1."}}},
		{name: "junior without guardian consent", step: 6, in: answers(enginetest.Alex, nil, enginetest.Robin, "0"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Robin, Message: "Please accept the terms for this person."}}},
		{name: "two main contacts", step: 7, in: answers(enginetest.Alex, "1", enginetest.Robin, "1"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Alex, Message: "Choose only one person."}, {PersonID: enginetest.Robin, Message: "Choose only one person."}}},
		{name: "no main contact", step: 7, in: answers(enginetest.Alex, "0", enginetest.Robin, nil),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Alex, Message: "Choose one person."}}},
		{name: "terms not accepted", step: 8, in: answers(enginetest.Alex, "1", enginetest.Robin, "0"),
			wantCode: engine.CodeValidation, want: []engine.PersonError{{PersonID: enginetest.Robin, Message: "Please accept the terms for this person."}}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		for _, tc := range tests {
			r.AdvanceTo(tc.step)
			t.Run(tc.name, func(t *testing.T) {
				rows := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID)
				before := f.State()
				_, err := registration.Of(f.Svc).Next(f.Ctx, r.UserKey, registration.NextInput{ProcessID: r.PID, Step: tc.step, People: tc.in})
				e := enginetest.WantCode(t, err, tc.wantCode)
				if tc.wantCode == engine.CodeValidation {
					if !slices.EqualFunc(e.People, tc.want, samePersonError) {
						t.Errorf("person errors = %v, want %v", e.People, tc.want)
					}
					if e.ProcessID != r.PID || e.Step != tc.step {
						t.Errorf("error names process %q step %d, want %q step %d", e.ProcessID, e.Step, r.PID, tc.step)
					}
				}
				var keys []string
				for _, fe := range e.Fields {
					keys = append(keys, fe.Field)
				}
				if !slices.Equal(keys, tc.wantKeys) {
					t.Errorf("field errors = %v, want %v", e.Fields, tc.wantKeys)
				}
				if n := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID); n != rows {
					t.Errorf("process data rows %d -> %d, want unchanged", rows, n)
				}
				enginetest.AssertUnchanged(t, before, f.State())
			})
		}
		if form := r.Commit(); form.State != engine.StateDone {
			t.Errorf("valid answers after the invalid ones: %s, want DONE", form.State)
		}
	})
}

// TestSelectUnavailablePerson: only available persons linked to the user key can be selected.
func TestSelectUnavailablePerson(t *testing.T) {
	t.Parallel()
	no := false
	tests := []struct {
		name    string
		in      []registration.PersonInput
		want    []engine.PersonError
		message string
	}{
		{name: "already registered person", in: []registration.PersonInput{{ID: enginetest.Alex}, {ID: enginetest.Jamie}},
			want: []engine.PersonError{{PersonID: enginetest.Jamie, Message: "Jamie Morgan is already registered."}}},
		{name: "person of another user key", in: []registration.PersonInput{{ID: 5}},
			want: []engine.PersonError{{PersonID: 5, Message: "This person cannot be registered with this link."}}},
		{name: "unknown person", in: []registration.PersonInput{{ID: enginetest.Robin}, {ID: 4242}},
			want: []engine.PersonError{{PersonID: 4242, Message: "This person cannot be registered with this link."}}},
		{name: "nobody", in: nil, message: "Select at least one person."},
		{name: "everybody unselected", in: []registration.PersonInput{{ID: enginetest.Alex, Selected: &no}}, message: "Select at least one person."},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		form, _ := f.Load(engine.DemoUserKey)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := f.State()
				_, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: form.ProcessIDString(), Step: 0, People: tc.in})
				e := enginetest.WantCode(t, err, engine.CodeValidation)
				if !slices.EqualFunc(e.People, tc.want, samePersonError) {
					t.Errorf("person errors = %v, want %v", e.People, tc.want)
				}
				if tc.message != "" && e.Message != tc.message {
					t.Errorf("message = %q, want %q", e.Message, tc.message)
				}
				enginetest.AssertUnchanged(t, before, f.State())
			})
		}
	})
}

// TestSelectPersonNamedTwice: a person named twice at person selection is
// an invalid request naming the later entry, as on a question step
// (TestNextInvalidAnswersChangeNothing), whatever the entries' selected
// say; on a first selection and on one made again after back alike, and
// nothing changes.
func TestSelectPersonNamedTwice(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	tests := []struct {
		name string
		in   []registration.PersonInput
		want []string
	}{
		{name: "the same id twice", in: []registration.PersonInput{{ID: enginetest.Robin}, {ID: enginetest.Alex}, {ID: enginetest.Robin}}, want: []string{"people[2].id"}},
		{name: "selected twice", in: []registration.PersonInput{{ID: enginetest.Alex, Selected: &yes}, {ID: enginetest.Alex, Selected: &yes}}, want: []string{"people[1].id"}},
		{name: "selected and not", in: []registration.PersonInput{{ID: enginetest.Alex}, {ID: enginetest.Alex, Selected: &no}}, want: []string{"people[1].id"}},
		{name: "three times", in: []registration.PersonInput{{ID: enginetest.Sam}, {ID: enginetest.Sam}, {ID: enginetest.Sam}}, want: []string{"people[1].id", "people[2].id"}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		form, _ := f.Load(engine.DemoUserKey)
		pid := form.ProcessIDString()
		try := func(t *testing.T, in []registration.PersonInput, want []string) {
			before := f.State()
			_, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: pid, Step: 0, People: in})
			e := enginetest.WantCode(t, err, engine.CodeInvalid)
			var keys []string
			for _, fe := range e.Fields {
				keys = append(keys, fe.Field)
			}
			if !slices.Equal(keys, want) {
				t.Errorf("field errors = %v, want %v", e.Fields, want)
			}
			enginetest.AssertUnchanged(t, before, f.State())
		}
		for _, tc := range tests {
			t.Run("first selection/"+tc.name, func(t *testing.T) { try(t, tc.in, tc.want) })
		}
		if _, err := registration.Of(f.Svc).Next(f.Ctx, engine.DemoUserKey, registration.NextInput{ProcessID: pid, Step: 0, People: []registration.PersonInput{{ID: enginetest.Alex}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := registration.Of(f.Svc).Back(f.Ctx, engine.DemoUserKey, pid, nil); err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			t.Run("selection again/"+tc.name, func(t *testing.T) { try(t, tc.in, tc.want) })
		}
	})
}

// TestBackFromStep3: back returns the previous question with its saved
// answers; answering it again continues with the later answers pre-filled.
func TestBackFromStep3(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		r.Next(enginetest.DemoAnswers(1, r.Persons))
		r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("L")}, {ID: enginetest.Robin, Answer: enginetest.Str("S")}})
		r.Next(enginetest.DemoAnswers(3, r.Persons)) // alex 1, robin 0
		back := func(step int) *registration.Form {
			t.Helper()
			form, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, &step)
			if err != nil {
				t.Fatalf("back from step %d: %v", step, err)
			}
			r.Form = form
			return form
		}
		if form := back(4); form.Step != 3 {
			t.Fatalf("back from 4: step %d, want 3", form.Step)
		}

		t.Run("stale step", func(t *testing.T) {
			stale := 4
			before := f.State()
			_, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, &stale)
			enginetest.WantCode(t, err, engine.CodeConflict)
			enginetest.AssertUnchanged(t, before, f.State())
		})

		form := back(3)
		if form.State != engine.StateRunning || form.Step != 2 || form.Question == nil || form.Question.Name != "shirt_size" {
			t.Fatalf("back from 3 = state %s step %d question %+v, want RUNNING step 2 shirt_size", form.State, form.Step, form.Question)
		}
		if got, want := enginetest.FormAnswers(form), map[int64]string{enginetest.Alex: "L", enginetest.Robin: "S"}; !maps.Equal(got, want) {
			t.Errorf("step 2 answers = %v, want the saved %v", got, want)
		}
		rows := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID)

		form = r.Next([]registration.PersonInput{{ID: enginetest.Alex, Answer: enginetest.Str("XL")}, {ID: enginetest.Robin, Answer: enginetest.Str("XS")}})
		if form.Step != 3 || form.Question.Name != "insurance" {
			t.Fatalf("answering step 2 again: step %d %s, want step 3 insurance", form.Step, form.Question.Name)
		}
		if got, want := enginetest.FormAnswers(form), map[int64]string{enginetest.Alex: "1", enginetest.Robin: "0"}; !maps.Equal(got, want) {
			t.Errorf("step 3 answers = %v, want the pre-filled %v", got, want)
		}
		if n := f.Count((*engine.ProcessData)(nil), "instance_id = ?", r.ID); n != rows {
			t.Errorf("process data rows %d -> %d: answering again must replace, not add", rows, n)
		}
		form = back(3)
		if got, want := enginetest.FormAnswers(form), map[int64]string{enginetest.Alex: "XL", enginetest.Robin: "XS"}; !maps.Equal(got, want) {
			t.Errorf("step 2 answers after answering again = %v, want %v", got, want)
		}
	})
}

// TestBackFromStep1: back from the first question returns person selection
// with the selection kept.
func TestBackFromStep1(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		one := 1
		form, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, &one)
		if err != nil {
			t.Fatalf("back: %v", err)
		}
		if form.Step != 0 || form.Question != nil || form.State != engine.StateRunning {
			t.Fatalf("form = state %s step %d question %v, want RUNNING at person selection", form.State, form.Step, form.Question)
		}
		want := map[int64][2]bool{enginetest.Alex: {true, true}, enginetest.Sam: {false, true}, enginetest.Robin: {true, true}, enginetest.Jamie: {false, false}}
		if len(form.People) != len(want) {
			t.Fatalf("%d persons, want %d", len(form.People), len(want))
		}
		for _, p := range form.People {
			if got := [2]bool{p.Selected, p.CanSelect}; got != want[p.ID] {
				t.Errorf("person %d: selected, canSelect = %v, want %v", p.ID, got, want[p.ID])
			}
		}
		if inst := f.Instance(r.ID); inst.CurrentStepID != nil || !slices.Equal(inst.SelectedPersons, []int64{enginetest.Alex, enginetest.Robin}) {
			t.Errorf("stored instance = step %s persons %v, want no step and the selection kept", enginetest.Deref(inst.CurrentStepID), inst.SelectedPersons)
		}

		t.Run("no step before person selection", func(t *testing.T) {
			before := f.State()
			_, err := registration.Of(f.Svc).Back(f.Ctx, r.UserKey, r.PID, nil)
			enginetest.WantCode(t, err, engine.CodeConflict)
			enginetest.AssertUnchanged(t, before, f.State())
		})

		r.Form = form
		if next := r.Next([]registration.PersonInput{{ID: enginetest.Sam}}); next.Step != 1 || !slices.Equal(enginetest.PersonIDs(next), []int64{enginetest.Sam}) {
			t.Errorf("selecting again: step %d persons %v, want step 1 with sam", next.Step, enginetest.PersonIDs(next))
		}
	})
}

// TestLoadMembershipFormRejects: closed and unknown periods, other organisations
// and user keys without persons start nothing.
func TestLoadMembershipFormRejects(t *testing.T) {
	t.Parallel()
	org := func(id int64) *int64 { return &id }
	tests := []struct {
		name    string
		userKey string
		period  int64
		org     *int64
		want    engine.Code
	}{
		{name: "closed period", userKey: engine.DemoUserKey, period: 2, want: engine.CodeConflict},
		{name: "unknown period", userKey: engine.DemoUserKey, period: 999, want: engine.CodeNotFound},
		{name: "organisation mismatch", userKey: engine.DemoUserKey, period: engine.DemoPeriodID, org: org(2), want: engine.CodeNotFound},
		{name: "user key without persons", userKey: "stranger", period: engine.DemoPeriodID, want: engine.CodeNotFound},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := f.State()
				_, _, err := registration.Of(f.Svc).LoadMembershipForm(f.Ctx, tc.userKey, tc.period, tc.org)
				enginetest.WantCode(t, err, tc.want)
				enginetest.AssertUnchanged(t, before, f.State())
			})
		}
		t.Run("matching organisation", func(t *testing.T) {
			form, created, err := registration.Of(f.Svc).LoadMembershipForm(f.Ctx, engine.DemoUserKey, engine.DemoPeriodID, org(1))
			if err != nil || !created || form.State != engine.StateInit {
				t.Fatalf("load = %v created %v err %v, want a new INIT form", form, created, err)
			}
		})
	})
}

// TestPaymentReturnForged: a return that fails verification is invalid and changes nothing.
func TestPaymentReturnForged(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		other := payment.NewTestGateway(enginetest.TestGatewayURLs)
		tests := []struct {
			name string
			ret  func() engine.PaymentReturn
			want engine.Code
		}{
			{name: "signed with another key", want: engine.CodeInvalid, ret: func() engine.PaymentReturn {
				return engine.PaymentReturn{Reference: ref, Status: string(engine.OutcomeSuccess), TransactionID: "tx-1", Amount: "100.00", Currency: "EUR", Signature: other.Sign(ref, string(engine.OutcomeSuccess), "tx-1", "100.00", "EUR")}
			}},
			{name: "failed status edited to success", want: engine.CodeInvalid, ret: func() engine.PaymentReturn {
				ret := f.PaymentReturn(ref, engine.OutcomeFailed, "tx-1")
				ret.Status = string(engine.OutcomeSuccess)
				return ret
			}},
			{name: "reference edited", want: engine.CodeInvalid, ret: func() engine.PaymentReturn {
				ret := f.PaymentReturn("PR-SOMEONEELSE", engine.OutcomeSuccess, "tx-1")
				ret.Reference = ref
				return ret
			}},
			{name: "transaction id edited", want: engine.CodeInvalid, ret: func() engine.PaymentReturn {
				ret := f.PaymentReturn(ref, engine.OutcomeSuccess, "tx-1")
				ret.TransactionID = "tx-2"
				return ret
			}},
			{name: "no signature", want: engine.CodeInvalid, ret: func() engine.PaymentReturn {
				return engine.PaymentReturn{Reference: ref, Status: string(engine.OutcomeSuccess), TransactionID: "tx-1"}
			}},
			{name: "signed status the gateway never sends", want: engine.CodeInvalid, ret: func() engine.PaymentReturn {
				return f.PaymentReturn(ref, "refunded", "tx-1")
			}},
			{name: "unknown reference, validly signed", want: engine.CodeNotFound, ret: func() engine.PaymentReturn {
				return f.PaymentReturn("PR-UNKNOWN", engine.OutcomeSuccess, "tx-1")
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := f.State()
				_, err := payment.Of(f.Svc).CompletePayment(f.Ctx, tc.ret())
				enginetest.WantCode(t, err, tc.want)
				enginetest.AssertUnchanged(t, before, f.State())
			})
		}
	})
}

// TestPaymentReturnReplayed: a settled attempt settles once; any later return
// for it is reported as a replay and changes nothing.
func TestPaymentReturnReplayed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		success := f.PaymentReturn(ref, engine.OutcomeSuccess, "tx-1")
		if _, err := payment.Of(f.Svc).CompletePayment(f.Ctx, success); err != nil {
			t.Fatalf("first return: %v", err)
		}
		tests := []struct {
			name string
			ret  engine.PaymentReturn
		}{
			{name: "the same success return", ret: success},
			{name: "success with another transaction id", ret: f.PaymentReturn(ref, engine.OutcomeSuccess, "tx-2")},
			{name: "a later failed return", ret: f.PaymentReturn(ref, engine.OutcomeFailed, "tx-1")},
			{name: "a later cancelled return", ret: f.PaymentReturn(ref, engine.OutcomeCancelled, "")},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := f.State()
				res, err := payment.Of(f.Svc).CompletePayment(f.Ctx, tc.ret)
				if err != nil {
					t.Fatalf("replay: %v", err)
				}
				if !res.Replayed || res.Outcome != engine.OutcomeSuccess || res.ProcessID != r.ID {
					t.Errorf("result = replayed %v outcome %s process %d, want a replay of the success of %d", res.Replayed, res.Outcome, res.ProcessID, r.ID)
				}
				if n := f.Count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
					t.Errorf("%d outbox messages, want 1", n)
				}
				enginetest.AssertUnchanged(t, before, f.State())
			})
		}
	})
}

// TestPaymentReturnAfterReset: a success return for the order a reset
// cancelled changes nothing on the new run.
func TestPaymentReturnAfterReset(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		old := f.AttemptOf(r.Commit().PaymentURL)
		if _, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID); err != nil {
			t.Fatalf("reset: %v", err)
		}
		again := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		current := f.AttemptOf(again.Commit().PaymentURL)

		before := f.State()
		res, err := payment.Of(f.Svc).CompletePayment(f.Ctx, f.PaymentReturn(old, engine.OutcomeSuccess, "tx-old"))
		if err != nil {
			t.Fatalf("stale return: %v", err)
		}
		if !res.Stale {
			t.Errorf("result = %+v, want it marked stale", res)
		}
		// Only the old attempt records that the provider took the money (for a
		// refund); the registration, its new order and memberships are untouched.
		after := f.State()
		for table := range before {
			if table != "payments" && !slices.Equal(before[table], after[table]) {
				t.Errorf("%s changed:\nbefore %q\nafter  %q", table, before[table], after[table])
			}
		}
		if n := f.Count((*engine.Payment)(nil), "reference = ? AND status = ?", old, engine.PaymentSucceeded); n != 1 {
			t.Errorf("the late payment of %s is not recorded as succeeded", old)
		}

		form, _ := f.Load(engine.DemoUserKey)
		if form.State != engine.StateDone || f.AttemptOf(form.PaymentURL) != current {
			t.Errorf("new run = %s with %q, want DONE with reference %s", form.State, form.PaymentURL, current)
		}
		if res := f.Pay(current, engine.OutcomeSuccess); res.Replayed || res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Errorf("paying the new run: %+v", res)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
			t.Errorf("after paying the new run: %s, want COMPLETED", inst.Status)
		}
	})
}

// TestPaymentReturnAfterResetIsReportedStale: PaymentResult.Stale is
// documented as "the order was cancelled (reset) before this return". A
// member who paid the old link after a reset has been charged, so the result
// must say so (and the engine log a refund), not pass as a replayed cancellation.
func TestPaymentReturnAfterResetIsReportedStale(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		old := f.AttemptOf(r.Commit().PaymentURL)
		if _, err := registration.Of(f.Svc).Reset(f.Ctx, r.UserKey, r.PID); err != nil {
			t.Fatalf("reset: %v", err)
		}
		res := f.Pay(old, engine.OutcomeSuccess)
		if !res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Errorf("result = stale %v replayed %v outcome %q, want stale with the verified outcome success", res.Stale, res.Replayed, res.Outcome)
		}
	})
}

// TestCommitConflictsWithAnotherUserKey: a person linked to two user keys (two
// parents) can be registered once; the second commit is a conflict and
// leaves nothing behind, and the person is then pending payment for everyone.
func TestCommitConflictsWithAnotherUserKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		for _, key := range []string{"demo-1", "demo-2"} {
			if _, err := db.NewInsert().Model(&engine.UserPerson{UserKey: key, PersonID: enginetest.Robin, OrganisationID: 1}).Exec(f.Ctx); err != nil {
				t.Fatalf("link robin to %s: %v", key, err)
			}
		}
		first := f.Start(engine.DemoUserKey, enginetest.Robin)
		second := f.Start("demo-1", enginetest.Robin)
		first.AdvanceTo(enginetest.DemoSteps)
		second.AdvanceTo(enginetest.DemoSteps)
		first.Commit()

		before := f.State()
		_, err := registration.Of(f.Svc).Next(f.Ctx, second.UserKey, registration.NextInput{ProcessID: second.PID, Step: enginetest.DemoSteps, People: enginetest.DemoAnswers(enginetest.DemoSteps, second.Persons)})
		enginetest.WantCode(t, err, engine.CodeConflict)
		enginetest.AssertUnchanged(t, before, f.State())
		if inst := f.Instance(second.ID); inst.Status != engine.StateRunning {
			t.Errorf("losing instance = %s, want still RUNNING", inst.Status)
		}

		form, _ := f.Load("demo-2")
		_, err = registration.Of(f.Svc).Next(f.Ctx, "demo-2", registration.NextInput{ProcessID: form.ProcessIDString(), Step: 0, People: []registration.PersonInput{{ID: enginetest.Robin}}})
		e := enginetest.WantCode(t, err, engine.CodeValidation)
		want := []engine.PersonError{{PersonID: enginetest.Robin, Message: "Robin Morgan is already registered and waiting for payment.", Key: "already_pending_payment", Param: "Robin Morgan"}}
		if !slices.Equal(e.People, want) {
			t.Errorf("person errors = %v, want %v", e.People, want)
		}
		for _, p := range form.People {
			if p.ID == enginetest.Robin && (p.Status != engine.PersonPendingPayment || p.CanSelect) {
				t.Errorf("robin for another user key: status %q canSelect %v, want Pending Payment, not selectable", p.Status, p.CanSelect)
			}
		}
	})
}

// samePersonError compares the person and the English text of two person
// errors (their translation keys are checked by the handlers' tests).
func samePersonError(a, b engine.PersonError) bool {
	return a.PersonID == b.PersonID && a.Message == b.Message
}
