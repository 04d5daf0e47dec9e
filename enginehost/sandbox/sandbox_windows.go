package sandbox

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }

// Supported reports whether engines can be sandboxed on this platform:
// not on Windows (see the package comment).
func Supported() bool { return false }

const (
	watchesMemory = false
	filtersForks  = false
)

func supervise([]string) int {
	return wrapperError("no sandbox on Windows")
}

func execStage([]string) int {
	return wrapperError("no sandbox on Windows")
}

func probeChild() int { return 1 }

func landlockABI() int { return 0 }

func rlimitBoundsTasks() bool { return false }
