package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A pids cgroup bounds a run's processes and threads where RLIMIT_NPROC
// cannot: the kernel never applies RLIMIT_NPROC to the host's root user
// (a root worker), and without a user namespace of its own the count is
// all of the worker user's processes on the host. The supervisor makes
// one cgroup per run under its own (cgroup v1's pids hierarchy, or v2
// where the pids controller can be enabled) and removes it when the run
// ends; the exec stage joins it before the engine runs (the supervisor
// moving the child after its start would race with a bomb, and the
// supervisor inside would count against the bound). Where no cgroup can be made (a non-root worker without a
// delegated cgroup, a container whose cgroup file system is read-only)
// the run has no such bound, and the probe says so.

type pidsCgroup struct {
	dir string // the run's cgroup
}

// newPidsCgroup makes the run's cgroup, allowing max tasks in it.
func newPidsCgroup(max int) (*pidsCgroup, error) {
	parent, err := ownPidsCgroup()
	if err != nil {
		return nil, err
	}
	sweepCgroups(parent)
	// cgroup v2: the controller must be on for the children (an error
	// here shows below as a missing pids.max).
	os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids"), 0)
	c := &pidsCgroup{dir: filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid()))}
	if err := os.Mkdir(c.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// joinCgroup moves the calling process (the exec stage, all its threads)
// into the cgroup dir: "0" is the writer itself, whatever PID namespace
// it is in.
func joinCgroup(dir string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0"), 0)
}

// remove deletes the run's cgroup once its last task is gone (their exit
// is seen by the cgroup a moment after the wait).
func (c *pidsCgroup) remove() {
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sweepCgroups removes the runs' cgroups whose supervisor is gone (killed
// before it could remove its own); one still in use cannot be removed.
func sweepCgroups(parent string) {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		pid, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if _, err := os.Stat("/proc/" + pid); errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(parent, e.Name()))
		}
	}
}

// ownPidsCgroup is the directory of this process's cgroup in the
// hierarchy that has the pids controller: cgroup v1's, else v2's.
func ownPidsCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var v1, v2 string
	found1, found2 := false, false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2, found2 = f[2], true
		case hasWord(f[1], ",", "pids"):
			v1, found1 = f[2], true
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return "", err
	}
	if m, ok := mounts["pids"]; ok && found1 {
		return m.dirOf(v1)
	}
	if m, ok := mounts[""]; ok && found2 {
		return m.dirOf(v2)
	}
	return "", errors.New("no pids cgroup hierarchy mounted")
}

// cgroupMount is where a hierarchy is mounted and which of its paths the
// mount shows at its top.
type cgroupMount struct{ point, root string }

func (m cgroupMount) dirOf(path string) (string, error) {
	rel, err := filepath.Rel(m.root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("cgroup %s is not under the mount of %s", path, m.root)
	}
	return filepath.Join(m.point, rel), nil
}

// cgroupMounts reads /proc/self/mountinfo: the v1 hierarchy with the
// pids controller (key "pids") and the v2 one (key "").
func cgroupMounts() (map[string]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		m := cgroupMount{point: a[4], root: a[3]}
		switch {
		case b[0] == "cgroup2":
			out[""] = m
		case b[0] == "cgroup" && hasWord(b[2], ",", "pids"):
			out["pids"] = m
		}
	}
	return out, sc.Err()
}

func hasWord(list, sep, word string) bool {
	for _, w := range strings.Split(list, sep) {
		if w == word {
			return true
		}
	}
	return false
}
