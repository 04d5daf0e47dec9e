// Package filehash hashes files: the SHA-256 that names a content-addressed
// file (a worker's downloaded artifact, a pulled dataset, a net loop's
// step output).
package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
)

// SHA256 is the hex SHA-256 of the file at path, read as a stream.
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
