package epd

import (
	"os"
	"testing"
)

const sharedEPD = "../../../shared/data/epd/"

func readShared(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(sharedEPD + name)
	if err != nil {
		t.Skipf("shared suite %s: %v", name, err)
	}
	return b
}

func TestSharedSuitesDump(t *testing.T) {
	for _, n := range []string{"wac.epd", "bratko-kopec.epd", "kaufman.epd", "silent-but-deadly.epd"} {
		s, err := ParseSuite(n, readShared(t, n))
		if err != nil {
			t.Logf("%s: %v", n, err)
			continue
		}
		t.Logf("%s: %d positions; first %+v", n, len(s.Positions), s.Positions[0].Best)
	}
}
