package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

// Bump is a semantic version increment.
type Bump string

const (
	BumpNone  Bump = "none"
	BumpPatch Bump = "patch"
	BumpMinor Bump = "minor"
	BumpMajor Bump = "major"
	// BumpDecreased: NEW's version is lower than OLD's.
	BumpDecreased Bump = "decreased"
	// BumpUnknown: a version is not a semantic version, so no bump can be read.
	BumpUnknown Bump = "unknown"
)

func (b Bump) rank() int {
	return slices.Index([]Bump{BumpNone, BumpPatch, BumpMinor, BumpMajor}, b)
}

// Change is one difference between two descriptions, as oasdiff's checker
// names it.
type Change struct {
	ID        string `json:"id"`
	Level     string `json:"level"`
	Operation string `json:"operation,omitempty"`
	Text      string `json:"text"`
}

// DiffReport is the result of Diff.
type DiffReport struct {
	Old        string `json:"old"`
	New        string `json:"new"`
	OldVersion string `json:"oldVersion"`
	NewVersion string `json:"newVersion"`
	// Breaking changes break a client generated from OLD: major.
	Breaking []Change `json:"breaking"`
	// Additive changes add fields, operations or models: minor.
	Additive []Change `json:"additive"`
	// Other changes leave the shape as it is (descriptions, examples,
	// constraints that widen): patch.
	Other []Change `json:"other"`
	// Required is the bump the changes call for; Actual is the bump from
	// OLD's info.version to NEW's.
	Required Bump `json:"required"`
	Actual   Bump `json:"actual"`
	// Enough says whether Actual covers Required; false when it cannot be
	// told (a version that is not semantic).
	Enough  bool   `json:"enough"`
	Verdict string `json:"verdict"`
}

// Promoted to breaking: oasdiff rates these "info" because a server may
// drop them, but a generated typed client has a member for each, and code
// that uses it no longer compiles. The spec asks to treat every release as
// possibly breaking at DTO level.
var shapeRemovals = map[string]bool{
	"response-optional-property-removed":         true,
	"api-schema-removed":                         true,
	"api-removed-with-deprecation":               true,
	"api-path-removed-with-deprecation":          true,
	"request-property-removed-with-deprecation":  true,
	"request-parameter-removed-with-deprecation": true,
}

// Metadata additions that do not change what a client can do.
var metadataAdditions = map[string]bool{
	"api-tag-added":          true,
	"api-operation-id-added": true,
}

// Ignored: the checker's own versioning policy; Diff judges the version itself.
var versionPolicy = map[string]bool{
	checker.APIVersionNotBumpedId:      true,
	checker.APIVersionDecreasedId:      true,
	checker.APIMajorVersionNotBumpedId: true,
}

// Diff compares two descriptions with oasdiff's diff and checker, sorts
// the changes into breaking, additive and other, and says which version
// bump they call for and whether NEW's info.version makes it: major when a
// shape breaks, minor when fields, operations or models are added, patch
// otherwise. Below 1.0.0 a minor bump is enough for a breaking change, as
// semantic versioning allows.
func Diff(oldSpec, newSpec *Spec) (*DiffReport, error) {
	for _, s := range []*Spec{oldSpec, newSpec} {
		if s.Unresolved != nil {
			return nil, &LoadError{Source: s.Source, Err: s.Unresolved}
		}
	}
	r := &DiffReport{Old: oldSpec.Source, New: newSpec.Source, OldVersion: version(oldSpec.Doc), NewVersion: version(newSpec.Doc),
		Breaking: []Change{}, Additive: []Change{}, Other: []Change{}}

	// Compare with NEW's version set to OLD's: the version is judged
	// below, and a version change alone is no change of the contract.
	revised := *newSpec.Doc
	if revised.Info != nil {
		info := *revised.Info
		info.Version = r.OldVersion
		revised.Info = &info
	}
	base := &load.SpecInfo{Url: oldSpec.Source, Spec: oldSpec.Doc, Version: r.OldVersion}
	revision := &load.SpecInfo{Url: newSpec.Source, Spec: &revised, Version: r.OldVersion}
	report, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), base, revision)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", oldSpec.Source, newSpec.Source, err)
	}
	changes := checker.CheckBackwardCompatibilityUntilLevel(checker.NewConfig(checker.GetAllChecks()), report, sources, checker.INFO)
	l := checker.NewDefaultLocalizer()
	for _, c := range changes {
		id := c.GetId()
		if versionPolicy[id] {
			continue
		}
		ch := Change{ID: id, Level: c.GetLevel().String(), Text: c.GetUncolorizedText(l)}
		if c.GetOperation() != "" {
			ch.Operation = c.GetOperation() + " " + c.GetPath()
		}
		switch {
		case c.IsBreaking() || shapeRemovals[id]:
			r.Breaking = append(r.Breaking, ch)
		case isAdditive(id):
			r.Additive = append(r.Additive, ch)
		default:
			r.Other = append(r.Other, ch)
		}
	}
	if !report.Empty() && report.ComponentsDiff != nil && report.ComponentsDiff.SchemasDiff != nil {
		for _, name := range report.ComponentsDiff.SchemasDiff.Added {
			r.Additive = append(r.Additive, Change{ID: "api-schema-added", Level: checker.INFO.String(),
				Text: fmt.Sprintf("added the component schema %q", name)})
		}
	}
	if !report.Empty() && len(r.Breaking)+len(r.Additive)+len(r.Other) == 0 {
		r.Other = append(r.Other, Change{ID: "other-changes", Level: checker.INFO.String(),
			Text: "changed descriptions, examples, extensions or other parts that do not change the shape"})
	}

	switch {
	case len(r.Breaking) > 0:
		r.Required = BumpMajor
	case len(r.Additive) > 0:
		r.Required = BumpMinor
	case len(r.Other) > 0:
		r.Required = BumpPatch
	default:
		r.Required = BumpNone
	}
	r.Actual = versionBump(r.OldVersion, r.NewVersion)
	r.Enough, r.Verdict = judgeBump(r.Required, r.Actual, r.OldVersion, r.NewVersion)
	return r, nil
}

func isAdditive(id string) bool {
	return !metadataAdditions[id] && (strings.Contains(id, "-added") || strings.HasPrefix(id, "new-"))
}

func version(doc *openapi3.T) string {
	if doc.Info == nil {
		return ""
	}
	return doc.Info.Version
}

// semverPattern is semver.org's grammar with an optional leading v.
var semverPattern = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)

func parseSemver(v string) ([3]int, bool) {
	m := semverPattern.FindStringSubmatch(v)
	if m == nil {
		return [3]int{}, false
	}
	var out [3]int
	for i := range out {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return [3]int{}, false
		}
		out[i] = n
	}
	return out, true
}

// versionBump reads which number moved from old to new.
func versionBump(oldV, newV string) Bump {
	o, ok1 := parseSemver(oldV)
	n, ok2 := parseSemver(newV)
	if !ok1 || !ok2 {
		return BumpUnknown
	}
	for i, b := range []Bump{BumpMajor, BumpMinor, BumpPatch} {
		if n[i] > o[i] {
			return b
		}
		if n[i] < o[i] {
			return BumpDecreased
		}
	}
	return BumpNone
}

func judgeBump(required, actual Bump, oldV, newV string) (bool, string) {
	switch actual {
	case BumpUnknown:
		return false, fmt.Sprintf("info.version %q -> %q is not a semantic version, so the bump cannot be judged (the spec: info.version carries no semver guarantee; the changes call for %s)", oldV, newV, required)
	case BumpDecreased:
		return false, fmt.Sprintf("info.version went down from %s to %s; the changes call for a %s bump", oldV, newV, required)
	}
	enough := actual.rank() >= required.rank()
	if !enough && required == BumpMajor && actual == BumpMinor {
		if o, _ := parseSemver(oldV); o[0] == 0 {
			enough = true // below 1.0.0 the minor number plays the major's part
		}
	}
	if required == BumpNone {
		return true, "no change to the contract: info.version may stay " + oldV
	}
	if enough {
		return true, fmt.Sprintf("info.version %s -> %s (%s) is enough for the %s bump the changes call for", oldV, newV, actual, required)
	}
	return false, fmt.Sprintf("info.version %s -> %s (%s) is not enough: the changes call for a %s bump (%s)", oldV, newV, actual, required, suggest(oldV, required))
}

// suggest is the smallest version after oldV that makes the bump.
func suggest(oldV string, b Bump) string {
	v, ok := parseSemver(oldV)
	if !ok {
		return "a higher version"
	}
	switch b {
	case BumpMajor:
		v = [3]int{v[0] + 1, 0, 0}
	case BumpMinor:
		v = [3]int{v[0], v[1] + 1, 0}
	default:
		v = [3]int{v[0], v[1], v[2] + 1}
	}
	return fmt.Sprintf("%d.%d.%d or later", v[0], v[1], v[2])
}
