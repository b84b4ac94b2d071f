package adminapi

import (
	"context"

	"portal/engine"
)

// An organisation's retention settings in the admin API: the "retention"
// object of the organisation resource (GET and PATCH
// /api/admin/organisation), effective values (defaults filled in) out, a
// partial change in. docs/DATA-PROTECTION.md, "Retention".

// RetentionSettingsDTO are an organisation's effective retention settings.
type RetentionSettingsDTO struct {
	PersonSeasons int `json:"personSeasons"`
	AnswerMonths  int `json:"answerMonths"`
	MessageDays   int `json:"messageDays"`
	AccessLogDays int `json:"accessLogDays"`
}

// RetentionSettingsPatch changes retention settings: absent fields stay;
// 0 returns a setting to the portal's default.
type RetentionSettingsPatch struct {
	PersonSeasons *int `json:"personSeasons"`
	AnswerMonths  *int `json:"answerMonths"`
	MessageDays   *int `json:"messageDays"`
	AccessLogDays *int `json:"accessLogDays"`
}

func (p *RetentionSettingsPatch) change() engine.RetentionSettingsChange {
	return engine.RetentionSettingsChange{PersonSeasons: p.PersonSeasons, AnswerMonths: p.AnswerMonths, MessageDays: p.MessageDays, AccessLogDays: p.AccessLogDays}
}

// withRetention adds an organisation's retention settings to its DTO.
func (s *Server) withRetention(ctx context.Context, dto OrganisationDTO) (OrganisationDTO, error) {
	r, err := s.engine.RetentionSettings(ctx, dto.ID)
	if err != nil {
		return dto, err
	}
	dto.Retention = &RetentionSettingsDTO{PersonSeasons: r.PersonSeasons, AnswerMonths: r.AnswerMonths, MessageDays: r.MessageDays, AccessLogDays: r.AccessLogDays}
	return dto, nil
}
