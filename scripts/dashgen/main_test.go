package dashgen

import (
	"os"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop() // the election panels' coordinator's server, if started
	os.Exit(code)
}
