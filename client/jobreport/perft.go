package jobreport

import (
	"encoding/json"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A perft job's typed JSON pieces (JobJSON.Perft, kept one release, and
// its detail object): the perft kind (kinds/perft) prints its finished
// jobs with them too.

// NewPerftJob is a perft job's typed `perft` object of --json (JobJSON.Perft,
// kept one release): the perft kind's report (kinds/perft) fills it in.
func NewPerftJob(j *arbiterv1.Job) *PerftJob { return newPerftJob(j) }

// PerftStatsJSON is a statistics job's totals, named as `arbiter perft
// --json` names them (exact integers).
type PerftStatsJSON struct {
	Nodes           json.Number `json:"nodes"`
	Captures        json.Number `json:"captures"`
	EnPassant       json.Number `json:"ep"`
	Castles         json.Number `json:"castles"`
	Promotions      json.Number `json:"promotions"`
	Checks          json.Number `json:"checks"`
	DiscoveryChecks json.Number `json:"discovery_checks"`
	DoubleChecks    json.Number `json:"double_checks"`
	Checkmates      json.Number `json:"checkmates"`
}

// NewPerftStats returns a done statistics job's totals, or nil: the
// typed perft object's stats, and `submit perft --wait --json`'s
// (kinds/perft).
func NewPerftStats(j *arbiterv1.Job) *PerftStatsJSON {
	s := j.GetPerftStats()
	if s == nil {
		return nil
	}
	return &PerftStatsJSON{Nodes: json.Number(j.GetNodes()), Captures: json.Number(s.GetCaptures()),
		EnPassant: json.Number(s.GetEnPassant()), Castles: json.Number(s.GetCastles()), Promotions: json.Number(s.GetPromotions()),
		Checks: json.Number(s.GetChecks()), DiscoveryChecks: json.Number(s.GetDiscoveryChecks()),
		DoubleChecks: json.Number(s.GetDoubleChecks()), Checkmates: json.Number(s.GetCheckmates())}
}
