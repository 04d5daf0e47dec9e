package netloop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/filehash"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/train"
)

// engineSpec is --engine named name, playing net n (the embedded net
// when n has no step): here by the engine's EvalFile option, on the farm
// (r.Farm) by net=FILE, which the job uploads.
func (r *Runner) engineSpec(name string, n Net) (enginespec.Spec, error) {
	mode := enginespec.LocalMatch
	if r.Farm != nil {
		mode = enginespec.Match
	}
	es, err := enginespec.Parse(r.Settings.Engine, mode)
	if err != nil {
		return es, fmt.Errorf("--engine: %v", err)
	}
	es.Name = name
	if p := r.Dir.NetPath(n); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return es, err
		}
		if r.Farm != nil {
			es.NetFile = abs
			return es, nil
		}
		es.SetOption("EvalFile", abs)
		es.SetOption("UseNNUE", "true")
	}
	return es, nil
}

// datagen generates the generation's data with the best net: the same
// batches arbiter datagen plays (datagen.Local), in bullet's text format.
func (r *Runner) datagen(ctx context.Context, s *Step, res *Result) error {
	nodes, err := Nodes(r.Settings.Each)
	if err != nil {
		return err
	}
	set := dg.DefaultSettings()
	set.Nodes = nodes
	if err := set.Validate(); err != nil {
		return err
	}
	es, err := r.engineSpec(fmt.Sprintf("gen%d", s.Gen-1), s.Best)
	if err != nil {
		return err
	}
	each, err := enginespec.Parse(r.Settings.Each, enginespec.Each)
	if err != nil {
		return fmt.Errorf("--each: %v", err)
	}
	cfg, err := es.MatchEngine(enginespec.Spec{Options: each.Options})
	if err != nil {
		return err
	}
	first, err := match.NewPlayer(cfg, builtin.New)
	if err != nil {
		return fmt.Errorf("engine %s: %v", cfg.Name, err)
	}
	l := dg.Local{Settings: set, Seed: s.Seed, Positions: r.Settings.Positions, Concurrency: r.Concurrency, BatchGames: 8,
		NewPlayer: func() (match.Player, error) { return match.NewPlayer(cfg, builtin.New) }, Progress: r.Out}
	st, err := l.WriteFile(ctx, first, r.Dir.DataPath(s.Key), dg.FormatText, dg.PGNInfo{Engine: cfg.Name})
	if err != nil {
		return err
	}
	if res.DataSHA, err = filehash.SHA256(r.Dir.DataPath(s.Key)); err != nil {
		return err
	}
	res.Positions, res.Games = st.Positions, st.Games
	if fi, err := os.Stat(r.Dir.DataPath(s.Key)); err == nil {
		res.Bytes = fi.Size()
	}
	fmt.Fprintf(r.Out, "net loop: generation %d: data %d positions from %d games, sha256 %s\n", s.Gen, st.Positions, st.Games, res.DataSHA[:12])
	return nil
}

// train trains a net on the step's data with the loop's --train, one
// checkpoint an epoch in the step's directory: a killed step resumes
// from its last epoch (and ends with the same net, train's promise).
func (r *Runner) train(ctx context.Context, s *Step, res *Result) error {
	var paths []string
	for _, k := range s.Data {
		paths = append(paths, r.Dir.DataPath(k))
	}
	ds, err := train.ReadFiles(paths)
	if err != nil {
		return err
	}
	cfg := r.Settings.Train.Config(r.Threads)
	dir := r.Dir.StepDir(s.Key)
	ckDir := filepath.Join(dir, "checkpoints")
	if err := os.MkdirAll(ckDir, 0o755); err != nil {
		return err
	}
	st, epochs := r.lastCheckpoint(ckDir, dir)
	if st == nil || st.Digest != ds.Digest || st.Seed != cfg.Seed {
		st, epochs = train.NewState(&cfg, ds), nil
	} else {
		fmt.Fprintf(r.Out, "net loop: generation %d: training resumes after epoch %d\n", s.Gen, st.Epoch)
	}
	t, err := train.NewTrainer(cfg, ds, r.Out)
	if err != nil {
		return err
	}
	for st.Epoch < cfg.Epochs {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := t.Epoch(st)
		epochs = append(epochs, Epoch{Epoch: e.Epoch, TrainLoss: e.TrainLoss, ValLoss: e.ValLoss})
		fmt.Fprintf(r.Out, "net loop: generation %d: epoch %d/%d train loss %.6f val loss %.6f\n", s.Gen, e.Epoch, cfg.Epochs, e.TrainLoss, e.ValLoss)
		if err := train.SaveCheckpoint(filepath.Join(ckDir, fmt.Sprintf("epoch-%d.ckpt", e.Epoch)), st); err != nil {
			return err
		}
		b, _ := json.Marshal(epochs)
		if err := writeAtomic(filepath.Join(dir, "epochs.json"), b); err != nil {
			return err
		}
	}
	net := filepath.Join(dir, "net.nnue")
	if err := train.SaveNet(net, &st.Params); err != nil {
		return err
	}
	if res.NetSHA, err = filehash.SHA256(net); err != nil {
		return err
	}
	res.Epochs = epochs
	fmt.Fprintf(r.Out, "net loop: generation %d: net %s\n", s.Gen, res.NetSHA[:12])
	return nil
}

// lastCheckpoint loads the latest epoch-N.ckpt in ckDir with the epochs'
// losses so far, or nil.
func (r *Runner) lastCheckpoint(ckDir, dir string) (*train.State, []Epoch) {
	names, _ := filepath.Glob(filepath.Join(ckDir, "epoch-*.ckpt"))
	best := 0
	for _, n := range names {
		k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "epoch-"), ".ckpt"))
		if err == nil && k > best {
			best = k
		}
	}
	if best == 0 {
		return nil, nil
	}
	st, err := train.LoadCheckpoint(filepath.Join(ckDir, fmt.Sprintf("epoch-%d.ckpt", best)))
	if err != nil {
		return nil, nil
	}
	var epochs []Epoch
	b, _ := os.ReadFile(filepath.Join(dir, "epochs.json"))
	if json.Unmarshal(b, &epochs) != nil || len(epochs) < st.Epoch {
		return nil, nil
	}
	sort.Slice(epochs, func(i, j int) bool { return epochs[i].Epoch < epochs[j].Epoch })
	return st, epochs[:st.Epoch]
}

// sprtEngines are an SPRT step's engines: the new net's, the best's.
func (r *Runner) sprtEngines(s *Step) (nw, best enginespec.Spec, err error) {
	if nw, err = r.engineSpec(fmt.Sprintf("gen%d", s.Gen), s.New); err != nil {
		return nw, best, err
	}
	best, err = r.engineSpec(fmt.Sprintf("gen%d-best", s.Gen-1), s.Best)
	return nw, best, err
}

// sprt plays the new net against the best, as arbiter match --sprt does
// (spec/matchplan), capped at --games-cap. A killed SPRT resumes from its
// match state file.
func (r *Runner) sprt(ctx context.Context, s *Step, res *Result) error {
	nw, best, err := r.sprtEngines(s)
	if err != nil {
		return err
	}
	dir := r.Dir.StepDir(s.Key)
	f := matchplan.Flags{Engines: []string{nw.String(), best.String()}, Each: r.Settings.Each, Openings: r.openings,
		Games: r.Settings.GamesCap, SPRT: r.Settings.SPRT, Concurrency: r.Concurrency, Recover: true, HangTimeout: 30000,
		PGNOut: filepath.Join(dir, "games.pgn")}
	plan, err := matchplan.Parse(f)
	if err != nil {
		return err
	}
	stateFile := filepath.Join(dir, "match.state.json")
	o := matchplan.RunOptions{Out: &bytes.Buffer{}, JSON: true, StateFile: stateFile, Builtin: builtin.New}
	if old, err := match.LoadState(stateFile); err == nil && old.Status != match.StatusComplete && old.Status != match.StatusStopped {
		o.Resume = old
		fmt.Fprintf(r.Out, "net loop: generation %d: the SPRT resumes after %d games\n", s.Gen, old.GamesDone)
	} else {
		os.Remove(stateFile)
		os.Remove(f.PGNOut)
	}
	out := o.Out.(*bytes.Buffer)
	st, err := plan.Run(ctx, o)
	if err != nil {
		return err
	}
	if st.Status != match.StatusComplete && st.Status != match.StatusStopped {
		return fmt.Errorf("match %s after %d games: %s", st.Status, st.Games, st.Failure)
	}
	var mr matchplan.Result
	if err := json.Unmarshal(out.Bytes(), &mr); err != nil || len(mr.Pairings) != 1 || mr.SPRT == nil {
		return fmt.Errorf("the match's result does not read: %v", err)
	}
	pr := mr.Pairings[0]
	res.SPRT = newSPRTResult(pr.Wins, pr.Draws, pr.Losses, pr.Pentanomial, mr.SPRT.LLR, mr.SPRT.LowerBound, mr.SPRT.UpperBound, mr.SPRT.State)
	fmt.Fprintf(r.Out, "net loop: generation %d: SPRT %s\n", s.Gen, sprtLine(res))
	return nil
}

// newSPRTResult is an SPRT's outcome from the new net's side, with its
// Elo and the verdict of its state.
func newSPRTResult(w, d, l int64, penta [5]int64, llr, lower, upper float64, state sprt.State) *SPRTResult {
	v := &SPRTResult{Wins: w, Draws: d, Losses: l, Pentanomial: penta, LLR: llr, Lower: lower, Upper: upper, Verdict: VerdictNone}
	p := sprt.Pentanomial(penta)
	e := sprt.FixedGamesElo(sprt.Results{Wins: w, Draws: d, Losses: l, Pentanomial: &p})
	v.Elo, v.EloError = e.Elo, e.HalfWidth95
	switch state {
	case sprt.Accepted:
		v.Verdict = VerdictH1
	case sprt.Rejected:
		v.Verdict = VerdictH0
	}
	return v
}

// sprtLine is an SPRT step's result in one line.
func sprtLine(res *Result) string {
	r := res.SPRT
	if r == nil {
		return "no result"
	}
	v := map[string]string{VerdictH1: "H1 accepted", VerdictH0: "H0 accepted", VerdictNone: "no decision at the games cap"}[r.Verdict]
	return fmt.Sprintf("W %d L %d D %d, ptnml %v, Elo %.1f ± %.1f, LLR %.2f (%.2f, %.2f): %s",
		r.Wins, r.Losses, r.Draws, r.Pentanomial, r.Elo, r.EloError, r.LLR, r.Lower, r.Upper, v)
}
