package netloop

// The core: from the loop's settings and the results of the steps done so
// far, which steps make each generation and which one is next. No I/O.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// The kinds of step.
const (
	KindDatagen = "datagen"
	KindTrain   = "train"
	KindSPRT    = "sprt"
	KindShip    = "ship"
)

// Verdicts of an SPRT step.
const (
	VerdictH1   = "H1"   // the new net is better: shipped
	VerdictH0   = "H0"   // it is not
	VerdictNone = "none" // the games cap came first
)

// Epoch is one training epoch's losses.
type Epoch struct {
	Epoch     int     `json:"epoch"`
	TrainLoss float64 `json:"train_loss"`
	ValLoss   float64 `json:"val_loss"`
}

// Result is what a done step wrote in its done marker: the fields of its
// kind.
type Result struct {
	Kind     string    `json:"kind"`
	Key      string    `json:"key"`
	Gen      int       `json:"gen"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Attempts int       `json:"attempts"` // runs of the step, this one included
	// datagen
	Positions int    `json:"positions,omitempty"`
	Games     int    `json:"games,omitempty"`
	DataSHA   string `json:"data_sha256,omitempty"`
	Bytes     int64  `json:"bytes,omitempty"` // the data file's size
	// train
	Epochs []Epoch `json:"epochs,omitempty"`
	NetSHA string  `json:"net_sha256,omitempty"`
	// sprt
	SPRT *SPRTResult `json:"sprt,omitempty"`
	// ship
	Shipped string `json:"shipped_sha256,omitempty"`
}

// SPRTResult is an SPRT step's outcome, from the new net's side.
type SPRTResult struct {
	Wins        int64    `json:"wins"`
	Draws       int64    `json:"draws"`
	Losses      int64    `json:"losses"`
	Pentanomial [5]int64 `json:"pentanomial"`
	Elo         float64  `json:"elo"`
	EloError    float64  `json:"elo95"` // the 95% interval's half width
	LLR         float64  `json:"llr"`
	Lower       float64  `json:"lower_bound"`
	Upper       float64  `json:"upper_bound"`
	Verdict     string   `json:"verdict"` // H1, H0 or none
}

// Net is a net the loop plays with: the embedded one (Step "") or the one
// a train step wrote.
type Net struct {
	SHA  string `json:"sha256"`
	Step string `json:"step,omitempty"` // the train step's key
	Gen  int    `json:"gen"`            // the generation that trained it (0: embedded)
}

// Step is one step of a generation, and what it needs.
type Step struct {
	Gen  int
	Kind string
	Key  string
	// Best is the net the generation starts from (datagen plays it, the
	// SPRT plays the new net against it).
	Best Net
	// Data are the datagen steps' keys a train step reads, in order.
	Data []string
	// New is the net a train step made (sprt, ship).
	New Net
	// Seed is a datagen step's dataset seed.
	Seed uint64
	// Result is set when the step is done.
	Result *Result
}

// Generation is one generation's steps (a step not known yet, because
// the one before it is not done, is nil).
type Generation struct {
	N       int
	Best    Net // the net it started from
	Datagen *Step
	Train   *Step
	SPRT    *Step
	Ship    *Step // nil unless the SPRT accepted H1
}

// Shipped reports whether the generation's net became the best.
func (g Generation) Shipped() bool { return g.Ship != nil && g.Ship.Result != nil }

// Plan is the loop's state: its generations as far as they are known,
// the best net now, and the next step to run (nil: the loop is done).
type Plan struct {
	Generations []Generation
	Best        Net
	Next        *Step
}

// Done looks up a done step's result by key.
type Done func(key string) *Result

// key is the SHA-256 of a step's kind, settings and inputs.
func key(kind string, parts ...any) string {
	b, _ := json.Marshal(append([]any{kind}, parts...))
	h := sha256.Sum256(b)
	return kind + "-" + hex.EncodeToString(h[:])
}

// MakePlan walks generations 1..gens from the embedded net (its SHA-256
// embedded) and the steps done, and stops at the first step not done.
// openingsSHA is the SPRT's openings file's SHA-256.
func MakePlan(s Settings, gens int, embedded, openingsSHA string, done Done) Plan {
	p := Plan{Best: Net{SHA: embedded}}
	var data []string // done datagen keys, in order
	var dataSHA []string
	for g := 1; g <= gens; g++ {
		gen := Generation{N: g, Best: p.Best}
		p.Generations = append(p.Generations, gen)
		cur := &p.Generations[len(p.Generations)-1]
		seed := s.Seed + uint64(g) - 1
		cur.Datagen = &Step{Gen: g, Kind: KindDatagen, Best: p.Best, Seed: seed,
			Key: key(KindDatagen, s.Engine, s.Each, s.Positions, seed, p.Best.SHA)}
		if cur.Datagen.Result = done(cur.Datagen.Key); cur.Datagen.Result == nil {
			p.Next = cur.Datagen
			return p
		}
		data = append(data, cur.Datagen.Key)
		dataSHA = append(dataSHA, cur.Datagen.Result.DataSHA)
		in, inSHA := data[len(data)-1:], dataSHA[len(dataSHA)-1:]
		if s.TrainOn == "all" {
			in, inSHA = data, dataSHA
		}
		cur.Train = &Step{Gen: g, Kind: KindTrain, Best: p.Best, Data: append([]string(nil), in...),
			Key: key(KindTrain, s.Train, inSHA)}
		if cur.Train.Result = done(cur.Train.Key); cur.Train.Result == nil {
			p.Next = cur.Train
			return p
		}
		nn := Net{SHA: cur.Train.Result.NetSHA, Step: cur.Train.Key, Gen: g}
		cur.SPRT = &Step{Gen: g, Kind: KindSPRT, Best: p.Best, New: nn,
			Key: key(KindSPRT, s.Engine, s.Each, s.SPRT, s.GamesCap, openingsSHA, nn.SHA, p.Best.SHA)}
		if cur.SPRT.Result = done(cur.SPRT.Key); cur.SPRT.Result == nil {
			p.Next = cur.SPRT
			return p
		}
		if v := cur.SPRT.Result.SPRT; v == nil || v.Verdict != VerdictH1 {
			continue
		}
		cur.Ship = &Step{Gen: g, Kind: KindShip, Best: p.Best, New: nn, Key: key(KindShip, nn.SHA)}
		if cur.Ship.Result = done(cur.Ship.Key); cur.Ship.Result == nil {
			p.Next = cur.Ship
			return p
		}
		p.Best = nn
	}
	return p
}
