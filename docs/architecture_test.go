package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is go.mod's module path: the prefix of every import of ours.
const module = "portal"

// TestArchitecturePackageMap holds docs/ARCHITECTURE.md's package map to
// the tree: every package of the repository has a row, every row names a
// package that exists, and each row's "imports of ours" are exactly what
// the package's files (its tests apart) import of the repository. A
// column entry `X/...` stands for one or more packages under X; "-" for
// none. The map is the first page a newcomer reads: a package added,
// moved or rewired without it would send them to the wrong place.
func TestArchitecturePackageMap(t *testing.T) {
	rows := packageMapRows(t)
	packages := repositoryPackages(t)
	for pkg := range packages {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("docs/ARCHITECTURE.md: the package map has no row for `%s`", pkg)
		}
	}
	for pkg, documented := range rows {
		actual, ok := packages[pkg]
		if !ok {
			t.Errorf("docs/ARCHITECTURE.md: the package map's row `%s` names no package of the repository", pkg)
			continue
		}
		if problem := importsProblem(documented, actual); problem != "" {
			t.Errorf("docs/ARCHITECTURE.md: `%s` imports of ours %q: %s (it imports %s)", pkg, documented, problem, strings.Join(orNone(actual), ", "))
		}
	}
	if len(rows) < 40 {
		t.Fatalf("only %d rows read: the test no longer finds the package map", len(rows))
	}
}

// TestArchitectureNamesExistingIdentifiers: every Go identifier that
// docs/ARCHITECTURE.md names in backticks (`postNext`, `Service.Audit`,
// `payment.Of(svc)`) is declared somewhere in the repository, with the
// case it is written in: a trace naming a function renamed since leads a
// reader's search nowhere. A span is an identifier when it is one Go
// name, or two joined by a dot, with a capital letter or a lower-case
// start followed by a capital (camel case); words in capitals (GET, EUR)
// and snake_case (table and column names) are not.
func TestArchitectureNamesExistingIdentifiers(t *testing.T) {
	text, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	declared, external := repositoryDeclarations(t)
	identifier := regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)(?:\.([A-Za-z][A-Za-z0-9]*))?(?:\([^)]*\))?$`)
	capitals := regexp.MustCompile(`^[A-Z0-9]+$`)
	checked := 0
	for _, m := range codeSpan.FindAllStringSubmatch(string(text), -1) {
		id := identifier.FindStringSubmatch(m[1])
		if id == nil || capitals.MatchString(id[1]) || strings.ToLower(m[1]) == m[1] {
			continue
		}
		first, second := id[1], id[2]
		if second != "" && external[first] && !declared[first+"."+second] {
			continue // another module's: bun.IDB, httputil.ReverseProxy
		}
		if fileExtensions[second] {
			continue // a file: TestArchitectureFilesInTheirPackage
		}
		checked++
		switch {
		case second == "":
			if !declared[first] {
				t.Errorf("docs/ARCHITECTURE.md names `%s`: nothing in the repository declares %s", m[1], first)
			}
		case declared[first+"."+second]:
			// Type.Method, Type.Field or package.Name
		default:
			t.Errorf("docs/ARCHITECTURE.md names `%s`: nothing in the repository declares %s.%s", m[1], first, second)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d identifiers checked: the test no longer finds what the document names", checked)
	}
}

// fileExtensions are the ends of the file names the document names.
var fileExtensions = map[string]bool{"go": true, "templ": true, "sql": true, "json": true, "md": true, "yaml": true, "ts": true, "sh": true, "js": true, "css": true}

// TestArchitectureFilesInTheirPackage: a file named alone in a package
// map row (`serve.go` in `cmd/portal`'s) is in that package's folder or
// one beneath it, so that the row sends a reader to the file it means.
func TestArchitectureFilesInTheirPackage(t *testing.T) {
	text, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(text), "\n## Package map\n")
	section, _, _ = strings.Cut(section, "\n## ")
	checked := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := tableCells(line)
		if len(cells) < 3 {
			continue
		}
		var dirs []string
		for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			dirs = append(dirs, m[1])
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			if !bareFile.MatchString(m[1]) || placeholder.MatchString(m[1]) {
				continue
			}
			checked++
			if !slices.ContainsFunc(dirs, func(dir string) bool { return fileBeneath(dir, m[1]) }) {
				t.Errorf("docs/ARCHITECTURE.md: the row of %s names `%s`, which is not in it", strings.Join(dirs, ", "), m[1])
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d files checked: the test no longer finds the package map", checked)
	}
}

// fileBeneath reports whether a file of that name is in dir or beneath it.
func fileBeneath(dir, name string) bool {
	found := false
	_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = true
		}
		return nil
	})
	return found
}

// packageMapRows reads the package map's rows: the packages each row names
// in its first column, with its "imports of ours" (the last column).
func packageMapRows(t *testing.T) map[string]string {
	t.Helper()
	text, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "\n## Package map\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no section ## Package map")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := tableCells(line)
		if len(cells) < 3 {
			t.Fatalf("docs/ARCHITECTURE.md: a package map row of %d columns: %s", len(cells), line)
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			rows[m[1]] = cells[len(cells)-1]
		}
	}
	return rows
}

// tableCells splits a Markdown table row at its unescaped bars.
func tableCells(line string) []string {
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	// The text before the first bar and after the last is no cell.
	if len(cells) > 0 {
		cells = cells[1:]
	}
	return cells
}

// importsProblem compares a row's "imports of ours" with what the
// package imports; "" when they agree.
func importsProblem(documented string, actual []string) string {
	if strings.TrimSpace(documented) == "-" {
		if len(actual) > 0 {
			return "it says none"
		}
		return ""
	}
	covered := map[string]bool{}
	for _, entry := range strings.Split(documented, ",") {
		entry = strings.TrimSpace(entry)
		if prefix, ok := strings.CutSuffix(entry, "/..."); ok {
			found := false
			for _, imp := range actual {
				if strings.HasPrefix(imp, prefix+"/") {
					covered[imp], found = true, true
				}
			}
			if !found {
				return "it imports nothing under " + prefix
			}
			continue
		}
		if !slices.Contains(actual, entry) {
			return "it does not import " + entry
		}
		covered[entry] = true
	}
	for _, imp := range actual {
		if !covered[imp] {
			return "it does not name " + imp
		}
	}
	return ""
}

func orNone(list []string) []string {
	if len(list) == 0 {
		return []string{"-"}
	}
	return list
}

// repositoryPackages are the repository's Go packages (folders with a
// non-test Go file) and what each imports of the repository, sorted.
func repositoryPackages(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "bin" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imports := out[pkg]
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if ours, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(imports, ours) {
				imports = append(imports, ours)
			}
		}
		slices.Sort(imports)
		out[pkg] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(out, ".")
	return out
}

// repositoryDeclarations are the names every package of the repository
// declares, its tests included (declarationsOf), each also under its
// package's name (payment.Of, engine.WithOrganisation); and the names of
// the other modules' packages the repository imports (bun, httputil).
func repositoryDeclarations(t *testing.T) (declared, external map[string]bool) {
	t.Helper()
	out := map[string]bool{}
	external = map[string]bool{}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root, "*", "*", "*.go"))
	for _, name := range append(files, more...) {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if !strings.HasPrefix(imp, module+"/") {
				external[filepath.Base(imp)] = true
			}
		}
	}
	for pkg := range repositoryPackages(t) {
		decls, err := declarationsOf(filepath.Join(root, pkg), true)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		name := filepath.Base(pkg)
		for d := range decls {
			out[d] = true
			if _, member, ok := strings.Cut(d, "."); ok {
				out[member] = true // a method or field named alone
			} else {
				out[name+"."+d] = true
			}
		}
	}
	return out, external
}
