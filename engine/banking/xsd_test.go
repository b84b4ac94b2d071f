package banking

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// xmllintRequired says whether a missing xmllint fails the schema tests
// instead of skipping them: .ci/test-env sets PORTAL_XMLLINT=required when
// it found or installed it, and PORTAL_TEST_REQUIRE=all (CI) requires it.
func xmllintRequired() bool {
	return os.Getenv("PORTAL_XMLLINT") == "required" || os.Getenv("PORTAL_TEST_REQUIRE") == "all"
}

// validateXSD validates the XML document doc against testdata/schemas/xsd
// with xmllint (Debian's libxml2-utils) and returns xmllint's complaint, ""
// when the document is valid.
func validateXSD(t *testing.T, xsd string, doc []byte) string {
	t.Helper()
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		msg := "xmllint not found: the ISO 20022 schema checks need it (apt-get install libxml2-utils)"
		if xmllintRequired() {
			t.Fatalf("%s (required by PORTAL_XMLLINT / PORTAL_TEST_REQUIRE)", msg)
		}
		t.Skip(msg)
	}
	file := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "schemas", xsd), file).CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}
