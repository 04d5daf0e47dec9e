package schedbatch

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// After Apply every thread of the process, and a process it starts, runs
// under SCHED_BATCH, with a slice of Slice where the kernel keeps one
// (Linux 6.12 and later report it; older ones report 0).
func TestApplyCoversThreadsAndChildren(t *testing.T) {
	if err := Apply(); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			t.Skipf("this sandbox refuses scheduling policies: %v", err)
		}
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // exited meanwhile
		}
		if attr.Policy != unix.SCHED_BATCH {
			t.Errorf("thread %d: policy %d after Apply, want SCHED_BATCH (%d)", tid, attr.Policy, unix.SCHED_BATCH)
		}
		checkSlice(t, "thread "+task.Name(), attr)
	}
	child := exec.Command("sleep", "5")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	attr, err := unix.SchedGetAttr(child.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Policy != unix.SCHED_BATCH {
		t.Errorf("a process started after Apply: policy %d, want SCHED_BATCH (%d)", attr.Policy, unix.SCHED_BATCH)
	}
	checkSlice(t, "a process started after Apply", attr)
}

func checkSlice(t *testing.T, who string, attr *unix.SchedAttr) {
	t.Helper()
	if attr.Runtime != 0 && attr.Runtime != uint64(Slice.Nanoseconds()) {
		t.Errorf("%s: slice %v, want %v", who, time.Duration(attr.Runtime), Slice)
	}
}
