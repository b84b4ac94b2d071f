// Package schematest validates ISO 20022 documents against the official
// schemas kept in engine/banking/testdata/schemas, with xmllint (Debian's
// libxml2-utils), for the tests of every package that writes or reads
// bank files.
package schematest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Required says whether a missing xmllint fails the schema tests instead
// of skipping them: .ci/test-env sets PORTAL_XMLLINT=required when it
// found or installed it, and PORTAL_TEST_REQUIRE=all (CI) requires it.
func Required() bool {
	return os.Getenv("PORTAL_XMLLINT") == "required" || os.Getenv("PORTAL_TEST_REQUIRE") == "all"
}

// Validate validates the XML document doc against the schema named xsd
// ("pain.008.001.08.xsd") and returns xmllint's complaint, "" when the
// document is valid. Without xmllint the test is skipped, or fails when
// Required.
func Validate(t testing.TB, xsd string, doc []byte) string {
	t.Helper()
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		msg := "xmllint not found: the ISO 20022 schema checks need it (apt-get install libxml2-utils)"
		if Required() {
			t.Fatalf("%s (required by PORTAL_XMLLINT / PORTAL_TEST_REQUIRE)", msg)
		}
		t.Skip(msg)
	}
	_, self, _, _ := runtime.Caller(0)
	schemas := filepath.Join(filepath.Dir(self), "..", "testdata", "schemas")
	file := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--noout", "--nonet", "--schema", filepath.Join(schemas, xsd), file).CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}
