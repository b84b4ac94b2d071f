package contract_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"portal/cmd/portal/contract"
)

// malformed are seeds a backend or a hand edit can produce: truncations,
// wrong types where objects belong, references that go nowhere or round
// in circles, and YAML's own traps.
var malformed = []string{
	``,
	`{`,
	`null`,
	`[]`,
	`"openapi"`,
	`{"openapi": 3.0}`,
	`{"openapi": "3.0.3"}`,
	`{"openapi": "3.0.3", "paths": []}`,
	`{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {"/a": null}}`,
	`{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"responses": {"200": null}}}}}`,
	`{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"delete": {"responses": {"200": {"$ref": "#/components/responses/X"}}}}}}`,
	`{"openapi": "3.1.0", "components": {"schemas": {"A": {"$ref": "#/components/schemas/A"}}}}`,
	`{"openapi": "3.0.3", "components": {"schemas": {"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}}}}`,
	`{"openapi": "3.0.3", "components": {"schemas": {"A": {"properties": {"b": {"$ref": "#/components/schemas/A/properties/b"}}}}}}`,
	`{"openapi": "3.0.3", "components": {"schemas": {"A": {"items": {"$ref": "#/paths/~1a"}}}}}`,
	`{"openapi": "3.0.3", "components": {"schemas": {"A": {"discriminator": {"propertyName": "k", "mapping": {"x": "#/components/schemas/Z", "y": "Q", "z": ""}}}}}}`,
	`{"openapi": "3.0.3", "components": {"schemas": {"A": {"additionalProperties": {"$ref": "#/components/schemas/%41"}}}}}`,
	`{"openapi": "3.1.0", "components": {"schemas": {"A": {"type": ["object", "null"], "prefixItems": [{"$ref": "#/components/schemas/A"}], "$defs": {"d": {"$ref": "#/components/schemas/~1x"}}}}}}`,
	"openapi: 3.0.3\ninfo: {title: x, version: 1}\npaths:\n  /a:\n    get:\n      responses:\n        '200': {description: OK}\n",
	"openapi: 3.0.3\npaths: &a\n  /x: *a\n",
	"openapi: 3.0.3\ncomponents:\n  schemas:\n    A: {allOf: [{$ref: '#/components/schemas/A'}], not: {$ref: '#/components/schemas/A'}}\n",
	"swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths: {}\n",
	"openapi: 3.0.3\n\t- bad indent",
}

// FuzzLoad feeds the loader malformed descriptions: it must return a
// *LoadError or a Spec, never panic, and every check must run on whatever
// it returns. Minimising a large interesting input takes long, so fuzz with
// a bound on it:
//
//	go test ./cmd/portal/contract -run XXX -fuzz FuzzLoad -fuzzminimizetime 3s -fuzztime 2m
func FuzzLoad(f *testing.F) {
	fixtures, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range fixtures {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// The large realistic descriptions are loaded by the other tests;
		// as seeds they would slow the fuzzer to a crawl.
		if len(data) <= 16<<10 {
			f.Add(data)
		}
	}
	for _, s := range malformed {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := contract.LoadData(context.Background(), "fuzz.yaml", data)
		if err != nil {
			var le *contract.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LoadError", err)
			}
			return
		}
		if spec.Doc == nil {
			t.Fatal("a Spec without a document")
		}
		var models []string
		if spec.Doc.Components != nil {
			for name := range spec.Doc.Components.Schemas {
				models = append(models, name)
			}
		}
		if _, err := contract.Check(spec, contract.CheckOptions{Models: append(models, "Missing"), MinPaths: 30}); err != nil {
			t.Fatalf("Check: %v", err)
		}
		contract.Lint(spec)
		if spec.Unresolved == nil {
			if _, err := contract.Diff(spec, spec); err != nil {
				t.Logf("Diff: %v", err)
			}
		}
	})
}
