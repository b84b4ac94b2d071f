// Package outbound holds what the portal sends out on its own, away from
// any HTTP request: e-mail delivery (mail), the messages' words and
// layout (messages), the organisations' webhooks (webhooks) and the
// one-click unsubscribe tokens those e-mails carry (optout). The job
// runner calls them; handlers only verify an unsubscribe token.
package outbound
