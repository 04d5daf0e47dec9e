//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// credential is the user the server's processes run as.
type credential = syscall.Credential

// runAs is the credential the server's processes run under: nobody when
// we are root, ourselves otherwise.
func runAs() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root and no user nobody to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// childAttr runs a child as cred; the server (server true) in its own
// process group, so that a signal to the test's group does not reach it
// before its orderly shutdown.
func childAttr(cred *credential, server bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Credential: cred, Setpgid: server}
	if server {
		dieWithParent(a)
	}
	return a
}
