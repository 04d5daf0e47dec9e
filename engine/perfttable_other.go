//go:build !linux

package engine

// adviseHugePages is Linux-only (see perfttable_linux.go).
func adviseHugePages([]perftBucket) {}
