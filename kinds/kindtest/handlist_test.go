package kindtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	_ "github.com/arbiter-chess/arbiter/coordinator" // the built-in kinds register
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	_ "github.com/arbiter-chess/arbiter/kinds/install" // every kind of kinds/
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// repoRoot is the module's root, from this package's folder.
const repoRoot = "../.."

// kindNames are the names of every real kind (the fake one of this test
// binary left out): the coordinator's (workload) and the clients'
// (jobkind).
func kindNames() map[string]bool {
	names := map[string]bool{}
	for _, k := range workload.Kinds() {
		names[k.Name] = true
	}
	for _, n := range jobkind.Names() {
		names[n] = true
	}
	delete(names, fakeKind)
	return names
}

// handLists finds, in the Go source src, every hand-kept list of two or
// more kind names: a slice, array or map literal, or a switch case, whose
// elements (or keys) include two or more string literals naming kinds,
// and a string literal that is such a list by itself ("perft, spsa",
// "sprt|match"). It returns one line per finding.
func handLists(t *testing.T, path string, src []byte, names map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var found []string
	report := func(n ast.Node, what string, kinds []string) {
		if len(kinds) >= 2 {
			found = append(found, fset.Position(n.Pos()).String()+": "+what+" of kinds "+strings.Join(kinds, ", "))
		}
	}
	kindOf := func(e ast.Expr) (string, bool) {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			e = kv.Key
		}
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil && names[s]
	}
	distinct := func(exprs []ast.Expr) []string {
		seen := map[string]bool{}
		for _, e := range exprs {
			if k, ok := kindOf(e); ok {
				seen[k] = true
			}
		}
		out := make([]string, 0, len(seen))
		for k := range seen {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			report(n, "a literal", distinct(n.Elts))
		case *ast.CaseClause:
			report(n, "a switch case", distinct(n.List))
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil {
					report(n, "a string", listedKinds(s, names))
				}
			}
		}
		return true
	})
	return found
}

// listSep is what a list of words written in a string is joined by.
var listSep = regexp.MustCompile(`^\s*(,|\||/|, or|, and| or| and)\s*$`)

// listedKinds returns the distinct kinds of s's longest run of kind names
// joined by list separators ("test, perft, spsa", "sprt|match").
func listedKinds(s string, names map[string]bool) []string {
	words := regexp.MustCompile(`[a-z0-9-]+`).FindAllStringIndex(s, -1)
	var best []string
	run := map[string]bool{}
	prevEnd := -1
	flush := func() {
		if len(run) > len(best) {
			best = best[:0]
			for k := range run {
				best = append(best, k)
			}
		}
		run = map[string]bool{}
	}
	for _, w := range words {
		word := s[w[0]:w[1]]
		if !names[word] {
			flush()
			prevEnd = -1
			continue
		}
		if prevEnd >= 0 && !listSep.MatchString(s[prevEnd:w[0]]) {
			flush()
		}
		run[word] = true
		prevEnd = w[1]
	}
	flush()
	sort.Strings(best)
	return best
}

// TestNoHandKeptKindLists: no Go file (tests and generated code aside)
// outside kinds/install keeps a list of kind names by hand: every list of
// kinds is read from the registries. scripts/layers is not read: its
// floors list folders, and the domain libraries' folders (match, spsa,
// datagen, verify) bear their kinds' names. The control: the checker finds each
// kind of list in a sample that has them, and none in one that reads the
// registry.
func TestNoHandKeptKindLists(t *testing.T) {
	names := kindNames()
	for _, want := range []string{"perft", "test", "sprt", "match", "spsa", "verify", "datagen"} {
		if !names[want] {
			t.Fatalf("kind %s is not registered: the check would miss lists naming it (registered: %v)", want, names)
		}
	}
	sample := []byte(`package sample
var kinds = []string{"perft", "datagen", "spsa"}
var follow = map[string]bool{"test": true, "datagen": true}
const help = "list only jobs of this kind: test, perft, spsa"
func f(k string) bool {
	switch k {
	case "sprt", "match":
		return true
	}
	return false
}
var fine = []string{"perft"} // one kind is a name, not a list
const prose = "a perft job is not a test of engines"
`)
	if got := handLists(t, "sample.go", sample, names); len(got) != 4 {
		t.Fatalf("the checker found %d lists in the sample, want 4 (slice, map, string, case):\n%s", len(got), strings.Join(got, "\n"))
	}

	var found []string
	files := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if path != repoRoot && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == filepath.Join("kinds", "install") ||
				rel == filepath.Join("scripts", "layers") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		found = append(found, handLists(t, rel, src, names)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 300 {
		t.Fatalf("%d Go files read from %s: not the whole tree", files, repoRoot)
	}
	if len(found) > 0 {
		t.Errorf("%d hand-kept lists of kinds (read them from the registries: workload, jobkind, jobreport, web, clicmd):\n%s",
			len(found), strings.Join(found, "\n"))
	}
}
