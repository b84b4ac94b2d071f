package adminapi

import (
	"context"
	"time"

	"portal/engine/message"
)

// An organisation's message settings in the admin API: the "messages"
// object of the organisation resource (GET and PATCH
// /api/admin/organisation), effective values (defaults filled in) out, a
// partial change in.

// MessageSettingsDTO are an organisation's effective message settings.
type MessageSettingsDTO struct {
	UnpaidReminderDays []int  `json:"unpaidReminderDays"`
	ExpiryReminderDays int    `json:"expiryReminderDays"`
	ResumeAfterHours   int    `json:"resumeAfterHours"`
	RenewalLeadDays    int    `json:"renewalLeadDays"`
	SenderName         string `json:"senderName"`
	ReplyTo            string `json:"replyTo"`
}

func messageSettingsDTO(s message.Settings) *MessageSettingsDTO {
	return &MessageSettingsDTO{UnpaidReminderDays: s.UnpaidReminderDays, ExpiryReminderDays: s.ExpiryReminderDays,
		ResumeAfterHours: int(s.ResumeAfter / time.Hour), RenewalLeadDays: s.RenewalLeadDays, SenderName: s.SenderName, ReplyTo: s.ReplyTo}
}

// MessageSettingsPatch changes message settings: absent fields stay; an
// empty list, 0 or "" returns a setting to the portal's default.
type MessageSettingsPatch struct {
	UnpaidReminderDays *[]int  `json:"unpaidReminderDays"`
	ExpiryReminderDays *int    `json:"expiryReminderDays"`
	ResumeAfterHours   *int    `json:"resumeAfterHours"`
	RenewalLeadDays    *int    `json:"renewalLeadDays"`
	SenderName         *string `json:"senderName"`
	ReplyTo            *string `json:"replyTo"`
}

func (p *MessageSettingsPatch) change() message.SettingsChange {
	return message.SettingsChange{UnpaidReminderDays: p.UnpaidReminderDays, ExpiryReminderDays: p.ExpiryReminderDays,
		ResumeAfterHours: p.ResumeAfterHours, RenewalLeadDays: p.RenewalLeadDays, SenderName: p.SenderName, ReplyTo: p.ReplyTo}
}

// withMessageSettings adds an organisation's message settings to its DTO.
func (s *Server) withMessageSettings(ctx context.Context, dto OrganisationDTO) (OrganisationDTO, error) {
	settings, err := message.Of(s.engine).Settings(ctx, dto.ID)
	if err != nil {
		return dto, err
	}
	dto.Messages = messageSettingsDTO(settings)
	return dto, nil
}
