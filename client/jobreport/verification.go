package jobreport

import (
	"fmt"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

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

// VerificationLine says in words how far j's total is verified, for the
// text outputs; "" when there is nothing to say.
func VerificationLine(j *arbiterv1.Job) string {
	p := j.GetProgress()
	switch PerftVerification(j) {
	case VerificationNone:
		if c := j.GetCrossCheck(); c.GetUnitsChecked() > 0 {
			return fmt.Sprintf("no unit computed twice by our generator; %d of %d units cross-checked by %s on another identity (node counts only)",
				c.GetUnitsChecked(), p.GetUnitsTotal(), c.GetEngine())
		}
		return "none, the counts are UNVERIFIED: no unit was computed by a second identity (verify fraction 0, or one identity on the farm)"
	case VerificationSampled:
		return fmt.Sprintf("sampled, %d of %d units computed by a second identity and agreeing", p.GetUnitsVerified(), p.GetUnitsTotal())
	case VerificationFull:
		return "full, every unit computed by two identities and agreeing"
	}
	return ""
}
