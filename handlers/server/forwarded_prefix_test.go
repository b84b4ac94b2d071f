package server_test

import (
	"encoding/json"
	"testing"

	"portal/handlers/server"
)

func TestWithServerPrefix(t *testing.T) {
	const indented = `{
  "openapi": "3.0.3",
  "info": {"title": "x", "version": "1"},
  "servers": [
    {
      "url": "/",
      "description": "This server."
    },
    {"description": "The API host", "url": "https://api.example.org/v1/", "x-env": "prod"},
    {"url": "api"}
  ],
  "paths": {"/servers": {"get": {"servers": [{"url": "/op"}], "responses": {}}}}
}
`
	tests := []struct {
		name, doc, prefix, want string
	}{
		{"relative, absolute and bare urls; operation servers untouched", indented, "/portal", `{
  "openapi": "3.0.3",
  "info": {"title": "x", "version": "1"},
  "servers": [
    {
      "url": "/portal",
      "description": "This server."
    },
    {"description": "The API host", "url": "https://api.example.org/portal/v1", "x-env": "prod"},
    {"url": "/portal/api"}
  ],
  "paths": {"/servers": {"get": {"servers": [{"url": "/op"}], "responses": {}}}}
}
`},
		{"trailing slash of the prefix", `{"servers":[{"url":"/"}]}`, "/a/b/", `{"servers":[{"url":"/a/b"}]}`},
		{"escapes in the url are read", `{"servers":[{"url":"\/api"}]}`, "/p", `{"servers":[{"url":"/p/api"}]}`},
		{"no servers: the prefix becomes the server", `{"openapi":"3.0.3","paths":{}}`, "/portal", `{"servers":[{"url":"/portal"}],"openapi":"3.0.3","paths":{}}`},
		{"empty servers stay empty", `{"servers":[]}`, "/portal", `{"servers":[]}`},
		{"empty document", ` { }`, "/portal", ` {"servers":[{"url":"/portal"}] }`},
		{"empty prefix: unchanged", indented, "", indented},
		{"root prefix: unchanged", indented, "/", indented},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := server.WithServerPrefix([]byte(tt.doc), tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

func TestWithServerPrefixRefuses(t *testing.T) {
	doc := []byte(`{"servers":[{"url":"/"}]}`)
	for _, prefix := range []string{"portal", "//evil.example", "/a/../b", "/a/./b", "https://evil.example/x", "/a?b", "/a#b",
		"/a b", "/a,/b", "/a\"b", "/a<script>", "/\u00e9"} {
		if got, err := server.WithServerPrefix(doc, prefix); err == nil {
			t.Errorf("prefix %q accepted: %s", prefix, got)
		}
	}
	for _, bad := range []string{``, `[]`, `{"servers": {"url": "/"}}`, `{"servers": [{"url": 1}]}`, `{"servers": [{"url": "/"}`, `{"a": }`} {
		if got, err := server.WithServerPrefix([]byte(bad), "/p"); err == nil {
			t.Errorf("document %q accepted: %s", bad, got)
		}
	}
}

// FuzzWithServerPrefix: a rewritten document is still JSON, whatever the
// document and the prefix.
func FuzzWithServerPrefix(f *testing.F) {
	f.Add([]byte(`{"servers":[{"url":"/"}]}`), "/portal")
	f.Add([]byte(`{"openapi":"3.0.3"}`), "/a/b")
	f.Add([]byte(`{"servers":[{"url":"https://h/x","url":"/y"}]}`), "/p")
	f.Add([]byte(`{"servers":[{"description":"\u0022","url":"\/"}] }  `), "/p")
	f.Add([]byte(` {}`), "/p")
	f.Fuzz(func(t *testing.T, doc []byte, prefix string) {
		out, err := server.WithServerPrefix(doc, prefix)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("WithServerPrefix(%q, %q) = %q, not JSON", doc, prefix, out)
		}
	})
}
