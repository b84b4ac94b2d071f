package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/invitation"
)

const inviteUsage = `usage:
  portal invite --org ID --period ID (--all | --persons EXT1,EXT2 | --user-keys K1,K2)
                [--expires 720h] [--mail=false]
      issue invitation links (skipping households that registered or hold a valid
      link) and queue an e-mail to each (sent by the job runner of "portal serve");
      --mail=false only prints the links, for a club that mails them itself
  portal invite list --org ID --period ID
  portal invite revoke --org ID INVITATION-ID
  portal invite revoke --org ID --period ID --user-key KEY   (every valid link of a household)`

// cmdInvite issues, lists and revokes invitations (engine/invitation/invitations.go)
// from the command line, as the admin API does.
func cmdInvite(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := "create"
	if len(args) > 0 && (args[0] == "list" || args[0] == "revoke") {
		sub, args = args[0], args[1:]
	}
	fs := newFlagSet("invite "+sub, stderr)
	org := fs.Int64("org", 0, "organisation id")
	period := fs.Int64("period", 0, "membership period id")
	all := fs.Bool("all", false, "every user key linked to a person of the organisation")
	persons := fs.String("persons", "", "comma-separated external person ids")
	userKeys := fs.String("user-keys", "", "comma-separated user keys")
	userKey := fs.String("user-key", "", "the user key whose links revoke withdraws")
	expires := fs.Duration("expires", engine.DefaultInvitationExpiry, "how long the links work")
	mail := fs.Bool("mail", true, "queue an e-mail to each household")
	cfg, rest, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if *org <= 0 {
		return errors.New(inviteUsage)
	}
	return withService(ctx, cfg, func(svc *engine.Service) error {
		switch {
		case sub == "create" && len(rest) == 0 && *period > 0:
			signer := invitationSigner(cfg)
			if signer == nil {
				return errors.New("invitations need PORTAL_SESSION_KEY: their links are signed with a key derived from it")
			}
			rep, err := invitation.Of(svc).CreateInvitations(ctx, engine.CommandLine, *org, invitation.Request{PeriodID: *period, All: *all,
				ExternalIDs: splitList(*persons), UserKeys: splitList(*userKeys), Expires: *expires, Send: *mail})
			if err != nil {
				return describeEngineError(err)
			}
			base, err := engine.OrganisationAddress(ctx, svc.DB(), cfg.BaseURL, *org)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tUSER KEY\tEXPIRES\tLINK")
			for _, inv := range rep.Created {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", inv.ID, inv.UserKey, inv.ExpiresAt.Format(time.RFC3339), signer.URL(base, *org, inv.ID, inv.ExpiresAt))
			}
			w.Flush()
			for _, s := range rep.Skipped {
				fmt.Fprintf(stderr, "skipped %s: %s\n", strings.TrimSpace(s.ExternalID+" "+s.UserKey), s.Reason)
			}
			verb := "issued"
			if *mail {
				verb = "issued and queued for e-mail"
			}
			fmt.Fprintf(stdout, "%d invitation(s) %s, %d skipped\n", len(rep.Created), verb, len(rep.Skipped))
			return nil
		case sub == "list" && *period > 0:
			list, err := invitation.Of(svc).Invitations(ctx, *org, *period)
			if err != nil {
				return describeEngineError(err)
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tUSER KEY\tSTATE\tINVITED\tMAILED\tOPENED\tEXPIRES\tPERSONS")
			for _, st := range list {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.ID, st.UserKey, st.State, timeOrDash(&st.CreatedAt), timeOrDash(st.Mailed),
					timeOrDash(st.OpenedAt), timeOrDash(&st.ExpiresAt), strings.Join(st.Persons, ", "))
			}
			return w.Flush()
		case sub == "revoke" && len(rest) == 1:
			id, err := strconv.ParseInt(rest[0], 10, 64)
			if err != nil {
				return errors.New(inviteUsage)
			}
			if _, err := invitation.Of(svc).RevokeInvitation(ctx, engine.CommandLine, *org, id); err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "revoked invitation %d\n", id)
			return nil
		case sub == "revoke" && len(rest) == 0 && *period > 0 && *userKey != "":
			n, err := invitation.Of(svc).RevokeInvitationsOf(ctx, engine.CommandLine, *org, *period, *userKey)
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "revoked %d invitation(s)\n", n)
			return nil
		}
		return errors.New(inviteUsage)
	})
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
