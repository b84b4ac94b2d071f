package adminapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
)

// TestAdminMessageSettings: the organisation resource shows its message
// settings with the defaults filled in; an invalid change names each bad
// field and changes nothing (not even the other settings of the request);
// a valid one is stored for this organisation only; 0 and "" return to the
// defaults.
func TestAdminMessageSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		key, _ := env.ApiKey(2, organisation.ScopeWrite)
		type dto struct {
			Name     string `json:"name"`
			Messages struct {
				UnpaidReminderDays []int  `json:"unpaidReminderDays"`
				ExpiryReminderDays int    `json:"expiryReminderDays"`
				ResumeAfterHours   int    `json:"resumeAfterHours"`
				RenewalLeadDays    int    `json:"renewalLeadDays"`
				SenderName         string `json:"senderName"`
				ReplyTo            string `json:"replyTo"`
			} `json:"messages"`
		}
		get := func() dto {
			var d dto
			env.Admin(key, http.MethodGet, "/api/admin/organisation", nil).JSON(t, &d)
			return d
		}
		if d := get(); !slices.Equal(d.Messages.UnpaidReminderDays, []int{3, 10}) || d.Messages.ExpiryReminderDays != 30 ||
			d.Messages.ResumeAfterHours != 24 || d.Messages.RenewalLeadDays != 30 || d.Messages.SenderName != "" {
			t.Fatalf("defaults: %+v", d.Messages)
		}
		bad := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"name": "Renamed", "messages": map[string]any{
			"unpaidReminderDays": []int{3, 3}, "expiryReminderDays": 400, "resumeAfterHours": -1, "renewalLeadDays": 1000,
			"senderName": "Club <x>", "replyTo": "not an address"}})
		e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, "/api/admin/organisation")
		var fields []string
		for _, f := range e.Errors {
			fields = append(fields, f.Field)
		}
		slices.Sort(fields)
		if want := []string{"messages.expiryReminderDays", "messages.renewalLeadDays", "messages.replyTo", "messages.resumeAfterHours",
			"messages.senderName", "messages.unpaidReminderDays"}; !slices.Equal(fields, want) {
			t.Fatalf("field errors %v, want %v", fields, want)
		}
		if d := get(); d.Name == "Renamed" || d.Messages.ExpiryReminderDays != 30 {
			t.Fatalf("a refused change wrote: %+v", d)
		}
		ok := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"messages": map[string]any{
			"unpaidReminderDays": []int{7, 2}, "expiryReminderDays": 14, "resumeAfterHours": 48, "renewalLeadDays": 60,
			"senderName": "Lakeside Office", "replyTo": "office@lakeside.example"}})
		var d dto
		ok.JSON(t, &d)
		if ok.Status != http.StatusOK || !slices.Equal(d.Messages.UnpaidReminderDays, []int{2, 7}) || d.Messages.ExpiryReminderDays != 14 ||
			d.Messages.ResumeAfterHours != 48 || d.Messages.RenewalLeadDays != 60 || d.Messages.SenderName != "Lakeside Office" || d.Messages.ReplyTo != "office@lakeside.example" {
			t.Fatalf("patch: %d %s", ok.Status, ok.Body)
		}
		if got := get(); got.Messages.ReplyTo != "office@lakeside.example" {
			t.Fatalf("not stored: %+v", got.Messages)
		}
		if other, _ := message.SettingsOf(t.Context(), db, 1); other.ExpiryReminderDays != 30 {
			t.Fatalf("another organisation's settings changed: %+v", other)
		}
		reset := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"messages": map[string]any{"expiryReminderDays": 0, "replyTo": ""}})
		reset.JSON(t, &d)
		if d.Messages.ExpiryReminderDays != 30 || d.Messages.ReplyTo != "" || d.Messages.RenewalLeadDays != 60 {
			t.Fatalf("reset: %s", reset.Body)
		}
	})
}
