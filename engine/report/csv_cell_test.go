package report_test

import (
	"bytes"
	"testing"

	"portal/engine/report"
)

// A cell a spreadsheet would run as a formula is written as text; numbers,
// negative amounts included, stay numbers.
func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"Alex":                    "Alex",
		"=HYPERLINK(\"x\",\"y\")": "'=HYPERLINK(\"x\",\"y\")",
		"+41 79 123 45 67":        "'+41 79 123 45 67",
		"@SUM(A1)":                "'@SUM(A1)",
		"-2+3":                    "'-2+3",
		"\tx":                     "'\tx",
		"-12.50":                  "-12.50",
		"":                        "",
	} {
		if got := report.CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
	var buf bytes.Buffer
	w := report.CSVExport(&buf)
	if err := w.Row([]string{"=1+1", "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "'=1+1,ok\n" {
		t.Fatalf("export row %q", got)
	}
}
