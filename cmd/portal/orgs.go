package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/organisation"
	"portal/handlers/server"
	"portal/migrations"
)

// The organisation commands: `portal orgs` manages organisations (creating one is
// an operator's act: API keys belong to one organisation and cannot make
// another), `portal apikeys` their admin API keys.

const orgsUsage = `usage:
  portal orgs list
  portal orgs create --name NAME --slug SLUG [settings]
  portal orgs set --org ID [settings]
settings (only those given change):
  --name, --slug, --hosts h1,h2 ("" for none), --contact EMAIL, --logo HTTPS-URL,
  --accent #rrggbb, --language TAG, --registration-system-id ID,
  --hash-secret-file FILE (the organisation's own hash-link secret; "" in the file
  returns it to PORTAL_HASH_SECRET; needs PORTAL_SESSION_KEY, which seals it),
  --hash-links=false (refuse the spec's ?u=&h= links: invitation links only; true again
  accepts them), --invitation-days N (new invitations valid N days, 1-366; 0: 30)
` + orgMessagesUsage

const apikeysUsage = `usage:
  portal apikeys create --org ID --scope read|write --name NAME   (prints the key once)
  portal apikeys list --org ID
  portal apikeys revoke --org ID KEY-ID`

// withService opens the database (which must be migrated) and runs fn with a service on it.
func withService(ctx context.Context, cfg config.Config, fn func(*engine.Service) error, opts ...engine.ServiceOption) error {
	db, closeDB, err := openDatabase(cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := migrations.CheckCurrent(ctx, db); err != nil {
		return err
	}
	// The public address first (opts may say otherwise): links a command
	// makes name the club's own host, as the server's do.
	return fn(engine.NewService(db, nil, append([]engine.ServiceOption{engine.WithPublicURL(cfg.BaseURL)}, opts...)...))
}

// orgFlags are the settings flags of orgs create and set.
type orgFlags struct {
	name, slug, hosts, contact, logo, accent, language, system, secretFile string
	hashLinks                                                              bool
	invitationDays                                                         int
}

func (f *orgFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "organisation name")
	fs.StringVar(&f.slug, "slug", "", "short name for /o/{slug}/ addresses")
	fs.StringVar(&f.hosts, "hosts", "", "comma-separated hostnames that resolve to it")
	fs.StringVar(&f.contact, "contact", "", "contact e-mail address shown on every page")
	fs.StringVar(&f.logo, "logo", "", "logo address (https)")
	fs.StringVar(&f.accent, "accent", "", "accent colour #rrggbb")
	fs.StringVar(&f.language, "language", "", "default language tag")
	fs.StringVar(&f.system, "registration-system-id", "", "id sent with the hash login to the admin backend")
	fs.StringVar(&f.secretFile, "hash-secret-file", "", "file holding the organisation's own hash secret")
	fs.BoolVar(&f.hashLinks, "hash-links", true, "accept the spec's hash links (false: invitation links only)")
	fs.IntVar(&f.invitationDays, "invitation-days", 0, "days a new invitation stays valid (0: 30)")
}

// change builds the change from the flags that were given on the command line.
func (f *orgFlags) change(fs *flag.FlagSet, cfg config.Config, orgID int64) (organisation.OrganisationChange, error) {
	var c organisation.OrganisationChange
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "name":
			c.Name = &f.name
		case "slug":
			c.Slug = &f.slug
		case "hosts":
			hosts := append([]string{}, splitList(f.hosts)...) // "" for none: an empty list, not nil
			c.Hostnames = &hosts
		case "contact":
			c.ContactEmail = &f.contact
		case "logo":
			c.LogoURL = &f.logo
		case "accent":
			c.AccentColour = &f.accent
		case "language":
			c.DefaultLanguage = &f.language
		case "registration-system-id":
			c.RegistrationSystemID = &f.system
		case "hash-links":
			c.HashLinks = &f.hashLinks
		case "invitation-days":
			c.InvitationExpiryDays = &f.invitationDays
		case "hash-secret-file":
			var sealed string
			sealed, err = sealHashSecretFile(cfg, orgID, f.secretFile)
			c.HashSecretSealed = &sealed
		}
	})
	return c, err
}

// minOrgHashSecret is the shortest organisation hash secret accepted, as for PORTAL_HASH_SECRET.
const minOrgHashSecret = 16

// sealHashSecretFile reads an organisation's hash secret from a file and
// seals it with the session key; an empty file means "" (the environment's).
func sealHashSecretFile(cfg config.Config, orgID int64, path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--hash-secret-file: %w", err)
	}
	secret := strings.TrimSpace(string(raw))
	if secret == "" {
		return "", nil
	}
	return sealHashSecret(cfg, orgID, secret)
}

func sealHashSecret(cfg config.Config, orgID int64, secret string) (string, error) {
	if len(secret) < minOrgHashSecret {
		return "", fmt.Errorf("the hash secret must be at least %d characters", minOrgHashSecret)
	}
	sealer := hashSecretSealer(cfg)
	if sealer == nil {
		return "", errors.New("an organisation's own hash secret is kept encrypted with PORTAL_SESSION_KEY: set it first")
	}
	return sealer.Seal([]byte(secret), server.HashSecretAAD(orgID)), nil
}

func cmdOrgs(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(orgsUsage)
	}
	fs := newFlagSet("orgs "+args[0], stderr)
	var f orgFlags
	var mf messageFlags // orgs_messages.go
	org := fs.Int64("org", 0, "organisation id")
	if args[0] != "list" {
		f.register(fs)
	}
	if args[0] == "set" {
		mf.register(fs)
	}
	cfg, rest, err := config.Load(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return errors.New(orgsUsage)
	}
	return withService(ctx, cfg, func(svc *engine.Service) error {
		switch args[0] {
		case "list":
			orgs, err := svc.Organisations(ctx)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSLUG\tNAME\tHOSTNAMES\tOWN HASH SECRET")
			for _, o := range orgs {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%v\n", o.ID, o.Slug, o.Name, strings.Join(o.Hostnames, ","), o.HashSecretSealed != "")
			}
			return w.Flush()
		case "create":
			c, err := f.change(fs, cfg, 0)
			if err != nil {
				return err
			}
			if c.HashSecretSealed != nil {
				return errors.New("set --hash-secret-file with orgs set, once the organisation has its id")
			}
			o, err := organisation.Of(svc).CreateOrganisationBy(ctx, &engine.CommandLine, c)
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "created organisation %d (%s)\n", o.ID, o.Slug)
			return nil
		case "set":
			if *org <= 0 {
				return errors.New(orgsUsage)
			}
			c, err := f.change(fs, cfg, *org)
			if err != nil {
				return err
			}
			mc, err := mf.change(fs)
			if err != nil {
				return err
			}
			c.Messages = mc // one transaction: both or neither
			o, err := organisation.Of(svc).UpdateOrganisationBy(ctx, &engine.CommandLine, *org, c)
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "updated organisation %d (%s)\n", o.ID, o.Slug)
			return nil
		}
		return errors.New(orgsUsage)
	})
}

func cmdAPIKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(apikeysUsage)
	}
	fs := newFlagSet("apikeys "+args[0], stderr)
	org := fs.Int64("org", 0, "organisation id")
	scope := fs.String("scope", "read", "read or write")
	name := fs.String("name", "", "what the key is for")
	cfg, rest, err := config.Load(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if *org <= 0 {
		return errors.New(apikeysUsage)
	}
	return withService(ctx, cfg, func(svc *engine.Service) error {
		switch args[0] {
		case "create":
			if len(rest) > 0 {
				return errors.New(apikeysUsage)
			}
			key, k, err := organisation.Of(svc).StaffCreateAPIKey(ctx, engine.CommandLine, *org, *name, organisation.APIKeyScope(*scope))
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stderr, "API key %d (%s, %s) for organisation %d; it is shown only now:\n", k.ID, k.Name, k.Scope, k.OrganisationID)
			fmt.Fprintln(stdout, key)
			return nil
		case "list":
			keys, err := organisation.Of(svc).APIKeys(ctx, *org)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tPREFIX\tSCOPE\tNAME\tCREATED\tLAST USED\tREVOKED")
			for _, k := range keys {
				fmt.Fprintf(w, "%d\t%s…\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Scope, k.Name, k.CreatedAt.Format("2006-01-02 15:04"), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt))
			}
			return w.Flush()
		case "revoke":
			if len(rest) != 1 {
				return errors.New(apikeysUsage)
			}
			id, err := strconv.ParseInt(rest[0], 10, 64)
			if err != nil {
				return errors.New(apikeysUsage)
			}
			if err := organisation.Of(svc).StaffRevokeAPIKey(ctx, engine.CommandLine, *org, id); err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "revoked API key %d\n", id)
			return nil
		}
		return errors.New(apikeysUsage)
	})
}

// describeEngineError spells out an engine error's field problems for the terminal.
func describeEngineError(err error) error {
	e, ok := engine.AsError(err)
	if !ok || e.Code == engine.CodeInternal || e.Code == engine.CodeUnavailable {
		return err
	}
	var b strings.Builder
	b.WriteString(e.Message)
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "\n  %s: %s", f.Field, f.Message)
	}
	return errors.New(b.String())
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format("2006-01-02 15:04")
}
