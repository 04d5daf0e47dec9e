package jobreport

import arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"

// How far a perft job's total is verified (the JSON key "verification"):
// no unit computed by a second identity, some, or every one.
const (
	VerificationNone    = "none"
	VerificationSampled = "sampled"
	VerificationFull    = "full"
)

// PerftVerification is how far j's counts so far are verified: "none"
// when no unit was computed by a second identity (a total no one checked),
// "sampled" when some were, "full" when every unit was; "" for a job
// without units (depth 0, or every line ends above the split).
func PerftVerification(j *arbiterv1.Job) string {
	p := j.GetProgress()
	switch {
	case p.GetUnitsTotal() == 0:
		return ""
	case p.GetUnitsVerified() == 0:
		return VerificationNone
	case p.GetUnitsVerified() < p.GetUnitsTotal():
		return VerificationSampled
	}
	return VerificationFull
}
