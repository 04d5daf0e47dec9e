//go:build unix

package syzygy

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps path read-only. Tables are read at random places and can be
// large, so mapping lets the page cache hold what is used and nothing else.
// The caller has checked the size; release unmaps.
func mapFile(path string, size int64) (data []byte, release func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes do not fit in memory", path, size)
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	// Probes jump around the file: read-ahead would only evict useful pages.
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	return data, func() error { return unix.Munmap(data) }, nil
}
