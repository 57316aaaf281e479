// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The packages whose rules the cluster protocol gates: the ledger, the lessor that proposes
// what the ledger applies, and the member that raises the protocol and admits members.
var gatedPackages = []string{".", "../lessor", ".."}

const versionsFile = "versions.go"

// parsePackage parses dir's Go files but its tests.
func parsePackage(t *testing.T, fset *token.FileSet, dir string) map[string]*ast.File {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = af
	}
	return out
}

// protocolRead reports whether e reads a cluster protocol: readProtocol or ClusterProtocol called,
// or a name that says it holds one (cur, proto, protocol, ...Protocol).
func protocolRead(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return protocolRead(x.X)
	case *ast.CallExpr:
		switch f := x.Fun.(type) {
		case *ast.Ident:
			return f.Name == "readProtocol"
		case *ast.SelectorExpr:
			return f.Sel.Name == "ClusterProtocol"
		}
	case *ast.Ident:
		return protocolName(x.Name)
	case *ast.SelectorExpr:
		return protocolName(x.Sel.Name)
	}
	return false
}

func protocolName(name string) bool {
	return name == "cur" || strings.Contains(strings.ToLower(name), "proto")
}

// TestVersions_EveryGateIsInTheTable: the next protocol bump is a read of versions.go, not a grep.
// Every command type has its protocol in commandProtocol; no constant named ...Protocol is
// declared elsewhere; and no number is compared with a cluster protocol outside versions.go (a
// rule gated by a literal, or by a constant of its own file, would be missed by the reader).
func TestVersions_EveryGateIsInTheTable(t *testing.T) {
	fset := token.NewFileSet()
	var cmdTypes []string
	var table []string
	for _, dir := range gatedPackages {
		for path, f := range parsePackage(t, fset, dir) {
			inTable := dir == "." && filepath.Base(path) == versionsFile
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.GenDecl:
					if x.Tok != token.CONST {
						return true
					}
					for _, spec := range x.Specs {
						vs := spec.(*ast.ValueSpec)
						typ, _ := vs.Type.(*ast.Ident)
						for _, name := range vs.Names {
							if typ != nil && typ.Name == "CommandType" {
								if name.Name != "IgnoreUnknown" {
									cmdTypes = append(cmdTypes, name.Name)
								}
								continue
							}
							if strings.HasSuffix(name.Name, "Protocol") && !inTable {
								t.Errorf("%s: constant %s belongs in %s's table of protocols", fset.Position(name.Pos()), name.Name, versionsFile)
							}
						}
					}
				case *ast.FuncDecl:
					if inTable && x.Name.Name == "commandProtocol" {
						ast.Inspect(x.Body, func(n ast.Node) bool {
							if id, ok := n.(*ast.Ident); ok {
								table = append(table, id.Name)
							}
							return true
						})
					}
				case *ast.BinaryExpr:
					switch x.Op {
					case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
					default:
						return true
					}
					for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
						lit, ok := pair[0].(*ast.BasicLit)
						if ok && lit.Kind == token.INT && lit.Value != "0" && protocolRead(pair[1]) && !inTable {
							t.Errorf("%s: cluster protocol compared with %s: name the gate in %s", fset.Position(x.Pos()), lit.Value, versionsFile)
						}
					}
				}
				return true
			})
		}
	}
	if len(cmdTypes) == 0 {
		t.Fatal("found no command types: the test no longer reads command.go")
	}
	for _, c := range cmdTypes {
		if !slices.Contains(table, c) {
			t.Errorf("command type %s has no protocol in %s (commandProtocol)", c, versionsFile)
		}
	}
}

// TestVersions_CommandsNameKnownProtocols: every command type this build applies first applies
// at a protocol it knows, and the oldest protocol it runs beside is not above the newest.
func TestVersions_CommandsNameKnownProtocols(t *testing.T) {
	if OldestProtocol < 1 || OldestProtocol > Protocol {
		t.Fatalf("OldestProtocol %d outside 1..Protocol %d", OldestProtocol, Protocol)
	}
	for typ := range 256 {
		ct := CommandType(typ)
		if p := commandProtocol(ct); p < 0 || p > Protocol || (p == 0) == ct.known() {
			t.Errorf("command type %s: protocol %d (known %v), want 1..%d for a known type", ct, p, ct.known(), Protocol)
		}
	}
}
