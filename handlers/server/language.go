package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/relay/oidc"
	"portal/views"
	"portal/views/lang"
)

// languageCookie keeps a member's explicit choice of language (the
// switcher), for a year: it names a language, nothing personal.
const languageCookie = "portal_lang"

// languageParam is the switcher's query parameter: GET any page with
// ?lang=de to read it in German from then on.
const languageParam = "lang"

// ChooseLanguage decides the request's language (lang.Choose: the
// switcher's cookie, Accept-Language, the organisation's default, within
// the organisation's languages) and puts it in the context for the views,
// the engine (the language a registration remembers) and the switcher.
// A GET with ?lang= stores the choice and redirects to the same address
// without it, so the choice works without JavaScript and the address
// stays clean.
func (s *Server) ChooseLanguage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if s.Relay != nil && s.isRelayPath(req.URL.Path) {
			// Relayed answers are the backend's, and the relay's own errors
			// JSON in English: negotiating a language per relayed request
			// was a twentieth of the relay's CPU (docs/BENCHMARKS.md).
			return next(c)
		}
		t := OrganisationOfRequest(c)
		choice := lang.Choice{AcceptLanguage: req.Header.Get("Accept-Language")}
		if t != nil {
			choice.Default, choice.Enabled = t.Brand.Language, t.Languages
		}
		if ck, err := req.Cookie(languageCookie); err == nil {
			choice.Explicit = ck.Value
		}
		if asked := req.URL.Query().Get(languageParam); asked != "" && req.Method == http.MethodGet && !isAPIPath(req.URL.Path) {
			choice.Explicit = asked
			l := lang.Choose(choice)
			if l.Code == asked { // a language the organisation does not offer changes nothing
				http.SetCookie(c.Response(), &http.Cookie{Name: languageCookie, Value: l.Code, Path: "/", MaxAge: 365 * 24 * 3600,
					HttpOnly: true, Secure: s.sessions != nil && s.sessions.SecureFor(req), SameSite: http.SameSiteLaxMode})
			}
			q := req.URL.Query()
			q.Del(languageParam)
			back := OrganisationPath(c, samePage(req.URL.Path))
			if enc := q.Encode(); enc != "" {
				back += "?" + enc
			}
			c.Response().Header().Set("Cache-Control", "no-store")
			return c.Redirect(http.StatusSeeOther, back)
		}
		l := lang.Choose(choice)
		ctx := lang.With(req.Context(), l)
		ctx = engine.WithLanguage(ctx, l.Code)
		ctx = views.WithLanguageLinks(ctx, languageLinks(c, choice.Enabled, l.Code))
		c.SetRequest(req.WithContext(ctx))
		c.Response().Header().Add("Vary", "Accept-Language")
		c.Response().Header().Set("Content-Language", l.Code)
		return next(c)
	}
}

// languageLinks is the switcher: the current page in each of the
// organisation's languages.
func languageLinks(c echo.Context, enabled []string, current string) []views.LanguageLink {
	if len(enabled) == 0 {
		enabled = lang.Codes
	}
	req := c.Request()
	var links []views.LanguageLink
	for _, code := range enabled {
		if !lang.Supported(code) {
			continue
		}
		q := req.URL.Query()
		q.Set(languageParam, code)
		links = append(links, views.LanguageLink{Code: code, Name: lang.Names[code],
			Href: OrganisationPath(c, samePage(req.URL.Path)) + "?" + q.Encode(), Current: code == current})
	}
	return links
}

// samePage is the path a language choice returns to: the request's own
// path when it is a plain local one, else "/". A path such as
// "//evil.example/" or "/\\evil.example/" would otherwise become a
// redirect (or a switcher link) to another site.
func samePage(p string) string { return oidc.ReturnPathOr(p, "/") }

// isAPIPath reports whether p is the JSON API's, which takes its language
// from Accept-Language (and the cookie) but is never redirected.
func isAPIPath(p string) bool { return strings.HasPrefix(p, "/api/") }

// Tr is a text in the request's language (views/lang's messages).
func Tr(c echo.Context, id string, data ...map[string]any) string {
	return lang.T(c.Request().Context(), id, data...)
}

// LangOf is the request's language.
func LangOf(c echo.Context) lang.Language { return lang.Of(c.Request().Context()) }

// PersonProblem is a person's validation message in the request's
// language; a text without a translation key (a definition's own format
// message) as the engine gave it.
func PersonProblem(l lang.Language, p engine.PersonError) string {
	if p.Key == "" || !lang.Has("validation_"+p.Key) {
		return p.Message
	}
	return l.T("validation_"+p.Key, map[string]any{"Param": p.Param})
}
