package main

import (
	"os"
	"testing"

	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	"github.com/arbiter-chess/arbiter/local/fastchesscli"
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
	// arbiter up keeps its data, and its connection file that clients
	// read, in the user's data directory: the tests (and the processes
	// they start) get one of their own, never the user's.
	if os.Getenv("ARBITER_TEST_MAIN") != "1" {
		dir, err := os.MkdirTemp("", "arbiter-test-xdg-")
		if err != nil {
			panic(err)
		}
		os.Setenv("XDG_DATA_HOME", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
