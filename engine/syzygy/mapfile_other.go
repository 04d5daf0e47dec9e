//go:build !unix

package syzygy

import (
	"fmt"
	"os"
)

// mapFile reads path into memory where memory mapping is not available
// through golang.org/x/sys/unix (Windows, wasm): slower to open, the same
// to probe.
func mapFile(path string, size int64) (data []byte, release func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) != size {
		return nil, nil, fmt.Errorf("%s changed size while being read", path)
	}
	return data, func() error { return nil }, nil
}
