package config

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestConfigurationDocumentsEveryVariable holds docs/CONFIGURATION.md to the
// settings the portal reads: its table has one row per variable, no more,
// and it names NAME_FILE for each secret and for no other setting, so that
// an operator reading it (and the examples in deploy/, which are checked
// against Variables) never sets a variable the portal ignores.
func TestConfigurationDocumentsEveryVariable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(PORTAL_[A-Z0-9_]+)` \\|").FindAllSubmatch(doc, -1) {
		rows = append(rows, string(m[1]))
	}
	files := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(PORTAL_[A-Z0-9_]+)_FILE\b`).FindAllSubmatch(doc, -1) {
		files[string(m[1])] = true
	}
	var names []string
	for _, v := range Variables() {
		names = append(names, v.Name)
		if !slices.Contains(rows, v.Name) {
			t.Errorf("docs/CONFIGURATION.md has no row for %s", v.Name)
		}
		if v.Secret && !files[v.Name] {
			t.Errorf("docs/CONFIGURATION.md does not say that the secret %s can be read from %s_FILE", v.Name, v.Name)
		}
		if !v.Secret && files[v.Name] {
			t.Errorf("docs/CONFIGURATION.md names %s_FILE, but %s is not a secret: the portal does not read that file", v.Name, v.Name)
		}
	}
	for i, row := range rows {
		if !slices.Contains(names, row) {
			t.Errorf("docs/CONFIGURATION.md has a row for %s, which the portal does not read", row)
		}
		if slices.Contains(rows[:i], row) {
			t.Errorf("docs/CONFIGURATION.md has two rows for %s", row)
		}
	}
}
