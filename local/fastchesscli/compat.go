package fastchesscli

import (
	"fmt"
	"io"
)

// The fastchess this mode follows, declared once: the report's lines
// (report.go), engine naming, the PGN file and the PV warnings follow fastchess 1.8.2, and the
// comparison tests run that build (FASTCHESS). -version prints it.
//
// Fishtest's worker keeps a fastchess binary only when its -version line
// carries the commit the worker pins (worker.py, FASTCHESS_SHA, checked by
// verify_fastchess); any other is deleted and fastchess is built from
// source. Fishtest's current worker pins a commit from before 1.8.2 whose
// report code (matchmaking/output, matchmaking/elo, stats and scoreboard)
// is the same as 1.8.2's: the lines its parser reads are the same for
// both. So the fastchess-format line names that pinned commit, as the
// worker demands, and the next line says what the binary is: Arbiter,
// compatible with both (an interoperability string, like a browser's user
// agent, not a claim to be fastchess). When Fishtest pins another commit,
// change fishtestPinned after checking that its report code is the same
// (TestFishtestWorkerKeepsArbiter reads the pin from Fishtest's sources).
var (
	// matchedFastchess is the release whose behaviour this mode matches.
	matchedFastchess = fastchessBuild{Version: "1.8.2", Commit: "f618e34540f94f4719ad3817950618dabe441318", Date: "20260726"}
	// fishtestPinned is the fastchess Fishtest's worker pins
	// (v1.8.1-alpha-19, an ancestor of 1.8.2).
	fishtestPinned = fastchessBuild{Version: "1.8.1", Commit: "58072f231dc1ae33204254f867afd0a195f21a2e", Date: "20260606"}
)

// fastchessBuild is a fastchess version and the commit it was built from.
type fastchessBuild struct {
	Version string // "1.8.2"
	Commit  string // 40 hex digits
	Date    string // the commit's date, YYYYMMDD, as fastchess's makefile stamps it
}

// short is the commit as fastchess's makefile stamps it (git rev-parse
// --short: 8 digits in fastchess's repository).
func (b fastchessBuild) short() string { return b.Commit[:8] }

// versionLine is what a fastchess built from b at its commit prints for
// -version: "fastchess alpha 1.8.1 20260606-58072f23".
func (b fastchessBuild) versionLine() string {
	return fmt.Sprintf("fastchess alpha %s %s-%s", b.Version, b.Date, b.short())
}

// printVersion answers -version: the fastchess-format line a farm's
// version check reads, then what this binary is.
func printVersion(w io.Writer, arbiterVersion string) {
	fmt.Fprintln(w, fishtestPinned.versionLine())
	fmt.Fprintf(w, "arbiter %s: Arbiter's fastchess command line, not fastchess; compatible with fastchess %s (%s) and with %s, the fastchess commit Fishtest's worker pins\n",
		arbiterVersion, matchedFastchess.Version, matchedFastchess.short(), fishtestPinned.short())
}
