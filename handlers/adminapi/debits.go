package adminapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/privacy"
	"portal/handlers/server"
)

// The admin API's SEPA direct-debit collection runs (engine/directdebit/debit_runs.go):
// the same runs as the staff page /staff/debits and `portal debits`.

// mountAdminDebits adds the collection-run routes to the admin API's group.
func (s *Server) mountAdminDebits(admin *echo.Group) {
	admin.GET("/debit-runs", s.listDebitRuns)
	admin.POST("/debit-runs", s.createDebitRun, server.RequireJSON)
	admin.GET("/debit-runs/:id", s.getDebitRun)
	admin.GET("/debit-runs/:id/file", s.getDebitRunFile)
	admin.POST("/debit-runs/:id/sent", s.markDebitRunSent)
	admin.POST("/debit-runs/:id/cancel", s.cancelDebitRun)
}

// DebitRunDTO is a collection run.
type DebitRunDTO struct {
	ID int64 `json:"id"`
	// MessageID is the file's id at the bank (GrpHdr/MsgId).
	MessageID   string `json:"messageId"`
	FileVersion string `json:"fileVersion"`
	FileName    string `json:"fileName"`
	// Until is the last due date the run gathered, YYYY-MM-DD.
	Until string `json:"until"`
	// Status is prepared (downloadable, may be cancelled), sent (its
	// payments settled) or cancelled.
	Status      string     `json:"status"`
	DebitCount  int        `json:"debitCount"`
	TotalMinor  int64      `json:"totalMinor"`
	Currency    string     `json:"currency"`
	CreatedBy   string     `json:"createdBy"`
	CreatedAt   time.Time  `json:"createdAt"`
	SentAt      *time.Time `json:"sentAt"`
	CancelledAt *time.Time `json:"cancelledAt"`
	// Debits are listed on GET /debit-runs/{id} only.
	Debits []DebitDTO `json:"debits,omitempty"`
	// LeftOut are the due debits the run could not put into its file, each
	// with why (on POST /debit-runs and GET /debit-runs/{id}; absent when
	// none): they stay due and are listed among the payments needing
	// attention.
	LeftOut []DebitLeftOutDTO `json:"leftOut,omitempty"`
}

// DebitLeftOutDTO is a due debit a collection run left out of its file.
type DebitLeftOutDTO struct {
	OrderReference   string `json:"orderReference"`
	RegistrationID   int64  `json:"registrationId"`
	MandateReference string `json:"mandateReference"`
	AmountMinor      int64  `json:"amountMinor"`
	Currency         string `json:"currency"`
	// Reason says in words why, and what fixes it.
	Reason string `json:"reason"`
}

func debitLeftOutDTOs(left []directdebit.LeftOutDebit) []DebitLeftOutDTO {
	if len(left) == 0 {
		return nil
	}
	out := make([]DebitLeftOutDTO, len(left))
	for i, l := range left {
		out[i] = DebitLeftOutDTO{OrderReference: l.OrderReference, RegistrationID: l.RegistrationID, MandateReference: l.MandateReference,
			AmountMinor: l.AmountMinor, Currency: l.Currency, Reason: l.Problem}
	}
	return out
}

// DebitDTO is one debit of a run.
type DebitDTO struct {
	EndToEndID       string `json:"endToEndId"`
	Status           string `json:"status"`
	AmountMinor      int64  `json:"amountMinor"`
	Currency         string `json:"currency"`
	DueOn            string `json:"dueOn"`
	SequenceType     string `json:"sequenceType"`
	Amended          bool   `json:"amended"`
	MandateReference string `json:"mandateReference"`
	OrderReference   string `json:"orderReference"`
	RegistrationID   int64  `json:"registrationId"`
	ReturnCode       string `json:"returnCode,omitempty"`
}

func debitRunDTO(r payment.DebitRun) DebitRunDTO {
	return DebitRunDTO{ID: r.ID, MessageID: r.MessageID, FileVersion: r.FileVersion, FileName: directdebit.DebitRunFileName(r),
		Until: r.UntilOn.Format(time.DateOnly), Status: string(r.Status), DebitCount: r.DebitCount, TotalMinor: r.TotalMinor,
		Currency: r.Currency, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, SentAt: r.SentAt, CancelledAt: r.CancelledAt}
}

// DebitRunRequest is the body of POST /api/admin/debit-runs.
type DebitRunRequest struct {
	// Until is the last due date gathered, YYYY-MM-DD; absent: the first
	// TARGET business day on or after today + 14 days.
	Until string `json:"until"`
}

// DebitRunSentDTO is what marking a run sent did.
type DebitRunSentDTO struct {
	Run DebitRunDTO `json:"run"`
	// Settled counts the payments completed now, Unchanged those settled
	// before; Problems the debits left for staff, with why.
	Settled   int      `json:"settled"`
	Unchanged int      `json:"unchanged"`
	Problems  []string `json:"problems"`
}

// listDebitRuns answers GET /api/admin/debit-runs, newest first.
func (s *Server) listDebitRuns(c echo.Context) error {
	runs, err := directdebit.Of(s.engine).DebitRuns(c.Request().Context(), keyOf(c).OrganisationID)
	if err != nil {
		return err
	}
	out := make([]DebitRunDTO, len(runs))
	for i, r := range runs {
		out[i] = debitRunDTO(r)
	}
	return c.JSON(http.StatusOK, out)
}

// createDebitRun answers POST /api/admin/debit-runs: the due debits in
// one new run (201) with those it left out, or 409 when nothing is due or
// none of the due debits can go into a file.
func (s *Server) createDebitRun(c echo.Context) error {
	var body DebitRunRequest
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	var until time.Time
	if body.Until != "" {
		d, err := time.Parse(time.DateOnly, body.Until)
		if err != nil {
			return server.NewAPIError(http.StatusUnprocessableEntity, "The collection run is not valid.", server.FieldErrorBody{Field: "until", Message: "must be a date as YYYY-MM-DD"})
		}
		until = d
	}
	run, err := directdebit.Of(s.engine).CollectDebits(c.Request().Context(), directdebit.CollectRequest{OrganisationID: keyOf(c).OrganisationID, Until: until, Actor: apiActor(c)})
	if err != nil {
		return adminError(err)
	}
	out := debitRunDTO(run.DebitRun)
	out.LeftOut = debitLeftOutDTOs(run.LeftOut)
	return c.JSON(http.StatusCreated, out)
}

// getDebitRun answers GET /api/admin/debit-runs/{id} with its debits and
// those it left out (still due).
func (s *Server) getDebitRun(c echo.Context) error {
	d, err := s.debitRun(c)
	if err != nil {
		return err
	}
	out := debitRunDTO(d.Run)
	out.Debits = make([]DebitDTO, len(d.Debits))
	for i, l := range d.Debits {
		out.Debits[i] = DebitDTO{EndToEndID: l.EndToEndID, Status: string(l.Status), AmountMinor: l.AmountMinor, Currency: l.Currency,
			DueOn: l.DueOn.Format(time.DateOnly), SequenceType: string(l.Sequence), Amended: l.Amended, MandateReference: l.MandateReference,
			OrderReference: l.OrderReference, RegistrationID: l.RegistrationID, ReturnCode: l.ReturnCode}
	}
	out.LeftOut = debitLeftOutDTOs(d.LeftOut)
	return c.JSON(http.StatusOK, out)
}

// getDebitRunFile answers GET /api/admin/debit-runs/{id}/file: the
// pain.008 document exactly as first written; 409 for a cancelled run.
func (s *Server) getDebitRunFile(c echo.Context) error {
	id, err := idParam(c, "id", "collection run")
	if err != nil {
		return err
	}
	run, err := directdebit.Of(s.engine).DebitRunFile(c.Request().Context(), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	// Every debtor's name and account: one access log entry first.
	if err := privacy.Of(s.engine).RecordAccess(c.Request().Context(), apiActor(c), privacy.DebitRunFileRead(keyOf(c).OrganisationID, run.ID)); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+directdebit.DebitRunFileName(*run)+`"`)
	return c.Blob(http.StatusOK, "application/xml", run.File)
}

func (s *Server) debitRun(c echo.Context) (*directdebit.DebitRunDetail, error) {
	id, err := idParam(c, "id", "collection run")
	if err != nil {
		return nil, err
	}
	return directdebit.Of(s.engine).DebitRunByID(c.Request().Context(), keyOf(c).OrganisationID, id)
}

// markDebitRunSent answers POST /api/admin/debit-runs/{id}/sent: the bank
// has the file; its payments settle. Repeated, it changes nothing.
func (s *Server) markDebitRunSent(c echo.Context) error {
	id, err := idParam(c, "id", "collection run")
	if err != nil {
		return err
	}
	res, err := directdebit.Of(s.engine).MarkDebitRunSent(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id)
	if err != nil {
		return adminError(err)
	}
	out := DebitRunSentDTO{Run: debitRunDTO(res.Run), Settled: res.Settled, Unchanged: res.Replayed, Problems: res.Problems}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	return c.JSON(http.StatusOK, out)
}

// cancelDebitRun answers POST /api/admin/debit-runs/{id}/cancel: a run
// not sent is withdrawn as a whole; 409 for a sent one.
func (s *Server) cancelDebitRun(c echo.Context) error {
	id, err := idParam(c, "id", "collection run")
	if err != nil {
		return err
	}
	run, err := directdebit.Of(s.engine).CancelDebitRun(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id)
	if err != nil {
		return adminError(err)
	}
	return c.JSON(http.StatusOK, debitRunDTO(*run))
}
