package staffview

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"portal/views/lang"
)

// TestEveryAuditedActionHasWords: each action the engine writes to the
// audit log as a literal has words in every language, so the audit page
// never shows a code. An action built at run time is not seen here.
func TestEveryAuditedActionHasWords(t *testing.T) {
	var files []string // the engine's centre and its subject packages
	err := filepath.WalkDir("../../engine", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".go" {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("engine sources: %v", err)
	}
	action := regexp.MustCompile(`Action: *"([a-z_]+\.[a-z_]+)"|action(?: :)?= "([a-z_]+\.[a-z_]+)"`)
	test := regexp.MustCompile(`_test\.go$`)
	seen := 0
	for _, f := range files {
		if test.MatchString(f) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range action.FindAllStringSubmatch(string(src), -1) {
			a := m[1] + m[2]
			seen++
			for _, code := range lang.Codes {
				if (*auditActions.For(code))[a] == "" {
					t.Errorf("%s: action %q has no words in %s", filepath.Base(f), a, code)
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("only %d audited actions found in the engine's sources", seen)
	}
}
