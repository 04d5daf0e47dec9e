package sprt

// Grouped takes: several tests of one idea (a change tried with different
// constants, say) whose combined false-positive rate is controlled. The
// family's α is split evenly over a number of takes declared with the
// first (Bonferroni): each take runs its SPRT at α/takes, so the chance
// that any take of a change worth elo0 or less passes is at most α,
// whatever the takes' dependence or order, and each take's anytime
// interval is at level 1 − α/takes, so all of them cover together at
// 1 − α. β is per take (each take keeps its power).
//
// Why Bonferroni and not alpha-spending or a closed testing procedure:
// the takes run in parallel on a farm, start and stop in any order and
// may be abandoned, so a method that spends α in a set order or needs the
// takes' joint outcome would have to wait or guess; the even split needs
// only the declared number, costs each take about ln(takes) on its upper
// LLR bound, and stays valid when fewer takes are run.
//
// Invariants: a take's design is a function of the family's design and
// the declared number only; the number is fixed for the group.

import "fmt"

// MaxTakes bounds a group's declared number of takes.
const MaxTakes = 100

// TakeParams is the design one take of a group of takes runs: the
// family's, with α/takes.
func TakeParams(family Params, takes int) (Params, error) {
	if err := family.Validate(); err != nil {
		return Params{}, err
	}
	if takes < 1 || takes > MaxTakes {
		return Params{}, fmt.Errorf("takes: %d is not in [1, %d]", takes, MaxTakes)
	}
	p := family
	p.Alpha = family.Alpha / float64(takes)
	return p, nil
}

// TakeLevel is the anytime interval's level of one take of takes, for a
// family coverage of level: 1 − (1 − level)/takes.
func TakeLevel(level float64, takes int) float64 {
	if takes < 1 {
		takes = 1
	}
	return 1 - (1-level)/float64(takes)
}
