package verifyproto

import (
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A verify session as the coordinator's pages show it. The kind's workload
// (kinds/verify) keeps the sessions and answers with these; the pages
// (coordinator/web), a floor below the kinds, read them through an
// interface of their own, so the type lives here, below both.

// JobPrefix starts a session's job id ("verify.SESSION") and its units'
// ids ("verify.SESSION.KEY").
const JobPrefix = "verify."

// MaxSessions bounds the sessions a coordinator keeps open at once.
const MaxSessions = 1000

// SessionView is a verify session as the web pages show it: what is live
// in memory, and what its client reported.
type SessionView struct {
	ID     string // the session id; its job id is JobPrefix+ID
	Owner  string
	Engine string
	// Live: the session is in memory (its client is asking).
	Live bool
	// Units asked, answered and leased now (live sessions).
	Units, Done, Leased int
	Started, LastUsed   time.Time
	// Reported: its client reported it; the counts below are its summary.
	Reported                              bool
	Depth                                 int
	Positions, OK, Bugs, Errors, Findings int
	Seconds                               float64
	ReportedAt                            time.Time
	StoredReports                         int
	Summary                               *arbiterv1.VerifySessionSummary
}
