package main

import (
	"portal/engine"
	"portal/engine/stripepay"
	"portal/handlers"
)

// paymentProvider builds the configured payment provider (validated by
// validatePayments), and the test gateway when it is the one, whose pages
// the HTTP layer serves.
func paymentProvider(cfg Config) (engine.PaymentProvider, *engine.TestGateway, error) {
	if cfg.PaymentProvider == "stripe" {
		p, err := stripepay.New(stripepay.Config{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret,
			APIURL: cfg.StripeAPIURL.String()})
		return p, nil, err
	}
	// Relative addresses: the test gateway's pages and its return stay on
	// the host (and /o/{slug}) the member pays from, where their session is.
	gw := engine.NewTestGateway(handlers.TestGatewayURLs(""))
	return gw, gw, nil
}
