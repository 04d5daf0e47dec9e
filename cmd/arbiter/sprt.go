package main

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/local/sprtcalc"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/sprt"
)

type sprtFlags struct {
	penta, wdl string
	sprt       string
	// The deprecated spellings of --sprt's keys, kept so that old scripts
	// run; they are turned into an --sprt value and parsed as one.
	elo0, elo1, alpha, beta, model string
	asJSON                         bool
	sequence                       string
	batchPairs                     int64
}

func newSPRTCommand() *cobra.Command {
	var f sprtFlags
	cmd := &cobra.Command{
		Use:   "sprt (--penta LL,LD,WLDD,DW,WW | --wdl W,D,L | --sequence FILE --batch-pairs K) --sprt elo0=E0,elo1=E1",
		Short: "SPRT calculator on given results (Fishtest's statistics)",
		Long: `Computes Fishtest's SPRT on given results: the generalized LLR and its bounds,
the state (accepted, rejected or continue), the sequential Elo estimate with
its 95% interval and LOS, the fixed-games Elo and nElo.

--sprt takes the bounds as match, up and submit sprt do: elo0 and elo1 in
the units of model= (required), alpha= and beta= (default 0.05), model=
normalized, logistic or bayeselo (default normalized).

Counts are for the new engine: --penta gives game pairs by pair score
[LL, LD+DL, LW+DD+WL, DW+WD, WW]; --wdl gives wins, draws, losses. With both,
they must describe the same games; the pentanomial drives the SPRT, W/D/L
feed the BayesElo draw Elo and the W/D/L nElo.

--sequence FILE replays a test: each line is a JSON object with the
cumulative "pentanomial" (and optionally "wins", "draws", "losses") after
each batch of --batch-pairs pairs. One JSON line is printed per step with
llr, o0, o1 (the dynamic overshoot corrections) and state; the replay stops
at the first decision, as the test would. FILE "-" reads standard input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSPRT(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.penta, "penta", "", "pentanomial pair counts LL,LD,WLDD,DW,WW")
	fl.StringVar(&f.wdl, "wdl", "", "game counts W,D,L")
	fl.StringVar(&f.sprt, "sprt", "", "the test's bounds (required): "+matchplan.SPRTUsage)
	for _, old := range []struct {
		name string
		to   *string
	}{{"elo0", &f.elo0}, {"elo1", &f.elo1}, {"alpha", &f.alpha}, {"beta", &f.beta}, {"model", &f.model}} {
		fl.StringVar(old.to, old.name, "", "deprecated: use --sprt "+old.name+"=")
		fl.MarkDeprecated(old.name, "use --sprt "+old.name+"=...")
	}
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of a report")
	fl.StringVar(&f.sequence, "sequence", "", "replay cumulative results, one JSON object a line (\"-\" for stdin)")
	fl.Int64Var(&f.batchPairs, "batch-pairs", 0, "pairs (games for W/D/L-only lines) between two lines of --sequence")
	return cmd
}

func runSPRT(cmd *cobra.Command, f sprtFlags) error {
	fl := cmd.Flags()
	spec, err := sprtSpec(fl, f)
	if err != nil {
		return err
	}
	p, err := matchplan.ParseSPRT(spec)
	if err != nil {
		return usageError("sprt: %v", err)
	}
	params := *p

	if f.sequence != "" {
		if f.penta != "" || f.wdl != "" {
			return usageError("sprt: --sequence replays a file; it cannot be combined with --penta or --wdl")
		}
		if !fl.Changed("batch-pairs") {
			return usageError("sprt: --sequence needs --batch-pairs (the pairs between two lines)")
		}
		if f.batchPairs < 1 {
			return usageError("sprt: --batch-pairs %d: must be at least 1", f.batchPairs)
		}
		return runSPRTSequence(cmd, params, f)
	}
	if fl.Changed("batch-pairs") {
		return usageError("sprt: --batch-pairs only applies with --sequence")
	}
	if f.penta == "" && f.wdl == "" {
		return usageError("sprt: give the results with --penta LL,LD,WLDD,DW,WW or --wdl W,D,L (or replay a test with --sequence)")
	}

	var results sprt.Results
	if f.penta != "" {
		counts, err := sprtcalc.ParseCounts("--penta", f.penta, []string{"LL", "LD", "WLDD", "DW", "WW"})
		if err != nil {
			return err
		}
		p := sprt.Pentanomial(counts)
		results.Pentanomial = &p
	}
	if f.wdl != "" {
		counts, err := sprtcalc.ParseCounts("--wdl", f.wdl, []string{"W", "D", "L"})
		if err != nil {
			return err
		}
		results.Wins, results.Draws, results.Losses = counts[0], counts[1], counts[2]
	}
	if err := results.Validate(); err != nil {
		return usageError("sprt: --penta and --wdl disagree: %v", err)
	}
	analysis, err := sprt.Analyze(params, results)
	if err != nil {
		return usageError("sprt: %v", err)
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		return sprtcalc.WriteJSON(out, analysis)
	}
	_, err = io.WriteString(out, sprtcalc.Text(analysis))
	return err
}

// sprtSpec is the --sprt value, or the one the deprecated --elo0, --elo1,
// --alpha, --beta and --model flags spell, so that both are checked by
// the same parser with the same messages.
func sprtSpec(fl *pflag.FlagSet, f sprtFlags) (string, error) {
	var old []string
	for _, kv := range []struct{ name, v string }{{"elo0", f.elo0}, {"elo1", f.elo1}, {"alpha", f.alpha}, {"beta", f.beta}, {"model", f.model}} {
		if fl.Changed(kv.name) {
			if strings.Contains(kv.v, ",") {
				return "", usageError("sprt: --%s %s: want one value", kv.name, apierr.Q(kv.v))
			}
			old = append(old, kv.name+"="+kv.v)
		}
	}
	switch {
	case f.sprt != "" && len(old) > 0:
		return "", usageError("sprt: --%s: give the bounds once, in --sprt", strings.SplitN(old[0], "=", 2)[0])
	case f.sprt == "" && len(old) == 0:
		return "", usageError("sprt: %v", clicmd.Required("sprt", matchplan.SPRTUsage))
	case f.sprt == "":
		return strings.Join(old, ","), nil
	}
	return f.sprt, nil
}

// runSPRTSequence replays --sequence (a file, or "-" for standard input).
func runSPRTSequence(cmd *cobra.Command, params sprt.Params, f sprtFlags) error {
	in := cmd.InOrStdin()
	if f.sequence != "-" {
		file, err := os.Open(f.sequence)
		if err != nil {
			return usageError("sprt: --sequence: %v", err)
		}
		defer file.Close()
		in = file
	}
	return sprtcalc.Replay(in, f.sequence, cmd.OutOrStdout(), cmd.ErrOrStderr(), params, f.batchPairs)
}
