//go:build !unix

package web

import "time"

// cpuTime is not measured here: the benchmark reports 0 CPU-ms.
func cpuTime() time.Duration { return 0 }
