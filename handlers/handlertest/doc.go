// Package handlertest is the HTTP test harness the handlers' suites share:
// a real server built by handlers.New on a real database seeded with the
// demo data (Env, NewEnv, NewEnvWith, Options), requests that read the
// whole answer (Env.Do, Response), the spec's bodies (Form, HTTPError,
// ProcessError), pages parsed with goquery (Page), the gateway with a real
// OIDC provider and admin backend in the test process (GatewayEnv), the
// staff sign-in (StaffEnv), and the checks that more than one subject's
// tests make.
//
// Only tests import it: each handlers package's external test package
// (handlers/members, handlers/adminapi, handlers/staff/payments, ...) and
// the root's end-to-end suite. Production code never does.
package handlertest
