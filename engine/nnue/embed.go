package nnue

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync"
)

// nets holds the nets compiled into the binary: nets/default.nnue, if
// present, is the engine's default net (see nets/README.md).
//
//go:embed nets
var nets embed.FS

// DefaultNetPath is where the default net sits in the source tree.
const DefaultNetPath = "nets/default.nnue"

// Default returns the net embedded in the binary, or nil when the binary
// carries none. An embedded file that does not load is an error (a build
// with a broken net must not play with the hand-written evaluation
// unnoticed).
func Default() (*Net, error) {
	data, err := nets.ReadFile(DefaultNetPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	n, err := Load(data)
	if err != nil {
		return nil, fmt.Errorf("embedded net %s: %w", DefaultNetPath, err)
	}
	return n, nil
}

var defaultNet struct {
	once sync.Once
	net  *Net
	err  error
}

// DefaultNet is Default, loaded once per process: every engine shares the
// embedded net (a Net is read-only once loaded).
func DefaultNet() (*Net, error) {
	defaultNet.once.Do(func() { defaultNet.net, defaultNet.err = Default() })
	return defaultNet.net, defaultNet.err
}

// DefaultBytes returns the embedded default net's file, or nil when the
// binary carries none (its SHA-256 names it, e.g. in the net loop).
func DefaultBytes() []byte {
	data, err := nets.ReadFile(DefaultNetPath)
	if err != nil {
		return nil
	}
	return data
}
