package banking

import (
	"testing"

	"portal/engine/banking/schematest"
)

// validateXSD is schematest.Validate (the schemas live in testdata).
func validateXSD(t *testing.T, xsd string, doc []byte) string {
	t.Helper()
	return schematest.Validate(t, xsd, doc)
}
