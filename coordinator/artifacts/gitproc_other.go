//go:build !unix

package artifacts

import "os/exec"

// stopWholeGit: elsewhere git's own process is killed when its context
// ends (its children exit when their pipes close).
func stopWholeGit(*exec.Cmd) {}
