// Package jobreport is what the arbiter command says about jobs on a
// coordinator: it follows a job to its end through coordinator restarts
// (with a progress bar for perft, a line per batch for tests), prints
// perft results (text, or JSON like `arbiter perft --json`), job lists and
// details, the fastchess-style report of a test, and downloads a test's
// games. Errors carry the command's exit status (client/cliexit).
package jobreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// StateName is a job state as people read it: "running", "done", ...
func StateName(s arbiterv1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATE_"))
}

// WatchPolicy follows a job until it ends however long the coordinator is
// away (it keeps the job; Ctrl-C stops waiting), and says so on out once
// per outage.
func WatchPolicy(c *clusterclient.Client, out io.Writer) clusterclient.Policy {
	return clusterclient.Persistent.WithOnRetry(func(attempt int, err error, _ time.Duration) {
		if attempt == 0 {
			fmt.Fprintf(out, "\n%s; reconnecting...\n", c.Away(err))
		}
	})
}

func parseFloat(s string) float64 {
	var v float64
	fmt.Sscanf(s, "%g", &v)
	return v
}

func humanCount(v float64) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.2fT", v/1e12)
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
