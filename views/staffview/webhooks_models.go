package staffview

// WebhooksModel is the webhooks page: the organisation's endpoints,
// the form that adds one and, right after adding or rotating, the signing
// secret, shown this once.
type WebhooksModel struct {
	Chrome
	AddURL string
	// The add form as submitted (or empty), with its problems.
	URL                         string
	Events                      []WebhookEventChoice
	Error, URLError, EventError string
	// NewSecret is a secret just made for endpoint SecretFor ("" none).
	NewSecret, SecretFor string
	Endpoints            []WebhookEndpointRow
}

// WebhookEventChoice is one event type of the add form.
type WebhookEventChoice struct {
	Value   string
	Checked bool
}

// WebhookEndpointRow is one endpoint with its actions.
type WebhookEndpointRow struct {
	ID, URL, Events, DisabledReason string
	Active                          bool
	DeliveriesURL, ToggleURL        string
	RotateURL, DeleteURL            string
}

// WebhookDeliveriesModel is one endpoint's recent deliveries.
type WebhookDeliveriesModel struct {
	Chrome
	Endpoint   WebhookEndpointRow
	BackURL    string
	Deliveries []WebhookDeliveryRow
}

// WebhookDeliveryRow is one delivery; ReplayURL is "" while it is
// still being tried.
type WebhookDeliveryRow struct {
	ID, EventID, Type, StatusKey, Status, Attempts, Code, Created, LastAttempt, NextRetry, Problem, ReplayURL string
}
