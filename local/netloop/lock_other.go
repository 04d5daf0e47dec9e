//go:build !linux && !darwin

package netloop

import (
	"fmt"
	"os"
)

// Lock is a no-op here (no flock): two loops in one directory are not
// prevented on this platform; run one at a time.
func (d Dir) Lock() (unlock func(), err error) {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return nil, fmt.Errorf("--dir %s: %v", d, err)
	}
	return func() {}, nil
}
