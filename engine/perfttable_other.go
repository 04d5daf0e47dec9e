//go:build !linux

package engine

import "unsafe"

// adviseHugePages is Linux-only (see perfttable_linux.go).
func adviseHugePages([]perftBucket) {}

func adviseHugePagesOf(unsafe.Pointer, uintptr) {}
