package gamepair

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestFitsTablebase: a test adjudicated by tables of N pieces fits only a
// worker that advertises tables of N pieces, and says why not otherwise;
// a test without tablebases fits any; CheckTablebase refuses pieces out of
// 3..7 and unknown results.
func TestFitsTablebase(t *testing.T) {
	four := &arbiterv1.Adjudication{Tablebase: &arbiterv1.TablebaseAdjudication{Pieces: 4}}
	five := &arbiterv1.Adjudication{Tablebase: &arbiterv1.TablebaseAdjudication{Pieces: 5}}
	none := core.Caps{Tags: []string{capability.GamePair}}
	upTo4 := core.Caps{Tags: []string{capability.GamePair, capability.Syzygy(3), capability.Syzygy(4)}}
	for _, c := range []struct {
		name string
		adj  *arbiterv1.Adjudication
		caps core.Caps
		fits bool
	}{
		{"no tablebases asked, worker without tables", &arbiterv1.Adjudication{}, none, true},
		{"4 pieces, worker without tables", four, none, false},
		{"4 pieces, worker with 4", four, upTo4, true},
		{"5 pieces, worker with 4", five, upTo4, false},
	} {
		why := FitsTablebase(c.adj, c.caps)
		if (why == "") != c.fits {
			t.Errorf("%s: %q", c.name, why)
		}
		if !c.fits && !strings.Contains(why, "--syzygy") {
			t.Errorf("%s: the reason %q does not say what the worker needs", c.name, why)
		}
	}
	for _, bad := range []*arbiterv1.TablebaseAdjudication{{Pieces: 2}, {Pieces: 8}, {Pieces: 4, Results: 9}} {
		if err := CheckTablebase(&arbiterv1.Adjudication{Tablebase: bad}); err == nil || !strings.Contains(err.Error(), "adjudication.tablebase") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if err := CheckTablebase(four); err != nil {
		t.Errorf("4 pieces: %v", err)
	}
}
