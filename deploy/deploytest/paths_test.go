package deploytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the root of the arbiter repository (two levels up from this
// package), checked by the module line of its go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatalf("repository root: %v", err)
	}
	if !strings.Contains(string(b), "module github.com/arbiter-chess/arbiter\n") {
		t.Fatalf("%s/go.mod is not the arbiter module", root)
	}
	return root
}

// deployDir is deploy/ in the repository.
func deployDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "deploy")
}

func mustExist(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("%v", err)
	}
	return fi
}
