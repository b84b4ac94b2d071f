package staff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/payment"
)

// The staff jobs page: the jobs table is the portal's, not a club's, so
// each failed job is attributed to the organisation its message is about
// (a member message names its organisation, period or order), and staff
// see their own organisation's only. Jobs about no organisation (the
// schedules) are the portal's; StaffJobs returns them with organisation 0.

// StaffJob is a failed or dead job and the organisation it belongs to.
type StaffJob struct {
	jobs.Job
	// OrganisationID is 0 for a job of the portal as a whole (Portal) or
	// one whose organisation could not be found.
	OrganisationID int64
	// Portal: a job about no organisation (a schedule), which carries no
	// member's data. A job about a member whose organisation is not found
	// is neither any club's nor the portal's: no staff page shows it.
	Portal bool
	// Recipient is who its message goes to, "" for no message.
	Recipient string
}

// maxStaffJobs bounds how many failed jobs the page reads.
const maxStaffJobs = 500

// MessageOwner is what an outbox message's payload says about whose it is.
type MessageOwner struct {
	OrganisationID int64 `json:"organisationId"`
	PeriodID       int64 `json:"periodId"`
	OrderID        int64 `json:"orderId"`
	InvitationID   int64 `json:"invitationId"`
}

// StaffJobs lists the failed and dead jobs of the organisation, and those
// of the portal as a whole when portalWide, oldest due first.
func (s *Service) StaffJobs(ctx context.Context, organisationID int64, portalWide bool) (_ []StaffJob, err error) {
	list, err := jobs.List(ctx, s.DB(), maxStaffJobs, jobs.StateFailed, jobs.StateDead)
	if err != nil {
		return nil, err
	}
	out := make([]StaffJob, 0, len(list))
	for _, j := range list {
		sj := StaffJob{Job: j}
		if err := s.attributeJob(ctx, &sj); err != nil {
			return nil, err
		}
		if (sj.OrganisationID != 0 && sj.OrganisationID == organisationID) || (portalWide && sj.Portal) {
			out = append(out, sj)
		}
	}
	return out, nil
}

// StaffJob loads one failed or dead job visible to the organisation (as
// StaffJobs decides), or a not-found error.
func (s *Service) StaffJob(ctx context.Context, organisationID int64, portalWide bool, id int64) (*StaffJob, error) {
	list, err := s.StaffJobs(ctx, organisationID, portalWide)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ID == id {
			return &list[i], nil
		}
	}
	return nil, engine.Errorf(engine.CodeNotFound, "no failed job %d in this organisation", id)
}

// RetryStaffJob queues a failed or dead job of the organisation again with
// a fresh set of attempts, audited in the same transaction.
func (s *Service) RetryStaffJob(ctx context.Context, actor engine.Actor, organisationID int64, portalWide bool, id int64) error {
	j, err := s.StaffJob(ctx, organisationID, portalWide, id)
	if err != nil {
		return err
	}
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if err := jobs.Retry(ctx, tx, id, s.Clock()); err != nil {
			if errors.Is(err, jobs.ErrNotRetryable) {
				return engine.Errorf(engine.CodeConflict, "job %d is no longer failed: it was retried or finished meanwhile", id)
			}
			return err
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: organisationID, Action: "job.retry", TargetType: "job",
			TargetID: fmt.Sprint(id), Before: map[string]any{"state": string(j.State), "attempts": j.Attempts, "error": j.LastError},
			After: map[string]any{"state": string(jobs.StateQueued), "attempts": 0}})
	})
}

// RunScheduledJob queues a scheduled job of kind now (jobs.RunNow), for an
// administrator of organisationID on the staff jobs page, audited there.
// The run does that organisation's work only (a portal-wide kind, the
// pruning, the whole portal's); while one of the kind is due it is
// refused as a conflict naming that job.
func (s *Service) RunScheduledJob(ctx context.Context, actor engine.Actor, organisationID int64, kind string) (*jobs.Job, error) {
	// The organisation's own work only; the portal's own jobs (pruning)
	// run for the whole portal, as before.
	scope := organisationID
	if slices.Contains(engine.PortalWideKinds, kind) {
		scope = 0
	}
	if err := engine.CheckRunKind(kind, scope); err != nil {
		return nil, err
	}
	var j *jobs.Job
	err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		var err error
		j, err = jobs.RunNow(ctx, tx, kind, s.Clock(), scope)
		if errors.Is(err, jobs.ErrAlreadyDue) {
			return engine.Errorf(engine.CodeConflict, "A run of %s is already waiting or running (job %d): it was not queued twice.", kind, j.ID)
		}
		if err != nil {
			return err
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: organisationID, Action: "job.run", TargetType: "job",
			TargetID: fmt.Sprint(j.ID), After: map[string]any{"kind": kind, "state": string(j.State), "organisation": scope}})
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// attributeJob finds the organisation of a job delivering an outbox
// message or refunding a payment; other jobs are the portal's.
func (s *Service) attributeJob(ctx context.Context, j *StaffJob) error {
	if j.Kind == engine.KindWebhookDelivery {
		// A delivery is its endpoint's organisation's; an endpoint deleted
		// since leaves the job to no one (it ends by itself).
		var ref engine.WebhookJob
		if json.Unmarshal([]byte(j.Payload), &ref) == nil && ref.Delivery != 0 {
			var orgID int64
			if err := s.DB().NewSelect().Model((*engine.WebhookEndpoint)(nil)).Column("organisation_id").
				Where("id = (?)", s.DB().NewSelect().Model((*engine.WebhookDeliveryRow)(nil)).Column("endpoint_id").Where("id = ?", ref.Delivery)).
				Scan(ctx, &orgID); err == nil {
				j.OrganisationID = orgID
			}
		}
		return nil
	}
	if j.Kind == payment.KindRefundPayment {
		var ref payment.RefundJob
		if json.Unmarshal([]byte(j.Payload), &ref) == nil && ref.Reference != "" {
			var p engine.Payment
			if err := s.DB().NewSelect().Model(&p).Column("order_id").Where("reference = ?", ref.Reference).Scan(ctx); err == nil {
				j.OrganisationID = payment.Of(s.Service).OrgOfOrder(ctx, p.OrderID)
			}
		}
		return nil
	}
	var ref engine.OutboxJob
	if json.Unmarshal([]byte(j.Payload), &ref) != nil || ref.Message == "" {
		j.Portal = true
		return nil
	}
	msg, err := store.OutboxMessageByKey(ctx, s.DB(), ref.Message)
	if err != nil {
		if e, ok := engine.AsError(err); ok && e.Code == engine.CodeNotFound {
			return nil
		}
		return err
	}
	j.Recipient = msg.Recipient
	var owner MessageOwner
	if json.Unmarshal([]byte(msg.Payload), &owner) != nil {
		return nil
	}
	switch {
	case owner.OrganisationID != 0:
		j.OrganisationID = owner.OrganisationID
	case owner.OrderID != 0:
		j.OrganisationID = payment.Of(s.Service).OrgOfOrder(ctx, owner.OrderID)
	case owner.InvitationID != 0:
		var inv invitation.Invitation
		if err := s.DB().NewSelect().Model(&inv).Column("organisation_id").Where("id = ?", owner.InvitationID).Scan(ctx); err == nil {
			j.OrganisationID = inv.OrganisationID
		}
	case owner.PeriodID != 0:
		var p engine.MembershipPeriod
		if err := s.DB().NewSelect().Model(&p).Column("organisation_id").Where("id = ?", owner.PeriodID).Scan(ctx); err == nil {
			j.OrganisationID = p.OrganisationID
		}
	}
	return nil
}
