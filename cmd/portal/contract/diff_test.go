package contract_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"portal/cmd/portal/contract"
)

// edit is a change to the realistic backend's description, as text.
type edit struct{ old, new string }

const (
	orderCreatedAt  = "        createdAt:\n          type: string\n          format: date-time\n        lines:\n"
	orderLinesOnly  = "        lines:\n"
	orderWithNote   = "        createdAt:\n          type: string\n          format: date-time\n        note:\n          type: string\n        lines:\n"
	refundsPath     = "  /api/orders/{id}/refunds:\n"
	refundsRenamed  = "  /api/orders/{id}/refund-requests:\n"
	linesText       = "description: The order's line items."
	linesTextEdited = "description: The order's line items, in the order they were added."
	unusedSchema    = "    OrderDTO:\n      type: object\n"
	withInvoice     = "    InvoiceDTO:\n      type: object\n      properties:\n        number:\n          type: string\n    OrderDTO:\n      type: object\n"
)

// orderOperations is one change for each of the four operations whose
// response carries an OrderDTO: oasdiff reports a change per operation.
func orderOperations(id string) []string { return slices.Repeat([]string{id}, 4) }

// unedited caches the loaded backend per version: loading 150 KB of YAML is
// most of a diff test's time, and Diff does not change what it compares.
var unedited sync.Map

func backendVariant(t *testing.T, version string, edits ...edit) *contract.Spec {
	t.Helper()
	if len(edits) == 0 {
		if spec, ok := unedited.Load(version); ok {
			return spec.(*contract.Spec)
		}
	}
	data, err := os.ReadFile("testdata/admin-backend.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "  version: 2.14.0\n", "  version: "+version+"\n", 1)
	for _, e := range edits {
		if !strings.Contains(text, e.old) {
			t.Fatalf("the fixture has no %q to edit", e.old)
		}
		text = strings.Replace(text, e.old, e.new, 1)
	}
	spec, err := contract.LoadData(context.Background(), "new.yaml", []byte(text))
	if err != nil || spec.Unresolved != nil {
		t.Fatalf("load the variant: %v %v", err, spec.Unresolved)
	}
	if len(edits) == 0 {
		unedited.Store(version, spec)
	}
	return spec
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name             string
		oldVersion       string
		newVersion       string
		edits            []edit
		breaking         []string // change ids
		additive         []string
		other            []string
		required, actual contract.Bump
		enough           bool
	}{
		{name: "the same description", oldVersion: "2.14.0", newVersion: "2.14.0",
			required: contract.BumpNone, actual: contract.BumpNone, enough: true},
		{name: "only the version moved", oldVersion: "2.14.0", newVersion: "2.14.1",
			required: contract.BumpNone, actual: contract.BumpPatch, enough: true},
		{name: "a description edited, patch bump", oldVersion: "2.14.0", newVersion: "2.14.1",
			edits:    []edit{{linesText, linesTextEdited}},
			other:    []string{"other-changes"},
			required: contract.BumpPatch, actual: contract.BumpPatch, enough: true},
		{name: "a description edited, no bump", oldVersion: "2.14.0", newVersion: "2.14.0",
			edits:    []edit{{linesText, linesTextEdited}},
			other:    []string{"other-changes"},
			required: contract.BumpPatch, actual: contract.BumpNone, enough: false},
		{name: "a response field added, minor bump", oldVersion: "2.14.0", newVersion: "2.15.0",
			edits:    []edit{{orderCreatedAt, orderWithNote}},
			additive: orderOperations("response-optional-property-added"),
			required: contract.BumpMinor, actual: contract.BumpMinor, enough: true},
		{name: "a response field added, patch bump is not enough", oldVersion: "2.14.0", newVersion: "2.14.1",
			edits:    []edit{{orderCreatedAt, orderWithNote}},
			additive: orderOperations("response-optional-property-added"),
			required: contract.BumpMinor, actual: contract.BumpPatch, enough: false},
		{name: "a model added", oldVersion: "2.14.0", newVersion: "2.15.0",
			edits:    []edit{{unusedSchema, withInvoice}},
			additive: []string{"api-schema-added"},
			required: contract.BumpMinor, actual: contract.BumpMinor, enough: true},
		{name: "an operation moved: breaking and additive, minor is not enough", oldVersion: "2.14.0", newVersion: "2.15.0",
			edits:    []edit{{refundsPath, refundsRenamed}},
			breaking: []string{"api-path-removed-without-deprecation"},
			additive: []string{"endpoint-added"},
			required: contract.BumpMajor, actual: contract.BumpMinor, enough: false},
		{name: "an operation moved, major bump", oldVersion: "2.14.0", newVersion: "3.0.0",
			edits:    []edit{{refundsPath, refundsRenamed}},
			breaking: []string{"api-path-removed-without-deprecation"},
			additive: []string{"endpoint-added"},
			required: contract.BumpMajor, actual: contract.BumpMajor, enough: true},
		{name: "an optional response field removed breaks a generated client", oldVersion: "2.14.0", newVersion: "2.15.0",
			edits:    []edit{{orderCreatedAt, orderLinesOnly}},
			breaking: orderOperations("response-optional-property-removed"),
			required: contract.BumpMajor, actual: contract.BumpMinor, enough: false},
		{name: "below 1.0.0 a minor bump carries a breaking change", oldVersion: "0.4.2", newVersion: "0.5.0",
			edits:    []edit{{refundsPath, refundsRenamed}},
			breaking: []string{"api-path-removed-without-deprecation"},
			additive: []string{"endpoint-added"},
			required: contract.BumpMajor, actual: contract.BumpMinor, enough: true},
		{name: "a version that is not semantic cannot be judged", oldVersion: "2.14.0", newVersion: "2024.11-SNAPSHOT",
			edits:    []edit{{orderCreatedAt, orderWithNote}},
			additive: orderOperations("response-optional-property-added"),
			required: contract.BumpMinor, actual: contract.BumpUnknown, enough: false},
		{name: "a version that went down", oldVersion: "2.14.0", newVersion: "2.13.9",
			edits:    []edit{{orderCreatedAt, orderWithNote}},
			additive: orderOperations("response-optional-property-added"),
			required: contract.BumpMinor, actual: contract.BumpDecreased, enough: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := contract.Diff(backendVariant(t, tt.oldVersion), backendVariant(t, tt.newVersion, tt.edits...))
			if err != nil {
				t.Fatal(err)
			}
			for _, group := range []struct {
				name string
				got  []contract.Change
				want []string
			}{{"breaking", r.Breaking, tt.breaking}, {"additive", r.Additive, tt.additive}, {"other", r.Other, tt.other}} {
				var ids []string
				for _, c := range group.got {
					ids = append(ids, c.ID)
				}
				if !slices.Equal(ids, group.want) {
					t.Errorf("%s changes %v, want %v", group.name, ids, group.want)
				}
			}
			if r.Required != tt.required || r.Actual != tt.actual || r.Enough != tt.enough {
				t.Errorf("required %s, actual %s, enough %v; want %s, %s, %v (%s)", r.Required, r.Actual, r.Enough,
					tt.required, tt.actual, tt.enough, r.Verdict)
			}
			if r.OldVersion != tt.oldVersion || r.NewVersion != tt.newVersion {
				t.Errorf("versions %s -> %s", r.OldVersion, r.NewVersion)
			}
		})
	}
}

func TestDiffNamesTheOperation(t *testing.T) {
	r, err := contract.Diff(backendVariant(t, "2.14.0"), backendVariant(t, "3.0.0", edit{refundsPath, refundsRenamed}))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Breaking) != 1 || r.Breaking[0].Operation != "POST /api/orders/{id}/refunds" || !strings.Contains(r.Breaking[0].Text, "api path removed") {
		t.Errorf("breaking changes %+v", r.Breaking)
	}
	if !strings.Contains(r.Verdict, "is enough for the major bump") {
		t.Errorf("verdict %q", r.Verdict)
	}
	r, err = contract.Diff(backendVariant(t, "2.14.0"), backendVariant(t, "2.14.1", edit{orderCreatedAt, orderWithNote}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Verdict, "not enough") || !strings.Contains(r.Verdict, "2.15.0 or later") {
		t.Errorf("verdict %q does not suggest 2.15.0", r.Verdict)
	}
}

func TestDiffRefusesUnresolvedDocuments(t *testing.T) {
	dangling := mustLoad(t, "testdata/dangling-ref-deep.yaml")
	if _, err := contract.Diff(dangling, dangling); err == nil {
		t.Error("Diff compared a description whose references do not resolve")
	}
}

func TestVersionBump(t *testing.T) {
	tests := []struct {
		old, new string
		want     contract.Bump
	}{
		{"1.2.3", "2.0.0", contract.BumpMajor},
		{"1.2.3", "1.3.0", contract.BumpMinor},
		{"1.2.3", "1.2.4", contract.BumpPatch},
		{"1.2.3", "1.2.3", contract.BumpNone},
		{"v1.2.3", "v1.10.0", contract.BumpMinor},
		{"1.2.3-SNAPSHOT", "1.2.4-SNAPSHOT", contract.BumpPatch},
		{"1.2.3", "1.1.9", contract.BumpDecreased},
		{"1.2", "1.3", contract.BumpUnknown},
		{"2024-11-01", "2024-12-01", contract.BumpUnknown},
	}
	for _, tt := range tests {
		if got := contract.VersionBump(tt.old, tt.new); got != tt.want {
			t.Errorf("VersionBump(%q, %q) = %s, want %s", tt.old, tt.new, got, tt.want)
		}
	}
}
