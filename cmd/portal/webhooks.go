package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/webhook"
)

var webhooksUsage = `usage:
  portal webhooks add --org ID --url URL [--events E1,E2] [--inactive]
      add an endpoint (default: every event) and print its signing secret, shown this once
  portal webhooks list --org ID
  portal webhooks update --org ID [--url URL] [--events E1,E2] [--active=true|false] ENDPOINT-ID
  portal webhooks rotate --org ID ENDPOINT-ID      a new signing secret, printed once
  portal webhooks remove --org ID ENDPOINT-ID
  portal webhooks deliveries --org ID ENDPOINT-ID [--limit 20]
  portal webhooks replay --org ID ENDPOINT-ID DELIVERY-ID
      send a delivered or dead delivery's event again (same event id) as a new delivery
events: ` + strings.Join(engine.WebhookEventTypes, ", ")

// cmdWebhooks manages an organisation's webhook endpoints
// (engine/webhook/webhooks.go) from the command line, as the admin API does.
func cmdWebhooks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(webhooksUsage)
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet("webhooks "+sub, stderr)
	org := fs.Int64("org", 0, "organisation id")
	url := fs.String("url", "", "the endpoint's address (https; http only on a loopback host)")
	events := fs.String("events", "", "comma-separated event types (add: default all)")
	inactive := fs.Bool("inactive", false, "add the endpoint switched off")
	active := fs.String("active", "", "update: true or false")
	limit := fs.Int("limit", 20, "how many deliveries to list")
	cfg, rest, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if *org <= 0 {
		return errors.New(webhooksUsage)
	}
	opts := webhookOptions(cfg)
	if cfg.SessionKey != nil {
		opts = append(opts, engine.WithSecretSealer(cfg.SessionKey.Sealer(PaymentSecretPurpose)))
	}
	// ids reads the n positive ids the sub-command takes.
	ids := func(n int) ([]int64, error) {
		if len(rest) != n {
			return nil, errors.New(webhooksUsage)
		}
		out := make([]int64, n)
		for i, a := range rest {
			id, err := strconv.ParseInt(a, 10, 64)
			if err != nil || id <= 0 {
				return nil, errors.New(webhooksUsage)
			}
			out[i] = id
		}
		return out, nil
	}
	endpointID := func() (int64, error) {
		id, err := ids(1)
		if err != nil {
			return 0, err
		}
		return id[0], nil
	}
	return withService(ctx, cfg, func(svc *engine.Service) error {
		switch sub {
		case "add":
			in := webhook.EndpointInput{URL: *url, Events: splitList(*events)}
			if *events == "" {
				in.Events = engine.WebhookEventTypes
			}
			on := !*inactive
			in.Active = &on
			ep, secret, err := webhook.Of(svc).CreateWebhookEndpoint(ctx, engine.CommandLine, *org, in)
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "added endpoint %d: %s (%s)\nsigning secret (shown once): %s\n", ep.ID, ep.URL, strings.Join(ep.Events(), ","), secret)
			return nil
		case "list":
			list, err := webhook.Of(svc).Endpoints(ctx, *org)
			if err != nil {
				return describeEngineError(err)
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tURL\tEVENTS\tACTIVE\tDISABLED BECAUSE")
			for _, ep := range list {
				fmt.Fprintf(w, "%d\t%s\t%s\t%v\t%s\n", ep.ID, ep.URL, strings.Join(ep.Events(), ","), ep.Active, ep.DisabledReason)
			}
			return w.Flush()
		case "update":
			id, err := endpointID()
			if err != nil {
				return err
			}
			var ch webhook.EndpointChange
			if *url != "" {
				ch.URL = url
			}
			if *events != "" {
				list := splitList(*events)
				ch.Events = &list
			}
			if *active != "" {
				on, err := strconv.ParseBool(*active)
				if err != nil {
					return fmt.Errorf("--active: %q is not true or false", *active)
				}
				ch.Active = &on
			}
			ep, err := webhook.Of(svc).UpdateWebhookEndpoint(ctx, engine.CommandLine, *org, id, ch)
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "updated endpoint %d: %s (%s), active %v\n", ep.ID, ep.URL, strings.Join(ep.Events(), ","), ep.Active)
			return nil
		case "rotate":
			id, err := endpointID()
			if err != nil {
				return err
			}
			secret, err := webhook.Of(svc).RotateWebhookSecret(ctx, engine.CommandLine, *org, id)
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "new signing secret of endpoint %d (shown once): %s\n", id, secret)
			return nil
		case "remove":
			id, err := endpointID()
			if err != nil {
				return err
			}
			if err := webhook.Of(svc).DeleteWebhookEndpoint(ctx, engine.CommandLine, *org, id); err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "removed endpoint %d\n", id)
			return nil
		case "replay":
			pair, err := ids(2)
			if err != nil {
				return err
			}
			d, err := webhook.Of(svc).ReplayWebhookDelivery(ctx, engine.CommandLine, *org, pair[0], pair[1])
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "replaying event %s (%s) to endpoint %d as delivery %d; the job runner of portal serve sends it\n",
				d.EventID, d.EventType, pair[0], d.ID)
			return nil
		case "deliveries":
			id, err := endpointID()
			if err != nil {
				return err
			}
			list, err := webhook.Of(svc).Deliveries(ctx, *org, id, *limit)
			if err != nil {
				return describeEngineError(err)
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tEVENT\tTYPE\tSTATUS\tATTEMPTS\tCODE\tLAST ATTEMPT\tNEXT RETRY\tRESPONSE")
			for _, d := range list {
				code := "-"
				if d.ResponseCode != nil {
					code = strconv.Itoa(*d.ResponseCode)
				}
				snippet := d.ResponseSnippet
				if d.LastError != "" && d.Status != engine.DeliveryDelivered {
					snippet = d.LastError
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", d.ID, d.EventID, d.EventType, d.Status, d.Attempts, code,
					timeOrDash(d.LastAttemptAt), timeOrDash(d.NextRetryAt), strings.Join(strings.Fields(snippet), " "))
			}
			return w.Flush()
		}
		return errors.New(webhooksUsage)
	}, opts...)
}
