package config

// The gateway half of the settings: the relay to the admin backend, OIDC,
// sessions and the proxies in front; cmd/portal/gateway.go wires them.

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"portal/handlers"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/upstream"
)

var relayPrefixPattern = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)

// OIDCOn reports whether any OIDC setting is given (then all must be).
func (c *Config) OIDCOn() bool {
	return c.OIDCIssuer != "" || c.OIDCClientID != "" || c.OIDCClientSecret != ""
}

// validateGateway checks the gateway settings and returns every problem.
func (c *Config) validateGateway() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	backendGiven := c.given("PORTAL_ADMIN_BACKEND_URL")
	if backendGiven {
		problems = c.appendInvalid(problems, "PORTAL_ADMIN_BACKEND_URL")
		if c.APIKey == "" {
			add("PORTAL_API_KEY (or PORTAL_API_KEY_FILE) is required with PORTAL_ADMIN_BACKEND_URL")
		}
	}
	if !relayPrefixPattern.MatchString(c.RelayPrefix) || strings.Contains(c.RelayPrefix, "/..") || strings.Contains(c.RelayPrefix, "/./") || strings.HasSuffix(c.RelayPrefix, "/.") {
		add("PORTAL_RELAY_PREFIX must be a path like /services/admin-service")
	} else {
		for _, r := range handlers.ReservedPrefixes() { // the gateway's own routes
			if c.RelayPrefix == r || strings.HasPrefix(c.RelayPrefix, r+"/") || strings.HasPrefix(r, c.RelayPrefix+"/") {
				add("PORTAL_RELAY_PREFIX %s overlaps the gateway's own %s", c.RelayPrefix, r)
			}
		}
	}
	if !strings.HasPrefix(c.BackendLoginPath, "/") {
		add("PORTAL_BACKEND_LOGIN_PATH must start with /")
	}
	problems = c.appendInvalid(problems, "PORTAL_RELAY_CONNECT_TIMEOUT", "PORTAL_RELAY_RESPONSE_TIMEOUT", "PORTAL_RELAY_MAX_BODY")

	if c.OIDCOn() {
		u, err := url.Parse(c.OIDCIssuer)
		switch {
		case c.OIDCIssuer == "" || err != nil || u.Host == "":
			add("PORTAL_OIDC_ISSUER must be the issuer's absolute address")
		case u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname())):
			add("PORTAL_OIDC_ISSUER must use https (http only on a loopback address, for development)")
		}
		if c.OIDCClientID == "" {
			add("PORTAL_OIDC_CLIENT_ID is required with PORTAL_OIDC_ISSUER")
		}
		if c.OIDCRegistrationID == "" {
			add("PORTAL_OIDC_REGISTRATION_ID must not be empty")
		}
	}

	if c.RedisURL != "" { // sessions with PORTAL_SESSION_STORE=redis; sign-in limits always
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			add("PORTAL_REDIS_URL is not a redis:// address")
		}
	}
	switch c.SessionStore {
	case "db":
	case "redis":
		if c.RedisURL == "" {
			add("PORTAL_REDIS_URL is required with PORTAL_SESSION_STORE=redis")
		}
	default:
		add("PORTAL_SESSION_STORE must be db or redis")
	}
	problems = c.appendInvalid(problems, "PORTAL_SESSION_CACHE")

	needKey := backendGiven || c.OIDCOn() || c.SessionStore == "redis"
	switch {
	case c.given("PORTAL_SESSION_KEY"):
		problems = c.appendInvalid(problems, "PORTAL_SESSION_KEY")
	case needKey:
		add("PORTAL_SESSION_KEY (or PORTAL_SESSION_KEY_FILE) is required with a backend, OIDC or Redis: sessions then hold tokens, kept encrypted at rest (generate one with: openssl rand -base64 32)")
	}
	return c.appendInvalid(problems, "PORTAL_TRUSTED_PROXIES", "PORTAL_RELAY_TRUSTED_PATHS", "PORTAL_RELAY_ALLOWED_COOKIES")
}

// parseBackendURL reads PORTAL_ADMIN_BACKEND_URL; empty is no backend.
func parseBackendURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("not an absolute http(s) address without user info, query or fragment")
	}
	return u, nil
}

// parseSessionKey reads PORTAL_SESSION_KEY; empty is none.
func parseSessionKey(s string) (*session.Keyring, error) {
	if s == "" {
		return nil, nil
	}
	return session.ParseKeyring(s)
}

// parseScopes reads PORTAL_OIDC_SCOPES, space or comma separated.
func parseScopes(s string) ([]string, error) {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }), nil
}

// list splits a comma-separated setting, dropping empty entries.
func list(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseRelayPaths reads PORTAL_RELAY_TRUSTED_PATHS. "/" is refused: it
// would trust everything the backend serves, which is no longer a choice
// of paths.
func parseRelayPaths(s string) ([]string, error) {
	var out []string
	for _, p := range list(s) {
		trimmed := strings.TrimRight(p, "/")
		if !relayPrefixPattern.MatchString(trimmed) || hasDotSegment(trimmed) {
			return nil, fmt.Errorf("%q is not a path below the relay prefix such as /swagger-ui", p)
		}
		out = append(out, trimmed)
	}
	return out, nil
}

func hasDotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

var cookieNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// parseCookieNames reads PORTAL_RELAY_ALLOWED_COOKIES. The gateway's own
// cookies are refused: the relay never lets the backend set them, so
// listing one is a mistake better told at start-up.
func parseCookieNames(s string) ([]string, error) {
	names := list(s)
	for _, n := range names {
		switch {
		case !cookieNamePattern.MatchString(n):
			return nil, fmt.Errorf("%q is not a cookie name", n)
		case n == session.DefaultCookieName || oidc.IsAttemptCookie(n):
			return nil, fmt.Errorf("%s is the gateway's own cookie, which the backend may never set", n)
		}
	}
	return names, nil
}

// parseBytes reads "1048576", "64KiB" or "10MiB".
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, errors.New("want a positive size such as 1048576, 64KiB or 10MiB")
	}
	return n * mult, nil
}

// parseProxies reads a comma-separated list of IPs and CIDRs.
func parseProxies(s string) (upstream.TrustedProxies, error) {
	var out upstream.TrustedProxies
	for _, part := range list(s) {
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// DescribeStore says which session store is used, for the start-up log.
func (c *Config) DescribeStore() string {
	if c.SessionStore == "redis" {
		return "redis " + Mask(c.RedisURL)
	}
	return "database"
}
