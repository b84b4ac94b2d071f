package engine

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/uptrace/bun"
)

// OrganisationAddress is where an organisation's members reach its pages,
// under the portal's public address publicURL: the organisation's first
// hostname (on publicURL's scheme and port), else publicURL itself, with
// /o/{slug} when several organisations share it. Links in e-mails, the pay
// link and the payment return use it, so that a member lands where the
// portal resolves their organisation and where their session cookie is.
func OrganisationAddress(ctx context.Context, db bun.IDB, publicURL string, orgID int64) (string, error) {
	u, err := url.Parse(publicURL)
	if err != nil {
		return "", fmt.Errorf("public URL: %w", err)
	}
	var hosts []string
	if err := db.NewSelect().Model((*OrganisationHost)(nil)).Column("hostname").Where("organisation_id = ?", orgID).
		OrderExpr("hostname").Scan(ctx, &hosts); err != nil {
		return "", fmt.Errorf("load hostnames of organisation %d: %w", orgID, err)
	}
	if len(hosts) > 0 {
		if port := u.Port(); port != "" {
			u.Host = net.JoinHostPort(hosts[0], port)
		} else {
			u.Host = hosts[0]
		}
		return strings.TrimSuffix(u.String(), "/"), nil
	}
	n, err := db.NewSelect().Model((*Organisation)(nil)).Count(ctx)
	if err != nil {
		return "", fmt.Errorf("count organisations: %w", err)
	}
	base := strings.TrimSuffix(publicURL, "/")
	if n > 1 {
		var slug string
		if err := db.NewSelect().Model((*Organisation)(nil)).Column("slug").Where("id = ?", orgID).Scan(ctx, &slug); err != nil {
			return "", NotFoundOr(err, "organisation")
		}
		base += "/o/" + url.PathEscape(slug)
	}
	return base, nil
}

// WithPublicURL tells the engine the portal's public address, so that the
// payment addresses it hands out (pay link, return, cancel) are each
// organisation's own (OrganisationAddress). Without it they are built on
// the addresses of WithPaymentLinks alone.
func WithPublicURL(u string) ServiceOption { return func(s *Service) { s.publicURL = u } }

// OrgBase is the organisation's address for payment links, read on db (the
// pool, or the caller's transaction: inside one, the pool would wait for
// the connection the transaction holds, on SQLite forever), "" when the
// engine has no public URL (the links' own base applies). A failure to read
// it falls back to that base too: a link on the portal's main address is
// better than none.
func (s *Service) OrgBase(ctx context.Context, db bun.IDB, orgID int64) string {
	if s.publicURL == "" {
		return ""
	}
	base, err := OrganisationAddress(ctx, db, s.publicURL, orgID)
	if err != nil {
		s.Log.WarnContext(ctx, "organisation address unavailable; payment links use the portal's address", "organisation", orgID, "err", err)
		return ""
	}
	return base
}
