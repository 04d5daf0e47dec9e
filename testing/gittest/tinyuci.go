package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The search lines of the tiny UCI engine (coordinator/e2e/testdata/
// tinyuci) that TinyUCI's two branches differ by.
const (
	TinyUCIDeep    = "search(&pos, 3, -1000000"
	TinyUCIShallow = "search(&pos, 2, -1000000"
)

// TinyUCI makes, under a new root, repository "tinyuci" of the tiny UCI
// engine in srcDir (tinyuci.c and its Makefile) with two branches: main
// searches its games one ply less (TinyUCIShallow), dev is tinyuci as it
// is (TinyUCIDeep); the bench, a fixed search, is the same on both. main
// is checked out. It returns the root, for Serve.
func TinyUCI(t testing.TB, srcDir string) string {
	t.Helper()
	code, err := os.ReadFile(filepath.Join(srcDir, "tinyuci.c"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(srcDir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(code), TinyUCIDeep) {
		t.Fatalf("tinyuci.c has no %q", TinyUCIDeep)
	}
	root := t.TempDir()
	repo := NewRepo(t, root, "tinyuci")
	repo.Commit("tinyuci: depth 2", map[string]string{"Makefile": string(makefile), "tinyuci.c": strings.Replace(string(code), TinyUCIDeep, TinyUCIShallow, 1)})
	repo.Branch("dev")
	repo.Commit("Search one ply deeper", map[string]string{"tinyuci.c": string(code)})
	repo.Checkout("main")
	return root
}
