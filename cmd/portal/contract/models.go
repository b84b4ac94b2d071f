package contract

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ReadModels reads an allow-list given as a file or as a list. A file
// holds names separated by new lines, commas or spaces, with # starting a
// comment. A list separates names by commas, spaces or colons (the form
// openapi-generator's models= property takes). An argument that looks
// like a path but names no file is an error, not a one-model list.
func ReadModels(arg string) ([]string, error) {
	info, err := os.Stat(arg)
	if err == nil && info.IsDir() {
		return nil, fmt.Errorf("models file %s is a folder", arg)
	}
	if err == nil {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			names = append(names, splitNames(line)...)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("models file %s lists no model", arg)
		}
		return names, nil
	}
	if strings.ContainsRune(arg, os.PathSeparator) || strings.ContainsRune(arg, '/') {
		return nil, fmt.Errorf("models file %s: no such file", arg)
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".txt", ".list", ".yaml", ".yml", ".json":
		return nil, fmt.Errorf("models file %s: no such file", arg)
	}
	names := splitNames(arg)
	if len(names) == 0 {
		return nil, fmt.Errorf("no model given")
	}
	return names, nil
}

func splitNames(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ':' || r == ' ' || r == '\t' || r == '\r' || r == '\n'
	})
}
