package contract_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/cmd/portal/contract"
)

func mustLoad(t *testing.T, source string) *contract.Spec {
	t.Helper()
	spec, err := contract.Load(context.Background(), source)
	if err != nil {
		t.Fatalf("load %s: %v", source, err)
	}
	return spec
}

func mustLoadData(t *testing.T, data string) *contract.Spec {
	t.Helper()
	spec, err := contract.LoadData(context.Background(), "inline.yaml", []byte(data))
	if err != nil {
		t.Fatalf("load inline document: %v", err)
	}
	return spec
}

func TestLoadFixtures(t *testing.T) {
	tests := []struct {
		file       string
		openapi    string
		paths      int
		unresolved bool
	}{
		{"testdata/admin-backend.yaml", "3.0.1", 53, false},
		{"testdata/extraction-29-paths.json", "3.0.1", 29, false},
		{"testdata/cycle.yaml", "3.0.3", 2, false},
		{"testdata/openapi-3.1.yaml", "3.1.0", 1, false},
		{"testdata/split/openapi.yaml", "3.0.3", 1, false},
		{"testdata/dangling-ref-deep.yaml", "3.0.1", 1, true},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			spec := mustLoad(t, tt.file)
			if spec.Doc.OpenAPI != tt.openapi || spec.PathCount() != tt.paths {
				t.Errorf("openapi %q with %d paths, want %q with %d", spec.Doc.OpenAPI, spec.PathCount(), tt.openapi, tt.paths)
			}
			if (spec.Unresolved != nil) != tt.unresolved {
				t.Errorf("Unresolved = %v, want unresolved %v", spec.Unresolved, tt.unresolved)
			}
		})
	}
}

// A description split over files is bundled as generators do: the schema
// from money.yaml becomes the component MoneyDTO, not money_MoneyDTO.
func TestLoadInternalisesExternalSchemasByTheirName(t *testing.T) {
	spec := mustLoad(t, "testdata/split/openapi.yaml")
	price := spec.Doc.Components.Schemas["ProductDTO"].Value.Properties["price"]
	if price.Ref != "#/components/schemas/MoneyDTO" || spec.Doc.Components.Schemas["MoneyDTO"] == nil {
		t.Fatalf("price refers to %q; components %v", price.Ref, keys(spec.Doc.Components.Schemas))
	}

	// When the root already has another MoneyDTO, the external one keeps a unique name.
	dir := t.TempDir()
	root, err := os.ReadFile("testdata/split/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root = []byte(strings.Replace(string(root), "    ProductDTO:\n", "    MoneyDTO:\n      type: string\n    ProductDTO:\n", 1))
	money, err := os.ReadFile("testdata/split/money.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "openapi.yaml"), string(root))
	writeFile(t, filepath.Join(dir, "money.yaml"), string(money))
	spec = mustLoad(t, filepath.Join(dir, "openapi.yaml"))
	price = spec.Doc.Components.Schemas["ProductDTO"].Value.Properties["price"]
	if price.Ref == "#/components/schemas/MoneyDTO" {
		t.Fatalf("the external MoneyDTO was merged into the root's other MoneyDTO; components %v", keys(spec.Doc.Components.Schemas))
	}
	if got := spec.Doc.Components.Schemas["MoneyDTO"].Value.Type.Slice(); len(got) != 1 || got[0] != "string" {
		t.Errorf("the root's MoneyDTO changed: %v", got)
	}
}

func TestLoadErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v3/api-docs", http.NotFound)
	mux.HandleFunc("GET /missing.json", http.NotFound)
	mux.HandleFunc("GET /broken", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := t.TempDir()
	files := map[string]string{
		"empty.yaml":   "  \n",
		"swagger.json": `{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}`,
		"garbage.yaml": "openapi: [3.0.3\n  :::",
		"wrong.yaml":   "openapi: 2.5.0\ninfo: {title: x, version: '1'}\npaths: {}\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	tests := []struct {
		name, source string
		want         string // in the error
	}{
		{"api-docs switched off", srv.URL + "/v3/api-docs", "api-docs switch is probably off"},
		{"other 404", srv.URL + "/missing.json", "nothing is published there"},
		{"server error", srv.URL + "/broken", "500 Internal Server Error"},
		{"no such file", filepath.Join(dir, "nope.yaml"), "no such file"},
		{"empty", filepath.Join(dir, "empty.yaml"), "the document is empty"},
		{"swagger 2.0", filepath.Join(dir, "swagger.json"), "Swagger 2.0"},
		{"not YAML", filepath.Join(dir, "garbage.yaml"), "cannot load"},
		{"not OpenAPI 3", filepath.Join(dir, "wrong.yaml"), `openapi is "2.5.0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := contract.Load(context.Background(), tt.source)
			var le *contract.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v, %v; want a *LoadError", spec, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestLoadFromURL(t *testing.T) {
	data, err := os.ReadFile("testdata/admin-backend.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(data)
	}))
	defer srv.Close()
	spec := mustLoad(t, srv.URL+"/v3/api-docs.yaml")
	if spec.PathCount() != 53 || spec.Source != srv.URL+"/v3/api-docs.yaml" {
		t.Errorf("loaded %d paths from %s", spec.PathCount(), spec.Source)
	}
}

// Bytes from anywhere must not make the loader read files.
func TestLoadDataRefusesExternalReferences(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: x, version: "1"}
paths: {}
components:
  schemas:
    A: {$ref: '/etc/passwd#/x'}
`
	spec, err := contract.LoadData(context.Background(), "x.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("LoadData: %v", err)
	}
	if spec.Unresolved == nil || !strings.Contains(spec.Unresolved.Error(), "disallowed external reference") {
		t.Errorf("Unresolved = %v, want the external reference refused", spec.Unresolved)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
