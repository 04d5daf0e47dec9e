package clicmd

import (
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

// CheckRange refuses v outside lo..hi for --flag, worded the same way
// for every integer flag.
func CheckRange(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return cliexit.Usage("--%s %d: must be between %d and %d", flag, v, lo, hi)
	}
	return nil
}

// OpenSyzygy opens the Syzygy tables in dir for flag (nil, nil for "").
func OpenSyzygy(flag, dir string) (*syzygy.Tablebase, error) {
	if dir == "" {
		return nil, nil
	}
	tables, err := syzygy.Open(dir)
	if err != nil {
		return nil, cliexit.Usage("%s %s: %v", flag, dir, err)
	}
	return tables, nil
}
