package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/uptrace/bun"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/relay/devidp"
	"portal/relay/oidc"
	"portal/relay/session"
)

const staffUsage = `usage:
  portal staff add --org ID --email ADDRESS --name NAME --role viewer|registrar|treasurer|admin
  portal staff list --org ID
  portal staff remove --org ID --email ADDRESS`

// cmdStaff manages the staff records of an organisation: who may sign in
// to the staff pages, and with which role. Changes are audited with the
// command line as their actor.
func cmdStaff(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(staffUsage)
	}
	fs := newFlagSet("staff "+args[0], stderr)
	org := fs.Int64("org", 0, "organisation id")
	email := fs.String("email", "", "the staff member's e-mail address (the IdP must verify it)")
	name := fs.String("name", "", "the staff member's name")
	role := fs.String("role", "", "viewer, registrar, treasurer or admin")
	cfg, rest, err := config.Load(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if *org <= 0 || len(rest) > 0 {
		return errors.New(staffUsage)
	}
	return withService(ctx, cfg, func(svc *engine.Service) error {
		switch args[0] {
		case "add":
			m, err := staff.Of(svc).AddStaff(ctx, engine.CommandLine, *org, staff.StaffInput{Email: *email, Name: *name, Role: staff.StaffRole(*role)})
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "staff member %d: %s <%s>, %s, organisation %d\n", m.ID, m.Name, m.Email, m.Role, m.OrganisationID)
			return nil
		case "list":
			members, err := staff.Of(svc).ListStaff(ctx, *org)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tEMAIL\tNAME\tROLE\tBOUND\tCREATED\tLAST SIGN-IN\tDISABLED")
			for _, m := range members {
				bound := "no"
				if m.Subject != nil {
					bound = "yes"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Email, m.Name, m.Role, bound,
					m.CreatedAt.Format("2006-01-02 15:04"), timeOrDash(m.LastSignInAt), timeOrDash(m.DisabledAt))
			}
			return w.Flush()
		case "remove":
			if err := staff.Of(svc).RemoveStaff(ctx, engine.CommandLine, *org, *email); err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "removed staff member %s from organisation %d\n", *email, *org)
			return nil
		}
		return errors.New(staffUsage)
	})
}

// staffSignIn wires the staff pages' sign-in: the portal's OIDC settings
// with the staff callback, or, for a portal on a loopback address with no
// PORTAL_OIDC_ISSUER, the development IdP in this process. Otherwise
// staff sign-in is off. The returned closer stops the development IdP.
func staffSignIn(cfg config.Config, store session.Store, cache *session.Cache, svc *engine.Service, log *slog.Logger) (server.StaffDeps, func(), error) {
	d := server.StaffDeps{RoleClaim: cfg.StaffRoleClaim, RoleMap: cfg.StaffRoleMap, BaseURL: cfg.BaseURL,
		Sessions: session.NewManager(store, session.Config{CookieName: server.StaffCookieName, Secure: cfg.CookieSecure,
			SecureRequest: cfg.TrustedProxies.HTTPS, IdleTimeout: cfg.StaffIdleTimeout, MaxLifetime: cfg.StaffMaxLifetime, Cache: cache})}
	issuer, clientID, clientSecret := cfg.OIDCIssuer, cfg.OIDCClientID, cfg.OIDCClientSecret
	closer := func() {}
	if issuer == "" {
		if !devidp.Loopback(cfg.BaseURL) {
			log.Info("staff sign-in off: no PORTAL_OIDC_ISSUER")
			return d, closer, nil
		}
		idp, err := devidp.Start(cfg.BaseURL, demoStaffAccounts(svc))
		if err != nil {
			return d, closer, err
		}
		closer = func() { idp.Close() }
		issuer, clientID, clientSecret = idp.Issuer(), idp.ClientID(), idp.ClientSecret()
		log.Warn("staff sign-in through the development IdP: anyone can sign in as any address; for development only", "issuer", issuer)
	}
	keys := cfg.SessionKey
	if keys == nil {
		// Without a configured key the attempt cookies are sealed with a
		// key of this process: a sign-in that began before a restart
		// simply starts again.
		kr, err := session.ParseKeyring(session.GenerateKey())
		if err != nil {
			return d, closer, err
		}
		keys = kr
	}
	d.Provider = oidc.NewProvider(oidc.ProviderConfig{Issuer: issuer, ClientID: clientID, ClientSecret: clientSecret,
		Scopes: cfg.OIDCScopes, RedirectURL: cfg.BaseURL + server.StaffCallbackPath})
	d.Attempts = oidc.NewAttemptCookies(keys, server.StaffCallbackPath, d.Sessions.SecureFor)
	log.Info("staff sign-in on", "issuer", issuer, "redirect_url", cfg.BaseURL+server.StaffCallbackPath)
	return d, closer, nil
}

// demoStaffAccounts lists the staff addresses of every organisation for
// the development IdP's sign-in page.
func demoStaffAccounts(svc *engine.Service) func(context.Context) []string {
	return func(ctx context.Context) []string {
		orgs, err := svc.Organisations(ctx)
		if err != nil {
			return nil
		}
		var out []string
		for _, o := range orgs {
			staff, err := staff.Of(svc).ListStaff(ctx, o.ID)
			if err != nil {
				return out
			}
			for _, m := range staff {
				if m.Active() && !slices.Contains(out, m.Email) {
					out = append(out, m.Email)
				}
			}
		}
		return out
	}
}

// printDemoStaff adds the demo staff to every organisation and prints
// where each club's staff pages are, and who to sign in as at the
// development IdP.
func printDemoStaff(ctx context.Context, cfg config.Config, db *bun.DB, stdout io.Writer) error {
	svc := engine.NewService(db, nil)
	if err := staff.Of(svc).SeedDemoStaff(ctx); err != nil {
		return err
	}
	orgs, err := svc.Organisations(ctx)
	if err != nil {
		return err
	}
	base, _ := url.Parse(cfg.BaseURL)
	for _, o := range orgs {
		link := cfg.BaseURL + server.OrganisationPathPrefix + o.Slug + server.StaffPrefix
		if len(o.Hostnames) > 0 && base != nil {
			link = base.Scheme + "://" + hostPort(o.Hostnames[0], base.Port()) + server.StaffPrefix
		}
		var as []string
		for _, r := range staff.DemoStaffRoles {
			as = append(as, staff.DemoStaffEmail(o.Slug, r))
		}
		fmt.Fprintf(stdout, "staff pages of %s: %s (sign in as %s)\n", o.Name, link, strings.Join(as, ", "))
	}
	return nil
}

func hostPort(host, port string) string {
	if port == "" {
		return host
	}
	return net.JoinHostPort(host, port)
}
