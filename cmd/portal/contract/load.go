// Package contract holds an OpenAPI description to the checks the spec's
// "Versioning" and "Published backend contract for errors" sections name:
// the model allow-list closed under $ref (Check), the published error
// conventions (Lint), the breaking and additive changes between two
// releases with the version bump they call for (Diff). The portal runs them
// on the admin backend's description and on its own, as `portal spec ...`;
// it is the command's logic, so the HTTP layer never links kin-openapi.
package contract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"
)

// MaxDocumentBytes is the largest description Load reads. A backend with
// 516 operations publishes about 2 MiB; this leaves ample room.
const MaxDocumentBytes = 64 << 20

// Spec is a loaded OpenAPI 3.0 or 3.1 description.
type Spec struct {
	// Source is the file or URL it was read from, as given.
	Source string
	// Doc is the parsed document. When Unresolved is nil every $ref is
	// resolved and external references are internalised as components.
	Doc *openapi3.T
	// Unresolved is why the references did not resolve (a dangling $ref,
	// for example). Doc is then the document as written, with no $ref
	// resolved: Check still follows #/components/schemas references by
	// name and reports the dangling one with the chain that reaches it.
	Unresolved error
}

// LoadError is a description that could not be read or parsed. The
// commands answer it with exit status 2, apart from findings (1).
type LoadError struct {
	Source string
	Err    error
	// Hint says what probably went wrong, in the reader's terms.
	Hint string
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("cannot load %s: %v", e.Source, e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *LoadError) Unwrap() error { return e.Err }

// apiDocsHint is the usual cause of a 404 from a springdoc backend: the
// description is published only under the api-docs profile.
const apiDocsHint = "the backend's api-docs switch is probably off: it publishes /v3/api-docs only under the api-docs profile; start it with the profiles dev and api-docs named together"

// Load reads a description from a file or an http(s) URL, JSON or YAML.
// Relative external references are followed from the file or URL.
func Load(ctx context.Context, source string) (*Spec, error) {
	if u, err := url.Parse(source); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		data, err := fetch(ctx, u)
		if err != nil {
			return nil, err
		}
		return parse(ctx, source, data, u, true)
	}
	data, err := readFile(source)
	if err != nil {
		return nil, &LoadError{Source: source, Err: err}
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return nil, &LoadError{Source: source, Err: err}
	}
	return parse(ctx, source, data, &url.URL{Path: filepath.ToSlash(abs)}, true)
}

// LoadData parses a description held in memory. External references are
// refused: the bytes may come from anywhere.
func LoadData(ctx context.Context, name string, data []byte) (*Spec, error) {
	return parse(ctx, name, data, &url.URL{Path: "/" + name}, false)
}

func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f)
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("larger than %d MiB", MaxDocumentBytes>>20)
	}
	return data, nil
}

func fetch(ctx context.Context, u *url.URL) ([]byte, error) {
	source := u.String()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, &LoadError{Source: source, Err: err}
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, &LoadError{Source: source, Err: err}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		e := &LoadError{Source: source, Err: fmt.Errorf("GET answered %s", res.Status)}
		if res.StatusCode == http.StatusNotFound {
			e.Hint = "nothing is published there"
			if strings.Contains(u.Path, "api-docs") {
				e.Hint = apiDocsHint
			}
		}
		return nil, e
	}
	data, err := readLimited(res.Body)
	if err != nil {
		return nil, &LoadError{Source: source, Err: err}
	}
	return data, nil
}

// parse loads data with kin-openapi. When only the references fail to
// resolve, it keeps the document as written so that Check can say which
// chain ends in the dangling one.
func parse(ctx context.Context, source string, data []byte, location *url.URL, external bool) (*Spec, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, &LoadError{Source: source, Err: errors.New("the document is empty")}
	}
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = external
	doc, err := loader.LoadFromDataWithPath(data, location)
	if err == nil {
		if err := checkVersion(doc); err != nil {
			return nil, &LoadError{Source: source, Err: err}
		}
		if external {
			// Generators bundle external references as components; so does the check.
			doc.InternalizeRefs(ctx, generatorName)
		}
		return &Spec{Source: source, Doc: doc}, nil
	}
	raw, rawErr := unmarshal(data)
	if rawErr != nil {
		return nil, &LoadError{Source: source, Err: err}
	}
	if vErr := checkVersion(raw); vErr != nil {
		return nil, &LoadError{Source: source, Err: vErr}
	}
	return &Spec{Source: source, Doc: raw, Unresolved: err}, nil
}

// unmarshal decodes an OpenAPI document without resolving references,
// JSON first, then YAML (as kin-openapi's loader does).
func unmarshal(data []byte) (*openapi3.T, error) {
	doc := &openapi3.T{}
	if err := doc.UnmarshalJSON(data); err == nil {
		return doc, nil
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	doc = &openapi3.T{}
	if err := doc.UnmarshalJSON(j); err != nil {
		return nil, err
	}
	return doc, nil
}

func checkVersion(doc *openapi3.T) error {
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		if doc.OpenAPI == "" {
			return errors.New("not an OpenAPI 3 document: it has no openapi field (a Swagger 2.0 description must be converted first)")
		}
		return fmt.Errorf("not an OpenAPI 3 document: openapi is %q", doc.OpenAPI)
	}
	return nil
}

// PathCount is the number of paths the description publishes.
func (s *Spec) PathCount() int {
	if s.Doc.Paths == nil {
		return 0
	}
	return s.Doc.Paths.Len()
}

// generatorName names a schema from another file as generators do: by the
// last segment of its fragment, or by its file name when it has none
// (money.yaml#/components/schemas/MoneyDTO and MoneyDTO.yaml are both
// MoneyDTO). When that name is taken by another schema it falls back to
// kin-openapi's longer, unique name.
func generatorName(doc *openapi3.T, ref openapi3.ComponentRef) string {
	sr, ok := ref.(*openapi3.SchemaRef)
	loc := ref.RefPath()
	if !ok || loc == nil {
		return openapi3.DefaultRefNameResolver(doc, ref)
	}
	name := path.Base(loc.Fragment)
	if loc.Fragment == "" || name == "/" {
		name = strings.TrimSuffix(path.Base(loc.Path), path.Ext(loc.Path))
	}
	name = openapi3.InvalidIdentifierCharRegExp.ReplaceAllString(name, "_")
	if name == "" || name == "." || name == "_" {
		return openapi3.DefaultRefNameResolver(doc, ref)
	}
	if doc.Components != nil {
		if existing, taken := doc.Components.Schemas[name]; taken && (existing == nil || existing.Value != sr.Value) {
			return openapi3.DefaultRefNameResolver(doc, ref)
		}
	}
	return name
}
