package syzygy

import (
	"fmt"
	"os"
)

// readTableFile reads path into memory: the way files are loaded where
// memory mapping is not available (see mapfile_other.go), kept buildable
// everywhere so that its results are tested against the mapped ones.
func readTableFile(path string, size int64) (data []byte, release func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) != size {
		return nil, nil, fmt.Errorf("%s changed size while being read", path)
	}
	return data, func() error { return nil }, nil
}
