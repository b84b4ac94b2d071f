package views

// StaffWebhooksModel is the webhooks page: the organisation's endpoints,
// the form that adds one and, right after adding or rotating, the signing
// secret, shown this once.
type StaffWebhooksModel struct {
	StaffChrome
	AddURL string
	// The add form as submitted (or empty), with its problems.
	URL                         string
	Events                      []StaffWebhookEventChoice
	Error, URLError, EventError string
	// NewSecret is a secret just made for endpoint SecretFor ("" none).
	NewSecret, SecretFor string
	Endpoints            []StaffWebhookEndpointRow
}

// StaffWebhookEventChoice is one event type of the add form.
type StaffWebhookEventChoice struct {
	Value   string
	Checked bool
}

// StaffWebhookEndpointRow is one endpoint with its actions.
type StaffWebhookEndpointRow struct {
	ID, URL, Events, DisabledReason string
	Active                          bool
	DeliveriesURL, ToggleURL        string
	RotateURL, DeleteURL            string
}

// StaffWebhookDeliveriesModel is one endpoint's recent deliveries.
type StaffWebhookDeliveriesModel struct {
	StaffChrome
	Endpoint   StaffWebhookEndpointRow
	BackURL    string
	Deliveries []StaffWebhookDeliveryRow
}

// StaffWebhookDeliveryRow is one delivery; ReplayURL is "" while it is
// still being tried.
type StaffWebhookDeliveryRow struct {
	ID, EventID, Type, StatusKey, Status, Attempts, Code, Created, LastAttempt, NextRetry, Problem, ReplayURL string
}
