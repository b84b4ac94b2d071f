package contract_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"portal/cmd/portal/contract"
)

// finding is the part of a Finding a test states.
type finding struct {
	rule     contract.Rule
	severity contract.Severity
	model    string
	chain    string
}

func summarise(fs []contract.Finding) []finding {
	out := []finding{}
	for _, f := range fs {
		out = append(out, finding{f.Rule, f.Severity, f.Model, f.ChainText()})
	}
	return out
}

func readModels(t *testing.T, file string) []string {
	t.Helper()
	names, err := contract.ReadModels(file)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// discriminatorDoc reaches a schema only through a discriminator mapping
// (written both as a $ref and as a bare name) and a map's values.
const discriminatorDoc = `openapi: 3.0.3
info: {title: x, version: "1"}
paths: {}
components:
  schemas:
    PaymentDTO:
      type: object
      properties:
        method: {$ref: '#/components/schemas/PaymentMethodDTO'}
        metadata:
          type: object
          additionalProperties: {$ref: '#/components/schemas/MetadataValueDTO'}
    PaymentMethodDTO:
      type: object
      properties:
        kind: {type: string}
      discriminator:
        propertyName: kind
        mapping:
          card: '#/components/schemas/CardPaymentDTO'
          sepa: SepaPaymentDTO
    CardPaymentDTO: {type: object, properties: {last4: {type: string}}}
    SepaPaymentDTO: {type: object, properties: {iban: {type: string}}}
    MetadataValueDTO: {type: object, properties: {value: {type: string}}}
    Alias: {$ref: '#/components/schemas/PaymentDTO'}
`

// unresolvedElsewhereDoc has a dangling reference no listed model reaches.
const unresolvedElsewhereDoc = `openapi: 3.0.3
info: {title: x, version: "1"}
paths: {}
components:
  schemas:
    A: {type: object, properties: {n: {type: integer}}}
    B: {type: object, properties: {gone: {$ref: '#/components/schemas/Gone'}}}
`

func TestCheck(t *testing.T) {
	closedList := readModels(t, "testdata/admin-backend.models")
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(closedList), func(n string) bool { return slices.Contains(drop, n) })
	}
	const e, w = contract.SeverityError, contract.SeverityWarning
	tests := []struct {
		name      string
		spec      *contract.Spec
		opts      contract.CheckOptions
		want      []finding
		reachable int
		cycles    []string
	}{
		{
			name:      "realistic backend, closed list: clean",
			spec:      mustLoad(t, "testdata/admin-backend.yaml"),
			opts:      contract.CheckOptions{Models: closedList, MinPaths: 30},
			want:      []finding{},
			reachable: 20,
		},
		{
			name: "unlisted models deep in a chain, each with its shortest chain",
			spec: mustLoad(t, "testdata/admin-backend.yaml"),
			opts: contract.CheckOptions{Models: without("OrderLineDTO", "ProductDTO"), MinPaths: 30},
			want: []finding{
				{contract.RuleUnlistedModel, e, "OrderLineDTO", "OrderDTO.lines[] -> OrderLineDTO"},
				{contract.RuleUnlistedModel, e, "ProductDTO", "OrderDTO.lines[] -> OrderLineDTO.product -> ProductDTO"},
			},
			reachable: 20,
		},
		{
			name: "through oneOf",
			spec: mustLoad(t, "testdata/admin-backend.yaml"),
			opts: contract.CheckOptions{Models: without("BankTransferDTO"), MinPaths: 30},
			want: []finding{
				{contract.RuleUnlistedModel, e, "BankTransferDTO", "PaymentMethodDTO.oneOf[1] -> BankTransferDTO"},
			},
			reachable: 20,
		},
		{
			name: "through allOf and additionalProperties",
			spec: mustLoad(t, "testdata/admin-backend.yaml"),
			opts: contract.CheckOptions{Models: []string{"EventDTO", "PersonDTO"}},
			want: []finding{
				{contract.RuleUnlistedModel, e, "EventSummaryDTO", "EventDTO.allOf[0] -> EventSummaryDTO"},
				{contract.RuleUnlistedModel, e, "EventCategoryDTO", "EventDTO.allOf[1].category -> EventCategoryDTO"},
				{contract.RuleUnlistedModel, e, "MoneyDTO", "EventDTO.allOf[1].fee -> MoneyDTO"},
				{contract.RuleUnlistedModel, e, "EventSessionDTO", "EventDTO.allOf[1].sessions[] -> EventSessionDTO"},
				{contract.RuleUnlistedModel, e, "AddressDTO", "EventDTO.allOf[1].venue -> AddressDTO"},
				{contract.RuleUnlistedModel, e, "ContactDTO", "PersonDTO.contacts[] -> ContactDTO"},
				{contract.RuleUnlistedModel, e, "CustomFieldValueDTO", "PersonDTO.customFields{} -> CustomFieldValueDTO"},
				{contract.RuleUnlistedModel, e, "PersonSummaryDTO", "PersonDTO.guardians[] -> PersonSummaryDTO"},
				{contract.RuleUnlistedModel, e, "EventStatus", "EventDTO.allOf[0] -> EventSummaryDTO.status -> EventStatus"},
				{contract.RuleUnlistedModel, e, "ContactType", "PersonDTO.contacts[] -> ContactDTO.type -> ContactType"},
			},
			reachable: 12,
		},
		{
			name: "through discriminator mappings, a bare mapping name and an alias",
			spec: mustLoadData(t, discriminatorDoc),
			opts: contract.CheckOptions{Models: []string{"Alias", "PaymentMethodDTO"}},
			want: []finding{
				{contract.RuleUnlistedModel, e, "PaymentDTO", "Alias -> PaymentDTO"},
				{contract.RuleUnlistedModel, e, "CardPaymentDTO", "PaymentMethodDTO.discriminator[card] -> CardPaymentDTO"},
				{contract.RuleUnlistedModel, e, "SepaPaymentDTO", "PaymentMethodDTO.discriminator[sepa] -> SepaPaymentDTO"},
				{contract.RuleUnlistedModel, e, "MetadataValueDTO", "Alias -> PaymentDTO.metadata{} -> MetadataValueDTO"},
			},
			reachable: 6,
		},
		{
			name: "dangling reference deep in a chain, from the nearest listed model",
			spec: mustLoad(t, "testdata/dangling-ref-deep.yaml"),
			opts: contract.CheckOptions{Models: []string{"OrderDTO", "OrderLineDTO", "ProductDTO", "MoneyDTO"}},
			want: []finding{
				{contract.RuleDanglingRef, e, "SupplierDTO", "ProductDTO.supplier -> SupplierDTO"},
			},
			reachable: 4,
		},
		{
			name: "dangling reference reached through unlisted models",
			spec: mustLoad(t, "testdata/dangling-ref-deep.yaml"),
			opts: contract.CheckOptions{Models: []string{"OrderDTO", "MoneyDTO"}},
			want: []finding{
				{contract.RuleUnlistedModel, e, "OrderLineDTO", "OrderDTO.lines[] -> OrderLineDTO"},
				{contract.RuleUnlistedModel, e, "ProductDTO", "OrderDTO.lines[] -> OrderLineDTO.product -> ProductDTO"},
				{contract.RuleDanglingRef, e, "SupplierDTO", "OrderDTO.lines[] -> OrderLineDTO.product -> ProductDTO.supplier -> SupplierDTO"},
			},
			reachable: 4,
		},
		{
			name:      "unresolved document, dangling reference not reached",
			spec:      mustLoadData(t, unresolvedElsewhereDoc),
			opts:      contract.CheckOptions{Models: []string{"A"}},
			want:      []finding{{contract.RuleUnresolved, e, "", ""}},
			reachable: 1,
		},
		{
			name:      "cycles, every member listed: clean",
			spec:      mustLoad(t, "testdata/cycle.yaml"),
			opts:      contract.CheckOptions{Models: []string{"PersonDTO", "GuardianDTO", "MembershipDTO", "EventCategoryDTO"}},
			want:      []finding{},
			reachable: 4,
			cycles: []string{
				"EventCategoryDTO.children[] -> EventCategoryDTO",
				"GuardianDTO.allOf[0] -> PersonDTO.guardians[] -> GuardianDTO",
				"PersonDTO.memberships[] -> MembershipDTO.person -> PersonDTO",
			},
		},
		{
			name: "cycle with an unlisted member",
			spec: mustLoad(t, "testdata/cycle.yaml"),
			opts: contract.CheckOptions{Models: []string{"PersonDTO", "GuardianDTO"}},
			want: []finding{
				{contract.RuleUnlistedModel, e, "MembershipDTO", "PersonDTO.memberships[] -> MembershipDTO"},
			},
			reachable: 3,
			cycles: []string{
				"GuardianDTO.allOf[0] -> PersonDTO.guardians[] -> GuardianDTO",
				"PersonDTO.memberships[] -> MembershipDTO.person -> PersonDTO",
			},
		},
		{
			name: "listed names that are not component schemas",
			spec: mustLoad(t, "testdata/admin-backend.yaml"),
			opts: contract.CheckOptions{Models: append(slices.Clone(closedList), "orderdto", "InvoiceDTO", "InvoiceDTO"), MinPaths: 30},
			want: []finding{
				{contract.RuleUnknownModel, e, "orderdto", ""},
				{contract.RuleUnknownModel, e, "InvoiceDTO", ""},
			},
			reachable: 20,
		},
		{
			name:      "29-path extraction: a warning",
			spec:      mustLoad(t, "testdata/extraction-29-paths.json"),
			opts:      contract.CheckOptions{Models: closedList, MinPaths: 30},
			want:      []finding{{contract.RuleFewPaths, w, "", ""}},
			reachable: 20,
		},
		{
			name:      "29-path extraction, strict: an error",
			spec:      mustLoad(t, "testdata/extraction-29-paths.json"),
			opts:      contract.CheckOptions{Models: closedList, MinPaths: 30, Strict: true},
			want:      []finding{{contract.RuleFewPaths, e, "", ""}},
			reachable: 20,
		},
		{
			name:      "29-path extraction, guard at 29: clean",
			spec:      mustLoad(t, "testdata/extraction-29-paths.json"),
			opts:      contract.CheckOptions{Models: closedList, MinPaths: 29, Strict: true},
			want:      []finding{},
			reachable: 20,
		},
		{
			name: "OpenAPI 3.1 keywords",
			spec: mustLoad(t, "testdata/openapi-3.1.yaml"),
			opts: contract.CheckOptions{Models: []string{"OrderDTO", "MoneyDTO"}},
			want: []finding{
				{contract.RuleUnlistedModel, e, "DateBound", "OrderDTO.range.prefixItems[0] -> DateBound"},
			},
			reachable: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := contract.Check(tt.spec, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarise(r.Findings); !slices.Equal(got, tt.want) {
				t.Errorf("findings:\n got %v\nwant %v", got, tt.want)
			}
			if r.Reachable != tt.reachable {
				t.Errorf("reachable %d, want %d", r.Reachable, tt.reachable)
			}
			var cycles []string
			for _, c := range r.Cycles {
				cycles = append(cycles, strings.Join(c, " -> "))
			}
			slices.Sort(cycles)
			if !slices.Equal(cycles, tt.cycles) {
				t.Errorf("cycles:\n got %q\nwant %q", cycles, tt.cycles)
			}
			if r.Failed() != slices.ContainsFunc(tt.want, func(f finding) bool { return f.severity == e }) {
				t.Errorf("Failed() = %v with findings %v", r.Failed(), tt.want)
			}
		})
	}
}

func TestCheckMessages(t *testing.T) {
	r, err := contract.Check(mustLoad(t, "testdata/admin-backend.yaml"), contract.CheckOptions{Models: []string{"orderdto"}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := r.Findings[0].Message; !strings.Contains(msg, "generates nothing") || !strings.Contains(msg, "did you mean OrderDTO?") {
		t.Errorf("unknown-model message %q", msg)
	}
	r, err = contract.Check(mustLoad(t, "testdata/extraction-29-paths.json"), contract.CheckOptions{Models: []string{"MoneyDTO"}, MinPaths: 30})
	if err != nil {
		t.Fatal(err)
	}
	if msg := r.Findings[0].Message; !strings.Contains(msg, "29 paths, fewer than 30") || !strings.Contains(msg, "extraction probably went wrong") {
		t.Errorf("few-paths message %q", msg)
	}
}

func TestCheckGeneratedFiles(t *testing.T) {
	spec := mustLoadData(t, `openapi: 3.0.3
info: {title: x, version: "1"}
paths: {}
components:
  schemas:
    OrderDTO: {type: object, properties: {line: {$ref: '#/components/schemas/order_line'}}}
    order_line: {type: object}
    MoneyDTO: {type: object}
`)
	models := []string{"OrderDTO", "order_line", "MoneyDTO", "NotASchema"}
	tests := []struct {
		name    string
		files   []string
		pattern string
		missing []string
	}{
		{"typescript-fetch layout, all there", []string{"models/OrderDTO.ts", "models/OrderLine.ts", "models/MoneyDTO.ts", "models/index.ts"}, "", nil},
		{"typescript-fetch layout, one missing", []string{"models/OrderDTO.ts", "models/OrderLine.ts", "apis/MoneyDTO.ts"}, "", []string{"MoneyDTO"}},
		{"name as written", []string{"src/order_line.py", "src/OrderDTO.py"}, "src/{name}.py", []string{"MoneyDTO"}},
		{"java layout with **", []string{"src/main/java/org/example/model/OrderDTO.java", "src/main/java/org/example/model/OrderLine.java", "model/MoneyDTO.java"}, "**/model/{Name}.java", nil},
		{"* stays within a folder", []string{"models/a/OrderDTO.ts"}, "models/*{Name}.ts", []string{"OrderDTO", "order_line", "MoneyDTO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, "// generated\n")
			}
			r, err := contract.Check(spec, contract.CheckOptions{Models: models, GeneratedDir: dir, FilePattern: tt.pattern})
			if err != nil {
				t.Fatal(err)
			}
			var missing []string
			for _, f := range r.Findings {
				if f.Rule == contract.RuleMissingFile {
					missing = append(missing, f.Model)
				}
			}
			if !slices.Equal(missing, tt.missing) {
				t.Errorf("missing files for %v, want %v", missing, tt.missing)
			}
		})
	}

	if _, err := contract.Check(spec, contract.CheckOptions{Models: models, GeneratedDir: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Error("a generated folder that does not exist is not reported")
	}
}

func TestValidateFilePattern(t *testing.T) {
	for pattern, ok := range map[string]bool{"models/{Name}.ts": true, "{name}.py": true, "models/*.ts": false, "": false} {
		if err := contract.ValidateFilePattern(pattern); (err == nil) != ok {
			t.Errorf("ValidateFilePattern(%q) = %v, want ok %v", pattern, err, ok)
		}
	}
}

func TestReadModels(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "models.txt")
	writeFile(t, file, "# the order flow\nOrderDTO\nMoneyDTO, PaymentDTO  # trailing comment\n\n")
	empty := filepath.Join(dir, "empty.txt")
	writeFile(t, empty, "# nothing\n")
	tests := []struct {
		arg     string
		want    []string
		wantErr bool
	}{
		{file, []string{"OrderDTO", "MoneyDTO", "PaymentDTO"}, false},
		{"OrderDTO,MoneyDTO", []string{"OrderDTO", "MoneyDTO"}, false},
		{"OrderDTO:MoneyDTO", []string{"OrderDTO", "MoneyDTO"}, false},
		{"com.example.OrderDTO", []string{"com.example.OrderDTO"}, false},
		{empty, nil, true},
		{"models.txt", nil, true},
		{filepath.Join(dir, "nope", "models"), nil, true},
		{dir, nil, true},
		{" , ", nil, true},
	}
	for _, tt := range tests {
		got, err := contract.ReadModels(tt.arg)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ReadModels(%q) = %v, %v; want %v (error %v)", tt.arg, got, err, tt.want, tt.wantErr)
		}
	}
}
