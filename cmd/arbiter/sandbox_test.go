package main

import (
	"os"
	"testing"

	"github.com/arbiter-chess/arbiter/internal/fastchesscli"
	"github.com/arbiter-chess/arbiter/internal/sandbox"
)

// TestMain lets this test binary serve as the sandbox wrapper, as main
// does: `arbiter up` run from a test probes and runs uploaded engines
// through os.Executable(), which is this binary.
func TestMain(m *testing.M) {
	sandbox.RunIfWrapper()
	// Called through a symlink named fastchess or cutechess-cli, this
	// test binary is arbiter in that mode (TestFastchessSymlink).
	if _, ok := fastchesscli.DialectOf(os.Args[0]); ok {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
