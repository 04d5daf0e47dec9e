package matchplan

import "github.com/arbiter-chess/arbiter/sprt"

// SPRTUsage is the grammar of --sprt, the same in every command that
// takes SPRT bounds (match, up, submit sprt, sprt).
const SPRTUsage = "elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]"

// ParseSPRT reads an --sprt value: elo0 and elo1 are required, alpha and
// beta default to 0.05 and the model to normalized (Fishtest's defaults).
// Every command parses --sprt here, so each mistake is worded one way.
func ParseSPRT(s string) (*sprt.Params, error) { return parseSPRT(s) }
