// Package schedbatch puts this process under Linux's SCHED_BATCH policy: a
// woken thread then waits for the running one's turn to end instead of
// taking its CPU at once.
//
// Why: the match runner is woken by every line its engines write after a
// quiet period, usually while the engine that wrote it is still searching
// on that CPU. Under SCHED_OTHER the runner preempts it, reads one line,
// and sleeps again; under SCHED_BATCH it runs when the engine blocks, which
// is right after `bestmove`, and reads the search's last lines with one
// wake-up. At nodes=5000 that was 7.4–8.7 ms less runner CPU per game in
// four pairs, with the same wall time (docs/match.md "Figures"). A thread's
// weight is unchanged: it gets as much CPU as before, only later.
//
// Each thread also asks for the longest time slice the kernel grants
// (Linux 6.12 and later; older kernels ignore it). A batch thread woken
// while another runs still takes the CPU once the running thread has used
// up its slice, and with the default slice (1.4 ms on two CPUs) a search of
// a few milliseconds was cut at a timer tick for the runner's wake-up at
// the end of its quiet period: the runner read half a search and slept
// again. With a 100 ms slice the engine keeps its CPU until it blocks,
// which is after `bestmove`: 1.0–3.2 ms less runner CPU per game in six
// alternating runs at nodes=5000, and the wake-ups that read nothing final
// fell from 856 to 46 in ten traced games (docs/match.md "Long slices").
// The slice sets no share of the CPU: weights decide that, and they are
// unchanged. Other programs' SCHED_OTHER threads may still preempt on
// waking (the kernel lets a shorter slice do so, its PREEMPT_SHORT).
//
// Only for games without a clock: there the time the runner sees a move
// is the time it charges, and seeing it later would cost the engine.
//
// Invariants:
//   - Every thread of the process is switched, and threads and processes
//     started afterwards inherit the policy from the thread that starts
//     them (clone(2)): the engines a match starts run under it too, which
//     at fixed nodes or depth changes nothing in their games.
//   - Switching to SCHED_BATCH, and choosing a slice, needs no privilege.
package schedbatch

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Slice is the time slice Apply asks for: the kernel's maximum.
const Slice = 100 * time.Millisecond

// Apply switches every thread of this process to SCHED_BATCH with a slice
// of Slice, keeping its nice value.
func Apply() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("schedbatch: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if err == unix.ESRCH {
			continue // the thread has exited
		}
		if err != nil {
			return fmt.Errorf("schedbatch: thread %d: %w", tid, err)
		}
		attr.Policy = unix.SCHED_BATCH
		attr.Priority = 0
		attr.Runtime = uint64(Slice.Nanoseconds()) // a fair policy's slice since Linux 6.12
		if err := unix.SchedSetAttr(tid, attr, 0); err != nil && err != unix.ESRCH {
			return fmt.Errorf("schedbatch: thread %d: %w", tid, err)
		}
	}
	return nil
}
