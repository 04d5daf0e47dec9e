package layers

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/arbiter-chess/arbiter/"

type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// listPackages reads every package of the module with go/build, in this
// process, so that the test cache sees a changed file.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if dir != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if dir != root {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir // another module (tools/, deploy/)
			}
		}
		bp, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return fmt.Errorf("%s: %w", dir, err)
		}
		rel, _ := filepath.Rel(root, dir)
		pkgs = append(pkgs, pkg{module + filepath.ToSlash(rel), bp.Imports, bp.TestImports, bp.XTestImports})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 50 {
		t.Fatalf("found %d packages: not run from scripts/layers?", len(pkgs))
	}
	return pkgs
}

// top is the top-level folder of an import path of this module, or ""
// for one outside it.
func top(path string) string {
	rest, ok := strings.CutPrefix(path, module)
	if !ok {
		return ""
	}
	folder, _, _ := strings.Cut(rest, "/")
	return folder
}

func floorOf(folder string) (int, bool) {
	for i, f := range Floors {
		for _, name := range f {
			if name == folder {
				return i, true
			}
		}
	}
	return 0, false
}

// isTestHelper says whether a package exists for tests only: under
// testing/, or a helper beside its package (syzygytest, sandboxtest). The
// test kind's package, kinds/test, is a kind, not a helper.
func isTestHelper(path string) bool {
	name := path[strings.LastIndex(path, "/")+1:]
	return top(path) == Testing || strings.HasSuffix(name, "test") && name != "test"
}

// Every package's own imports point to its floor or below, and never
// into testing/; its tests may also import testing/ helpers.
func TestNoImportPointsUp(t *testing.T) {
	for _, p := range listPackages(t) {
		folder := top(p.ImportPath)
		if folder == Testing {
			continue
		}
		floor, ok := floorOf(folder)
		if !ok {
			t.Errorf("%s: folder %s/ has no floor in layers.Floors", p.ImportPath, folder)
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				to := top(imp)
				if to == "" {
					continue
				}
				if isTestHelper(imp) {
					if !test && !isTestHelper(p.ImportPath) {
						t.Errorf("%s imports the test helper %s outside its tests", p.ImportPath, imp)
					}
					continue
				}
				if test {
					continue // a test may drive its package from above (a real coordinator, a real worker)
				}
				if f, ok := floorOf(to); ok && f > floor {
					t.Errorf("%s (floor %d, %s/) imports %s (floor %d, %s/): an arrow pointing up", p.ImportPath, floor, folder, imp, f, to)
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)
	}
}

// Go's internal/ folders hide packages by path, not by purpose; the tree
// names its layers instead. The engine keeps its one code generator.
func TestNoInternalFolder(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.Contains(p.ImportPath, "/internal/") && p.ImportPath != module+"engine/internal/perftgen" {
			t.Errorf("%s: a package under internal/ (name its layer instead)", p.ImportPath)
		}
	}
}

// The test above must be able to fail: an arrow from the foundation to
// the coordinator is one.
func TestAnUpwardArrowIsFound(t *testing.T) {
	base, _ := floorOf("base")
	coord, _ := floorOf("coordinator")
	if !(base < coord) {
		t.Fatalf("base (%d) is not below coordinator (%d)", base, coord)
	}
	if top(module+"coordinator/core") != "coordinator" || top("google.golang.org/grpc") != "" {
		t.Fatal("top() misreads import paths")
	}
}

// A test helper is told from a package by its name: the helpers beside
// their packages end in "test", and the test kind (kinds/test) is not one.
func TestTestHelpersByName(t *testing.T) {
	for path, want := range map[string]bool{
		module + "kinds/test":                        false,
		module + "kinds/kindtest":                    true,
		module + "coordinator/gamepair/gamepairtest": true,
		module + "testing/farmtest":                  true,
		module + "coordinator/gamepair":              false,
	} {
		if got := isTestHelper(path); got != want {
			t.Errorf("isTestHelper(%s) = %v, want %v", path, got, want)
		}
	}
}
