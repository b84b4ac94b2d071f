package messages

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinksTakeTheClubsAddress: every message's links start at its club's
// own address, never at the portal's base address where the club has a
// hostname of its own (a returned debit's pay link once pointed at the
// other club's host). The base address reaches the messages' code
// (Deps.BaseURL) and the engine's pay links (Service.publicURL, through
// OrgBase) only as an argument of engine.OrganisationAddress, which
// answers the club's address; TestRegistrationLinkPerOrganisation checks
// that function's answer per club. Any other use is the bug again, in
// whichever message kind it is written.
func TestLinksTakeTheClubsAddress(t *testing.T) {
	for _, c := range []struct{ dir, field string }{{".", "BaseURL"}, {"../../engine", "publicURL"}} {
		if uses := baseAddressUses(t, c.dir, c.field); uses == 0 {
			t.Fatalf("no use of %s found in %s: the test no longer sees how links are made", c.field, c.dir)
		}
	}
}

// baseAddressUses counts the uses of the field holding the portal's base
// address in the package in dir, failing the test for each one that is
// not an argument of OrganisationAddress, the field's setting or its test
// for "".
func baseAddressUses(t *testing.T, dir, field string) int {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	uses := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return false
			}
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == field {
				uses++
				if !organisationAddressArgument(stack, sel) && !settingOrEmptyTest(stack, sel) {
					t.Errorf("%s: %s used other than through OrganisationAddress: a link would ignore its club's own address", fset.Position(sel.Pos()), field)
				}
			}
			stack = append(stack, n)
			return true
		})
	}
	return uses
}

// settingOrEmptyTest reports whether sel, under stack, is assigned to or
// compared (with ""), which makes no link.
func settingOrEmptyTest(stack []ast.Node, sel *ast.SelectorExpr) bool {
	switch parent := stack[len(stack)-1].(type) {
	case *ast.AssignStmt:
		for _, lhs := range parent.Lhs {
			if lhs == sel {
				return true
			}
		}
	case *ast.BinaryExpr:
		lit, ok := parent.Y.(*ast.BasicLit)
		return ok && lit.Value == `""`
	}
	return false
}

// organisationAddressArgument reports whether sel, under stack, is an
// argument of a call of engine.OrganisationAddress (OrganisationAddress
// in the engine).
func organisationAddressArgument(stack []ast.Node, sel *ast.SelectorExpr) bool {
	if len(stack) == 0 {
		return false
	}
	call, ok := stack[len(stack)-1].(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fun := call.Fun.(type) {
	case *ast.Ident: // in the engine itself
		if fun.Name != "OrganisationAddress" {
			return false
		}
	case *ast.SelectorExpr:
		if pkg, ok := fun.X.(*ast.Ident); !ok || pkg.Name != "engine" || fun.Sel.Name != "OrganisationAddress" {
			return false
		}
	default:
		return false
	}
	for _, arg := range call.Args {
		if arg == sel {
			return true
		}
	}
	return false
}
