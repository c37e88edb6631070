package tokenjuice

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestLazyExpressionsCompile: every expression given to lazyRE compiles. Compiled on first use,
// a broken one would otherwise panic only when an output first reaches its rule.
func TestLazyExpressionsCompile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "lazyRE" {
				return true
			}
			expr, ok := literal(call.Args[0])
			if !ok {
				t.Errorf("%s: lazyRE of a non-literal; this test cannot check it", fset.Position(call.Pos()))
				return true
			}
			if _, err := regexp.Compile(expr); err != nil {
				t.Errorf("%s: %v", fset.Position(call.Pos()), err)
			}
			n++
			return true
		})
	}
	if n < 50 {
		t.Errorf("found %d lazy expressions; the package has about ninety", n)
	}
}

// literal is the value of a string literal or of a sum of them.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := literal(e.X)
		y, ok2 := literal(e.Y)
		return x + y, ok1 && ok2
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}
