package search

import "github.com/arbiter-chess/arbiter/engine/eval"

// The search constants, in the same Param table style as the evaluation
// weights, so each is a UCI spin option that an SPRT can vary. Defaults are
// the usual magnitudes of published alpha-beta engines of this strength
// (CPW-engine, Ethereal/Weiss-era values scaled to our evaluation), checked
// in short matches but not tuned; see docs/engine.md.
const (
	AspWindow        = iota // first aspiration half-window, centipawns
	AspMinDepth             // iterations below this use a full window
	RFPDepth                // reverse futility pruning up to this depth
	RFPMargin               // … with this margin per ply
	NMPMinDepth             // null-move pruning from this depth
	NMPBase                 // base reduction R
	NMPDepthDiv             // R += depth / NMPDepthDiv
	NMPEvalDiv              // R += min(3, (eval-beta) / NMPEvalDiv)
	FutDepth                // futility pruning of quiet moves up to this depth
	FutBase                 // margin = FutBase + FutMargin × depth
	FutMargin               //
	LMPDepth                // late-move pruning of quiet moves up to this depth
	LMPBase                 // quiet moves tried before pruning: LMPBase + depth²
	LMRBase                 // late-move reduction = LMRBase/100 + ln(d)·ln(m)·100/LMRDiv
	LMRDiv                  //
	SEEQuietMargin          // prune quiets losing more than this × depth (SEE)
	SEECaptureMargin        // prune captures losing more than this × depth (SEE)
	SEEPruneDepth           // SEE pruning in the main search up to this depth
	DeltaMargin             // quiescence delta pruning margin
	IIRDepth                // internal iterative reduction without a TT move from this depth
	TimeHorizon             // moves assumed left in sudden death
	TimeSoftPct             // soft limit: this % of the base allocation
	TimeHardMul             // hard limit: this × the soft limit …
	TimeMaxPct              // … but never more than this % of the remaining clock
	TimeIncReserve          // keep this many increments on the clock (0 since SPSA tune 2) …
	TimeReserve             // … or this many milliseconds, whichever is more, but at most half the clock
	NumParams
)

// Params is the search's parameter table, indexed by the constants above.
var Params = [NumParams]eval.Param{
	AspWindow:        {Name: "AspWindow", Default: 20, Min: 5, Max: 200, Step: 3},
	AspMinDepth:      {Name: "AspMinDepth", Default: 5, Min: 1, Max: 20, Step: 1},
	RFPDepth:         {Name: "RFPDepth", Default: 7, Min: 0, Max: 15, Step: 1},
	RFPMargin:        {Name: "RFPMargin", Default: 75, Min: 20, Max: 300, Step: 5},
	NMPMinDepth:      {Name: "NMPMinDepth", Default: 3, Min: 2, Max: 10, Step: 1},
	NMPBase:          {Name: "NMPBase", Default: 3, Min: 1, Max: 6, Step: 1},
	NMPDepthDiv:      {Name: "NMPDepthDiv", Default: 4, Min: 2, Max: 12, Step: 1},
	NMPEvalDiv:       {Name: "NMPEvalDiv", Default: 200, Min: 50, Max: 1000, Step: 20},
	FutDepth:         {Name: "FutDepth", Default: 6, Min: 0, Max: 12, Step: 1},
	FutBase:          {Name: "FutBase", Default: 80, Min: 0, Max: 400, Step: 10},
	FutMargin:        {Name: "FutMargin", Default: 90, Min: 20, Max: 400, Step: 10},
	LMPDepth:         {Name: "LMPDepth", Default: 7, Min: 0, Max: 15, Step: 1},
	LMPBase:          {Name: "LMPBase", Default: 3, Min: 1, Max: 20, Step: 1},
	LMRBase:          {Name: "LMRBase", Default: 75, Min: 0, Max: 300, Step: 10},
	LMRDiv:           {Name: "LMRDiv", Default: 225, Min: 100, Max: 600, Step: 10},
	SEEQuietMargin:   {Name: "SEEQuietMargin", Default: 60, Min: 0, Max: 300, Step: 5},
	SEECaptureMargin: {Name: "SEECaptureMargin", Default: 100, Min: 0, Max: 300, Step: 5},
	SEEPruneDepth:    {Name: "SEEPruneDepth", Default: 8, Min: 0, Max: 15, Step: 1},
	DeltaMargin:      {Name: "DeltaMargin", Default: 200, Min: 0, Max: 1000, Step: 20},
	IIRDepth:         {Name: "IIRDepth", Default: 4, Min: 2, Max: 20, Step: 1},
	TimeHorizon:      {Name: "TimeHorizon", Default: 33, Min: 10, Max: 80, Step: 2},
	TimeSoftPct:      {Name: "TimeSoftPct", Default: 93, Min: 20, Max: 200, Step: 5},
	TimeHardMul:      {Name: "TimeHardMul", Default: 4, Min: 1, Max: 10, Step: 1},
	TimeMaxPct:       {Name: "TimeMaxPct", Default: 30, Min: 5, Max: 80, Step: 5},
	TimeIncReserve:   {Name: "TimeIncReserve", Default: 0, Min: 0, Max: 200, Step: 5},
	TimeReserve:      {Name: "TimeReserve", Default: 500, Min: 0, Max: 10000, Step: 50},
}

// Values is one setting of every search parameter, indexed like Params.
type Values [NumParams]int

// DefaultValues returns every search parameter at its default.
func DefaultValues() Values {
	var v Values
	for i := range Params {
		v[i] = Params[i].Default
	}
	return v
}
