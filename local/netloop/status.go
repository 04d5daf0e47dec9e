package netloop

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StepStatus is a step in `--status`: done (with its result), stopped
// (run but not done: the next run retries it) or pending.
type StepStatus struct {
	State    string  `json:"state"` // done | stopped | pending
	Key      string  `json:"key,omitempty"`
	Attempts int     `json:"attempts,omitempty"`
	Result   *Result `json:"result,omitempty"`
	Job      string  `json:"job,omitempty"` // the step's farm job (--coordinator)
}

// GenerationStatus is one generation in `--status`.
type GenerationStatus struct {
	Gen     int        `json:"gen"`
	From    Net        `json:"from"` // the best net it started from
	Datagen StepStatus `json:"datagen"`
	Train   StepStatus `json:"train"`
	SPRT    StepStatus `json:"sprt"`
	Shipped bool       `json:"shipped"`
}

// Status is `arbiter net loop --status --json`.
type Status struct {
	Dir         string             `json:"dir"`
	Settings    Settings           `json:"settings"`
	Generations []GenerationStatus `json:"generations"`
	Best        Net                `json:"best"`
	Done        bool               `json:"done"`
}

// StatusOf reads the loop's state from its plan.
func StatusOf(d Dir, s Settings, gens int, p Plan) Status {
	st := Status{Dir: string(d), Settings: s, Best: p.Best, Done: p.Next == nil}
	one := func(step *Step) StepStatus {
		if step == nil {
			return StepStatus{State: "pending"}
		}
		ss := StepStatus{State: "pending", Key: step.Key, Result: step.Result}
		ss.Attempts, _ = d.Started(step.Key)
		if b, err := os.ReadFile(filepath.Join(d.StepDir(step.Key), "job")); err == nil {
			ss.Job = strings.TrimSpace(string(b))
		}
		switch {
		case step.Result != nil:
			ss.State = "done"
		case ss.Attempts > 0:
			ss.State = "stopped"
		}
		return ss
	}
	for g := 1; g <= gens; g++ {
		gs := GenerationStatus{Gen: g, Datagen: StepStatus{State: "pending"}, Train: StepStatus{State: "pending"}, SPRT: StepStatus{State: "pending"}}
		if g <= len(p.Generations) {
			pg := p.Generations[g-1]
			gs.From, gs.Datagen, gs.Train, gs.SPRT, gs.Shipped = pg.Best, one(pg.Datagen), one(pg.Train), one(pg.SPRT), pg.Shipped()
		}
		st.Generations = append(st.Generations, gs)
	}
	return st
}

// WriteJSON prints the status as JSON.
func (st Status) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}

// WriteText prints the status, a few lines a generation.
func (st Status) WriteText(w io.Writer) {
	s := st.Settings
	fmt.Fprintf(w, "loop %s: %s, %d positions a generation at %s, train %d epochs on %s data, SPRT %s capped at %d games\n",
		st.Dir, s.Engine, s.Positions, s.Each, s.Train.Epochs, s.TrainOn, s.SPRT, s.GamesCap)
	for _, g := range st.Generations {
		from := "the embedded net " + short(g.From.SHA)
		if g.From.Gen > 0 {
			from = fmt.Sprintf("generation %d's net %s", g.From.Gen, short(g.From.SHA))
		}
		if g.From.SHA == "" {
			from = "the best net then"
		}
		fmt.Fprintf(w, "generation %d (from %s)\n", g.Gen, from)
		fmt.Fprintf(w, "  data     %s\n", stepLine(g.Datagen, func(r *Result) string {
			return fmt.Sprintf("%d positions, %d games, sha256 %s", r.Positions, r.Games, short(r.DataSHA))
		}))
		fmt.Fprintf(w, "  train    %s\n", stepLine(g.Train, func(r *Result) string {
			last := r.Epochs[len(r.Epochs)-1]
			return fmt.Sprintf("%d epochs, train loss %.6f, val loss %.6f, net sha256 %s", len(r.Epochs), last.TrainLoss, last.ValLoss, short(r.NetSHA))
		}))
		fmt.Fprintf(w, "  sprt     %s\n", stepLine(g.SPRT, sprtLine))
		shipped := "no"
		if g.Shipped {
			shipped = "yes: the best net from here on"
		}
		if g.SPRT.State == "done" {
			fmt.Fprintf(w, "  shipped  %s\n", shipped)
		}
	}
	best := "the embedded net " + short(st.Best.SHA)
	if st.Best.Gen > 0 {
		best = fmt.Sprintf("generation %d's net %s (%s)", st.Best.Gen, short(st.Best.SHA), "best.nnue")
	}
	state := "not done: run the same command to go on"
	if st.Done {
		state = "done"
	}
	fmt.Fprintf(w, "best net: %s; loop %s\n", best, state)
}

func stepLine(s StepStatus, done func(*Result) string) string {
	switch s.State {
	case "done":
		took := s.Result.Finished.Sub(s.Result.Started).Round(time.Millisecond)
		tries := ""
		if s.Attempts > 1 {
			tries = fmt.Sprintf(", %d attempts", s.Attempts)
		}
		return fmt.Sprintf("%s (%v%s)", done(s.Result), took, tries)
	case "stopped":
		return fmt.Sprintf("stopped after %d attempt(s): the next run retries it", s.Attempts)
	}
	return "pending"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return strings.TrimSpace(sha)
}
