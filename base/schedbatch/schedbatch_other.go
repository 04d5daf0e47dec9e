//go:build !linux

package schedbatch

import "errors"

// Apply does nothing here: SCHED_BATCH is Linux's.
func Apply() error { return errors.New("schedbatch: Linux only") }
