package main

import (
	"os"
	"testing"

	"github.com/arbiter-chess/arbiter/internal/sandbox"
)

// TestMain lets this test binary serve as the sandbox wrapper, as main
// does: `arbiter up` run from a test probes and runs uploaded engines
// through os.Executable(), which is this binary.
func TestMain(m *testing.M) {
	sandbox.RunIfWrapper()
	os.Exit(m.Run())
}
