package epd

// `arbiter submit epd`: a suite searched on the farm. The suite is parsed
// and checked here (a bad line is refused with its number before anything
// is sent) and travels as an EpdSpec with its moves in UCI notation; the
// coordinator checks it again. With --wait the command prints what
// `arbiter epd` prints for the same run: the lines, the table, or with
// --json the same object.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Session connects a client command to the coordinator its flags name: a
// context that Ctrl-C cancels, the client, and done, which closes both.
type Session func() (context.Context, *clusterclient.Client, func(), error)

// ClientFlags adds the binary's coordinator and credential flags to a
// command and returns the Session they make (register.go gives it
// clicmd.ClientFlags').
type ClientFlags func(fs *pflag.FlagSet) Session

type submitFlags struct {
	engines    []string
	suite      string
	each       string
	batch      int
	priority   int
	throughput int
	name       string
	wait       bool
	json       bool
}

// NewSubmitCommand is `arbiter submit epd`.
func NewSubmitCommand(clientFlags ClientFlags) *cobra.Command {
	var f submitFlags
	var session Session
	cmd := &cobra.Command{
		Use:   "epd",
		Short: "Submit an EPD test suite (WAC, Bratko-Kopec, ...): every position searched by each engine on the farm's workers",
		Long: `Search every position of an EPD suite with each engine under one limit, on the
cluster: the positions are leased to workers in batches and the coordinator counts
each batch once. A position is solved when the engine's move is one of its bm moves
and none of its am moves. A suite with a bad line is refused with the line's number
before anything is sent. See docs/epd.md.`,
		Example: `  arbiter submit epd --engine builtin --engine cmd=/usr/games/stockfish --suite wac.epd --each movetime=1000 --wait
  arbiter submit epd --engine name=dev,upload=./engine --suite wac.epd --each nodes=200000 --batch 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSubmit(cmd, f, session)
		},
	}
	fs := cmd.Flags()
	session = clientFlags(fs)
	fs.StringArrayVar(&f.engines, "engine", nil, "an engine (repeat to compare several): "+enginespec.Usage(enginespec.Match))
	fs.StringVar(&f.suite, "suite", "", "the EPD file")
	fs.StringVar(&f.each, "each", "", "the search of each position: movetime=MS, nodes=N or depth=D")
	fs.IntVar(&f.batch, "batch", 0, fmt.Sprintf("positions per leased batch (0: %d; at most %d)", DefaultBatchPositions, MaxBatchPositions))
	fs.IntVar(&f.priority, "priority", 0, "scheduling priority (higher first)")
	fs.IntVar(&f.throughput, "throughput", 1, "share of the workers among jobs of equal priority")
	fs.StringVar(&f.name, "name", "", "a label for the job (default: the suite's file name)")
	fs.BoolVar(&f.wait, "wait", false, "wait for the job to end and print its results as arbiter epd does")
	fs.BoolVar(&f.json, "json", false, "print JSON: the job (docs/json.md), or with --wait the results as arbiter epd --json does")
	return cmd
}

// submitSpec checks the flags and the suite into a spec and the engines'
// upload instructions.
func submitSpec(f submitFlags) (*arbiterv1.EpdSpec, []enginespec.Spec, error) {
	switch {
	case len(f.engines) == 0:
		return nil, nil, cliexit.Usage("--engine: give at least one engine (builtin, cmd=PATH, upload=PATH)")
	case len(f.engines) > MaxEngines:
		return nil, nil, cliexit.Usage("--engine: %d engines, at most %d", len(f.engines), MaxEngines)
	case f.suite == "":
		return nil, nil, cliexit.Usage("--suite: give the EPD file")
	case f.each == "":
		return nil, nil, cliexit.Usage("--each: give movetime=MS, nodes=N or depth=D")
	case f.batch < 0 || f.batch > MaxBatchPositions:
		return nil, nil, cliexit.Usage("--batch %d: want 0 (the default, %d) to %d", f.batch, DefaultBatchPositions, MaxBatchPositions)
	case f.throughput < 0:
		return nil, nil, cliexit.Usage("--throughput %d: is negative", f.throughput)
	}
	limit, err := ParseLimit(f.each)
	if err != nil {
		return nil, nil, cliexit.Usage("%v", err)
	}
	travel, engines, err := submitEngines(f.engines)
	if err != nil {
		return nil, nil, err
	}
	suite, err := readSuite(f.suite)
	if err != nil {
		return nil, nil, cliexit.Usage("%v", err)
	}
	spec := SpecOf(suite, engines, limit, f.batch)
	if f.name != "" {
		spec.Name = f.name
	}
	spec.Priority, spec.Throughput = int32(f.priority), uint32(f.throughput)
	if _, _, err := ValidateSpec(spec); err != nil {
		return nil, nil, cliexit.Usage("%v", err)
	}
	return spec, travel, nil
}

// submitEngines parses the --engine flags into wire engines (named
// uniquely, as arbiter epd names them) and how each travels.
func submitEngines(flags []string) ([]enginespec.Spec, []*arbiterv1.EngineSpec, error) {
	travel := make([]enginespec.Spec, 0, len(flags))
	cfgs := make([]match.EngineConfig, 0, len(flags))
	for _, s := range flags {
		es, err := parseFarmEngine(s)
		if err != nil {
			return nil, nil, cliexit.Usage("--engine: %v", err)
		}
		if len(es.Limits) > 0 {
			return nil, nil, cliexit.Usage("--engine %q: %s= is a limit; every engine searches under --each", s, es.Limits[0].Key)
		}
		if es.HasNet() {
			return nil, nil, cliexit.Usage("--engine %q: net= is for tests; an EPD job plays each engine's own net", s)
		}
		if es.MovegenGate != "" {
			return nil, nil, cliexit.Usage("--engine %q: perft-gate= is for matches and tests; check an engine's generator with arbiter verify", s)
		}
		e, err := es.MatchEngine(enginespec.Spec{})
		if err != nil {
			return nil, nil, cliexit.Usage("--engine: %v", err)
		}
		travel, cfgs = append(travel, es), append(cfgs, e)
	}
	engineNames(cfgs)
	out := make([]*arbiterv1.EngineSpec, len(cfgs))
	for i, e := range cfgs {
		out[i] = matchspec.EngineToProto(e)
		out[i].TimeControl = nil
		if es := travel[i]; es.Artifact != "" {
			out[i].Artifact = &arbiterv1.EngineArtifact{Sha256: es.Artifact, Build: es.Build, Exe: es.Exe, Bench: es.Bench}
		}
	}
	return travel, out, nil
}

// parseFarmEngine parses an --engine as a farm engine. A farm engine
// needs a name; one without takes the name arbiter epd gives it (builtin,
// or its program's file name), so that the same flags work locally and
// on the farm.
func parseFarmEngine(s string) (enginespec.Spec, error) {
	if local, err := enginespec.Parse(s, enginespec.LocalMatch); err == nil && local.Name == "" {
		name := "builtin"
		if local.Proto != enginespec.Builtin {
			name = filepath.Base(local.Cmd)
		}
		return enginespec.Parse("name="+name+","+s, enginespec.Match)
	}
	return enginespec.Parse(s, enginespec.Match)
}

func runSubmit(cmd *cobra.Command, f submitFlags, session Session) error {
	spec, travel, err := submitSpec(f)
	if err != nil {
		return err
	}
	ctx, c, done, err := session()
	if err != nil {
		return err
	}
	defer done()
	for i, e := range spec.Engines {
		if err := artifactclient.UploadEngine(ctx, c.Conn(), travel[i], e, cmd.ErrOrStderr()); err != nil {
			return cliexit.Call(c, "upload", err)
		}
	}
	j, err := clicmd.SubmitJob(ctx, c, Kind, spec)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if !f.wait {
		if f.json {
			return jobreport.WriteJob(out, j)
		}
		fmt.Fprintf(out, "EPD job %s: %s, %d positions, %d engine(s), %s\n", j.GetJobId(), spec.Name, len(spec.Positions), len(spec.Engines), f.each)
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "EPD job %s submitted; waiting\n", j.GetJobId())
	_, err = waitJob(ctx, c, j, jobreport.WaitOptions{Out: out, Progress: cmd.ErrOrStderr(), JSON: f.json})
	return err
}

// waitJob is the EPD family's jobreport.Report.Wait, and submit epd
// --wait's: the job followed to its end (a line of its batches every 2 s
// at most), then its report (as JSON with --json); a job that ends other
// than done is exit status 1.
func waitJob(ctx context.Context, c *clusterclient.Client, j *arbiterv1.Job, o jobreport.WaitOptions) (*arbiterv1.Job, error) {
	final, err := c.WatchJob(ctx, j.GetJobId(), clusterclient.Interactive, jobreport.AtMostEvery(2*time.Second, func(j *arbiterv1.Job) {
		fmt.Fprintf(o.Progress, "%s: %d/%d batches\n", j.GetJobId(), j.GetProgress().GetUnitsDone(), j.GetProgress().GetUnitsTotal())
	}))
	if err != nil {
		return nil, cliexit.Call(c, "watch", err)
	}
	if err := writeFarmReport(o.Out, final, o.JSON); err != nil {
		return nil, err
	}
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		return final, cliexit.Failure("EPD job %s ended %s: %s", final.GetJobId(), jobreport.StateName(final.GetState()), final.GetError())
	}
	return final, nil
}

// farmRun is a job snapshot read back as a local run: its suite, limit,
// engine names and merged results (position-major, as Run returns them).
type farmRun struct {
	cfg     RunConfig
	names   []string
	results []Result
}

// farmRunOf reads a full snapshot's detail; a snapshot without one (a
// coordinator that does not know the kind) is an error.
func farmRunOf(j *arbiterv1.Job) (*farmRun, error) {
	d := &arbiterv1.EpdJob{}
	if j.GetDetail() == nil || j.GetDetail().UnmarshalTo(d) != nil {
		return nil, fmt.Errorf("job %s: no EPD detail in the snapshot", j.GetJobId())
	}
	suite, limit, err := ValidateSpec(d.GetSpec())
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", j.GetJobId(), err)
	}
	m := NewMerger(d.GetSpec(), suite)
	for _, r := range d.GetResults() {
		if _, err := m.Add(r); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.GetJobId(), err)
		}
	}
	return &farmRun{cfg: RunConfig{Suite: suite, Limit: limit}, names: EngineNames(d.GetSpec()), results: m.Results()}, nil
}

// writeFarmReport prints a finished job as arbiter epd prints a run.
func writeFarmReport(out io.Writer, j *arbiterv1.Job, asJSON bool) error {
	run, err := farmRunOf(j)
	if err != nil {
		return err
	}
	rows := Table(run.names, run.results)
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(reportJSON(run.cfg, run.names, rows, run.results))
	}
	for _, r := range run.results {
		fmt.Fprintln(out, Line(run.cfg.Suite, run.names, r))
	}
	fmt.Fprintln(out)
	WriteTable(out, rows)
	return nil
}
