package netloop

import (
	"os"
	"testing"

	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
)

// TestMain lets this test binary be the sandbox's wrapper: the farm tests
// start workers that allow uploaded engines, whose sandbox probe runs the
// worker's own executable, this binary, as the wrapper.
func TestMain(m *testing.M) {
	sandbox.RunIfWrapper()
	os.Exit(m.Run())
}
