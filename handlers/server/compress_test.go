package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

func TestCompressAnswers(t *testing.T) {
	page := strings.Repeat("<p>Hello, member.</p>\n", 200)
	huge := strings.Repeat("x", compressMax+10)
	e := echo.New()
	e.Use(middleware.Recover()) // outside, as in the server
	e.Use(CompressAnswers(func(c echo.Context) bool { return c.Path() == "/skipped" }))
	e.GET("/page", func(c echo.Context) error { return c.HTML(http.StatusOK, page) })
	e.GET("/small", func(c echo.Context) error { return c.HTML(http.StatusOK, "<p>hi</p>") })
	e.GET("/missing", func(c echo.Context) error { return c.HTML(http.StatusNotFound, page) })
	e.GET("/pdf", func(c echo.Context) error { return c.Blob(http.StatusOK, "application/pdf", []byte(page)) })
	e.GET("/huge", func(c echo.Context) error { return c.Blob(http.StatusOK, "text/csv", []byte(huge)) })
	e.GET("/skipped", func(c echo.Context) error { return c.HTML(http.StatusOK, page) })
	e.GET("/error", func(c echo.Context) error { return echo.NewHTTPError(http.StatusTeapot, "no") })
	e.GET("/panic", func(c echo.Context) error { panic("broken") })
	e.GET("/stream", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, "text/plain")
		c.Response().WriteHeader(http.StatusOK)
		io.WriteString(c.Response(), page)
		c.Response().Flush()
		io.WriteString(c.Response(), "end")
		return nil
	})

	tests := []struct {
		path, accept string
		status       int
		gzipped      bool
		body         string
	}{
		{path: "/page", accept: "gzip, deflate, br", status: 200, gzipped: true, body: page},
		{path: "/page", accept: "br, gzip;q=0.5", status: 200, gzipped: true, body: page},
		{path: "/page", accept: "gzip;q=0", status: 200, body: page},
		{path: "/page", accept: "", status: 200, body: page},
		{path: "/small", accept: "gzip", status: 200, body: "<p>hi</p>"},
		{path: "/missing", accept: "gzip", status: 404, gzipped: true, body: page},
		{path: "/pdf", accept: "gzip", status: 200, body: page},
		{path: "/huge", accept: "gzip", status: 200, body: huge},
		{path: "/skipped", accept: "gzip", status: 200, body: page},
		{path: "/stream", accept: "gzip", status: 200, body: page + "end"},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.accept, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			body := rec.Body.Bytes()
			if got := rec.Header().Get("Content-Encoding") == "gzip"; got != tc.gzipped {
				t.Fatalf("gzipped %v, want %v", got, tc.gzipped)
			}
			if tc.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
				if rec.Header().Get("Content-Length") != "" && rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
					t.Errorf("Content-Length %s for %d bytes", rec.Header().Get("Content-Length"), rec.Body.Len())
				}
			}
			if string(body) != tc.body {
				t.Errorf("body of %d bytes, want %d", len(body), len(tc.body))
			}
			if tc.path != "/skipped" && !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary %q, want Accept-Encoding", rec.Header().Get("Vary"))
			}
		})
	}
	t.Run("panic answered by the error handler", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/panic", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusInternalServerError || rec.Body.Len() == 0 {
			t.Errorf("%d with %d bytes, want 500 with the error page", rec.Code, rec.Body.Len())
		}
	})
	t.Run("error answered by the error handler", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/error", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusTeapot || !strings.Contains(rec.Body.String(), "no") {
			t.Errorf("%d %q, want 418 from the error handler", rec.Code, rec.Body.String())
		}
	})
}
