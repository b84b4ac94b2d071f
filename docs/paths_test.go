// Package docs_test holds the docs to the repository they describe: a
// file, folder or declaration that a document names must exist, so that a
// move or a rename cannot leave a document pointing nowhere.
package docs_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository, seen from this folder.
const root = ".."

var (
	// codeSpan is Markdown's inline code.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// bareFile is a file named without its folder ("forms_api.go").
	bareFile = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.(?:go|templ|sql|yaml|json|ts|sh)$`)
	// placeholder is a part of a path that stands for many: <code>, {id}, *.
	placeholder = regexp.MustCompile(`<[^>]*>|\{[^}]*\}|\*+`)
	// declaration is a Go declaration after a package's path:
	// engine/jobs.Runner, relay/session.Manager.Get, outbound/messages.outbox(confirmation).
	declaration = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\(.*\))?$`)
)

// TestDocsNameExistingPaths: every repository path that a document in
// docs/ names in backticks exists: a file or a folder (`engine/registration`,
// `handlers/members/forms_api.go`), a path with placeholders matches at
// least one (`views/lang/locales/member.<code>.json`, `views/mailview/*.templ`),
// a declaration after a package's path is declared in it
// (`relay/session.Manager.Get`), and a file named alone exists somewhere
// (`forms_api.go`). A span is a repository path when its first folder is
// one at the top of the repository; paths the build makes and .gitignore
// keeps out (`static/node_modules`) are not the repository's.
func TestDocsNameExistingPaths(t *testing.T) {
	top := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		top[e.Name()] = true
	}
	ignored := gitIgnored(t)
	names := fileNames(t)
	docs, err := filepath.Glob("*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no documents here: %v", err)
	}
	checked := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range codeSpan.FindAllStringSubmatch(string(text), -1) {
			span := m[1]
			if strings.ContainsAny(span, " \t") {
				continue
			}
			first, _, nested := strings.Cut(span, "/")
			switch {
			case nested && top[first] && !ignored(span):
				checked++
				if problem := pathProblem(span); problem != "" {
					t.Errorf("docs/%s names `%s`: %s", doc, span, problem)
				}
			case !nested && bareFile.MatchString(span) && !placeholder.MatchString(span):
				checked++
				if !names[span] {
					t.Errorf("docs/%s names `%s`: no file of the repository has this name", doc, span)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d paths checked: the test no longer finds what the documents name", checked)
	}
}

// TestPathProblem: the check itself tells an existing path from a
// missing one, in each form a document names.
func TestPathProblem(t *testing.T) {
	tests := []struct {
		span string
		ok   bool
	}{
		{"engine/demodata/demo_definition.yaml", true},
		{"engine/demo_definition.yaml", false},
		{"engine/registration", true},
		{"engine/registration/", true},
		{"cmd/portal/contract/testdata/", true},
		{"views/mailview/*.templ", true},
		{"views/nothing_*.templ", false},
		{"views/lang/locales/member.<code>.json", true},
		{"docs/img/staff-<name>-<width>.png", true},
		{"relay/session.Manager.Get", true},
		{"relay/session.Manager.Lose", false},
		{"engine/jobs.Runner", true},
		{"engine/jobs.Walker", false},
		{"outbound/messages.outbox(confirmation)", true},
		{"engine/registration/validation.go:42", true},
	}
	for _, tc := range tests {
		if problem := pathProblem(tc.span); (problem == "") != tc.ok {
			t.Errorf("`%s`: problem %q, want found %v", tc.span, problem, tc.ok)
		}
	}
}

// pathProblem says what is wrong with a repository path a document
// names; "" when it exists.
func pathProblem(span string) string {
	p := strings.TrimSuffix(span, "/")
	if i := strings.LastIndex(p, ":"); i > 0 && strings.Trim(p[i+1:], "0123456789") == "" {
		p = p[:i] // file.go:42
	}
	if placeholder.MatchString(p) {
		matches, err := filepath.Glob(filepath.Join(root, placeholder.ReplaceAllString(p, "*")))
		if err != nil || len(matches) == 0 {
			return "nothing in the repository matches it"
		}
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, p)); err == nil {
		return ""
	}
	// A declaration after a package's path: the package is the folder
	// up to the first dot of the last part.
	dir, last := path.Split(p)
	pkg, decl, ok := strings.Cut(last, ".")
	if !ok {
		return "no such file or folder"
	}
	m := declaration.FindStringSubmatch(decl)
	if m == nil {
		return "no such file or folder"
	}
	decls, err := declarations(filepath.Join(root, dir, pkg))
	if err != nil {
		return "no such file or folder"
	}
	name := m[1]
	if m[2] != "" {
		name += "." + m[2]
	}
	if !decls[name] {
		return "the package " + dir + pkg + " declares no " + name
	}
	return ""
}

// declarations are the names a package's files (its tests apart) declare:
// its functions, types, variables and constants, and Type.Method and
// Type.Field.
func declarations(dir string) (map[string]bool, error) {
	return declarationsOf(dir, false)
}

// declarationsOf is declarations, of the package's tests too when tests is
// set, with each method also under its name alone (GiveMandate of
// Service.GiveMandate) when bare is set.
func declarationsOf(dir string, tests bool) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fs.ErrNotExist
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") && !tests {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					out[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if generic, ok := recv.(*ast.IndexExpr); ok {
					recv = generic.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					out[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									out[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out, nil
}

// gitIgnored reports whether a path is one the top-level .gitignore keeps
// out of the repository by its anchored entries (/static/node_modules/):
// what the build makes, which documents may name.
func gitIgnored(t *testing.T) func(string) bool {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var anchored []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "/") {
			anchored = append(anchored, strings.Trim(line, "/"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return func(p string) bool {
		p = strings.TrimSuffix(p, "/")
		return slices.ContainsFunc(anchored, func(a string) bool { return p == a || strings.HasPrefix(p, a+"/") })
	}
}

// fileNames are the names of the repository's files, in any folder, but
// not those of the folders the build fills (node_modules, bin).
func fileNames(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "node_modules" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoConflictMarkers: no document (README.md included) carries the
// markers of a merge left unresolved, whose two halves disagree.
func TestNoConflictMarkers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(files, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") || line == "=======" {
				t.Errorf("%s:%d: a merge conflict marker: %q", name, i+1, line)
			}
		}
	}
}
