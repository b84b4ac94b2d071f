package organisation

import (
	"context"
	"fmt"
	"sort"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Editing a period's texts on the staff setup page: its name and its
// price rules' labels per language, in one change with the completeness
// rule of club_texts.go, audited; and the texts an enabled language still
// lacks (a language enabled after the texts were given).

// ClubText is one club text: the default language's (the row's own
// column) and the texts per language.
type ClubText struct {
	Base  string
	Texts engine.Texts
}

// PeriodTexts are a period's name and its price rules' labels by rule
// code; a rule not named keeps its label.
type PeriodTexts struct {
	Name   ClubText
	Labels map[string]ClubText
}

// StaffSetPeriodTexts sets a period's name and its rules' labels per
// language in one transaction, audited ("period.texts"). A text given in
// some language must be given in every enabled one: the refusal names the
// field ("name", "nameTexts.fr", "rules.CODE.label",
// "rules.CODE.labelTexts.fr").
func (s *Service) StaffSetPeriodTexts(ctx context.Context, actor engine.Actor, orgID, periodID int64, in PeriodTexts) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		p, err := OrgPeriod(ctx, tx, orgID, periodID)
		if err != nil {
			return err
		}
		rules, err := store.PriceRules(ctx, tx, periodID)
		if err != nil {
			return err
		}
		langs, err := engine.OrgTextLanguages(ctx, tx, orgID)
		if err != nil {
			return err
		}
		before := periodTextsAuditView(p, rules)
		name, texts := in.Name.Base, copyTexts(in.Name.Texts)
		fields := engine.CheckClubText(langs, "name", "nameTexts", &name, texts, 200)
		byCode := map[string]int{}
		for i, r := range rules {
			byCode[r.Code] = i
		}
		codes := make([]string, 0, len(in.Labels))
		for code := range in.Labels {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			i, ok := byCode[code]
			if !ok {
				fields = append(fields, engine.FieldError{Field: "rules." + code, Message: "is not a price rule of the period"})
				continue
			}
			label, labelTexts := in.Labels[code].Base, copyTexts(in.Labels[code].Texts)
			fields = append(fields, engine.CheckClubText(langs, "rules."+code+".label", "rules."+code+".labelTexts", &label, labelTexts, 200)...)
			rules[i].Label, rules[i].LabelTexts = label, labelTexts
		}
		if len(fields) > 0 {
			return &engine.Error{Code: engine.CodeValidation, Message: "The texts are not complete.", Fields: fields}
		}
		p.Name, p.NameTexts = name, texts
		if _, err := tx.NewUpdate().Model(p).Column("name", "name_texts").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store period texts: %w", err)
		}
		for _, code := range codes {
			r := &rules[byCode[code]]
			if _, err := tx.NewUpdate().Model(r).Column("label", "label_texts").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("store price rule texts: %w", err)
			}
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "period.texts", TargetType: "period",
			TargetID: fmt.Sprint(periodID), Before: before, After: periodTextsAuditView(p, rules)})
	})
}

// copyTexts is t without the caller's map (checkClubText trims in place).
func copyTexts(t engine.Texts) engine.Texts {
	out := engine.Texts{}
	for k, v := range t {
		out[k] = v
	}
	return out
}

// periodTextsAuditView is what the audit log keeps of a period's texts.
func periodTextsAuditView(p *engine.MembershipPeriod, rules []engine.PriceRule) map[string]any {
	labels := map[string]any{}
	for _, r := range rules {
		labels[r.Code] = map[string]any{"label": r.Label, "labelTexts": r.LabelTexts}
	}
	return map[string]any{"name": p.Name, "nameTexts": p.NameTexts, "labels": labels}
}

// Kinds of club text, for MissingText.
const (
	TextTypeName   = "membershipType"
	TextPeriodName = "period"
	TextRuleLabel  = "priceRule"
)

// MissingText is a club text given per language but not in Language, an
// enabled language: members in it see the default language's text.
type MissingText struct {
	// Kind is TextTypeName, TextPeriodName or TextRuleLabel; Name the
	// text in the default language (a rule's with its period's).
	Kind, Name, Language string
	// Field names it as the admin API does: "membershipTypes.ADULT.nameTexts.fr",
	// "periods.3.nameTexts.fr", "periods.3.rules.early.labelTexts.fr".
	Field string
}

// MissingClubTexts lists the organisation's club texts that are given per
// language but lack one of the enabled languages: after a language is
// enabled, what is still to translate. Texts given once (for every
// language) are complete.
func (s *Service) MissingClubTexts(ctx context.Context, orgID int64) (out []MissingText, err error) {
	langs, err := engine.OrgTextLanguages(ctx, s.DB(), orgID)
	if err != nil {
		return nil, err
	}
	missing := func(kind, name, field string, texts engine.Texts) {
		if len(texts) == 0 {
			return
		}
		for _, l := range langs.Enabled {
			if l != langs.Default && texts[l] == "" {
				out = append(out, MissingText{Kind: kind, Name: name, Language: l, Field: field + "." + l})
			}
		}
	}
	types, err := store.MembershipTypes(ctx, s.DB(), orgID)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		missing(TextTypeName, t.Name, "membershipTypes."+t.Code+".nameTexts", t.NameTexts)
	}
	var periods []engine.MembershipPeriod
	if err := s.DB().NewSelect().Model(&periods).Where("organisation_id = ?", orgID).Order("start_date", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	for _, p := range periods {
		field := fmt.Sprintf("periods.%d", p.ID)
		missing(TextPeriodName, p.Name, field+".nameTexts", p.NameTexts)
		rules, err := store.PriceRules(ctx, s.DB(), p.ID)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			missing(TextRuleLabel, r.Label+" ("+p.Name+")", field+".rules."+r.Code+".labelTexts", r.LabelTexts)
		}
	}
	return out, nil
}
