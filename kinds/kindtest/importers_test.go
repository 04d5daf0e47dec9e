package kindtest

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/arbiter-chess/arbiter"

// TestOneImporterPerKind: the package of each kind under kinds/ is
// imported by exactly one package of the tree, kinds/install, the one
// list of kinds (go list, the packages' own imports; tests may import a
// kind to test it, and are logged). The control: go list sees the kinds
// and the install list's imports of them, so an empty answer fails.
func TestOneImporterPerKind(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of the module")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	importers := map[string][]string{}     // kind package → packages importing it
	testImporters := map[string][]string{} // kind package → packages whose tests import it
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list: %q", line)
		}
		pkg := parts[0]
		if isKind(pkg) {
			kinds = append(kinds, pkg)
		}
		for _, imp := range strings.Fields(parts[1]) {
			if isKind(imp) {
				importers[imp] = append(importers[imp], pkg)
			}
		}
		for _, imp := range strings.Fields(parts[2]) {
			if isKind(imp) && imp != pkg {
				testImporters[imp] = append(testImporters[imp], pkg)
			}
		}
	}
	if len(kinds) == 0 {
		t.Fatal("go list found no kind under kinds/")
	}
	for _, k := range kinds {
		got := importers[k]
		sort.Strings(got)
		if len(got) != 1 || got[0] != module+"/kinds/install" {
			t.Errorf("%s is imported by %v; want kinds/install alone", k, got)
		}
		t.Logf("%s: imported by %v; by the tests of %v", k, got, testImporters[k])
	}
}

// isKind reports whether pkg is a kind's package: a folder of kinds/
// other than the install list and these tests.
func isKind(pkg string) bool {
	rest, ok := strings.CutPrefix(pkg, module+"/kinds/")
	return ok && rest != "install" && rest != "kindtest" && !strings.Contains(rest, "/")
}
