//go:build !unix

package syzygy

// mapFile reads the file into memory where golang.org/x/sys/unix offers no
// mapping (Windows, wasm): slower to open, the same to probe.
func mapFile(path string, size int64) (data []byte, release func() error, err error) {
	return readTableFile(path, size)
}
