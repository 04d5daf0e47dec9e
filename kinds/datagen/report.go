package datagen

import (
	_ "embed"
	"fmt"
	"io"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// DatagenJSON is a dataset's part of a job's JSON (docs/json.md).
type DatagenJSON struct {
	Engine             jobreport.EngineJSON `json:"engine"`
	Nodes              uint64               `json:"nodes"`
	PositionsWanted    uint64               `json:"positions_wanted"`
	Positions          uint64               `json:"positions"`
	Games              uint64               `json:"games"`
	Shards             uint64               `json:"shards"`
	Duplicates         uint64               `json:"duplicates"`
	KeepDuplicates     bool                 `json:"keep_duplicates"`
	WhiteWins          uint64               `json:"white_wins"`
	Draws              uint64               `json:"draws"`
	BlackWins          uint64               `json:"black_wins"`
	AverageGamePlies   float64              `json:"average_game_plies"`
	DuplicateRate      float64              `json:"duplicate_rate"`
	PositionsPerSecond float64              `json:"positions_per_second"`
	Seed               uint64               `json:"seed"`
	RandomPlies        [2]uint32            `json:"random_plies"`
	Workers            []DatagenWork        `json:"workers,omitempty"`
}

// DatagenWork is one worker's share of a dataset.
type DatagenWork struct {
	WorkerID           string  `json:"worker_id"`
	Name               string  `json:"name,omitempty"`
	Positions          uint64  `json:"positions"`
	Games              uint64  `json:"games"`
	Batches            uint64  `json:"batches"`
	Refused            uint64  `json:"refused"`
	PositionsPerSecond float64 `json:"positions_per_second"`
}

// DatagenOf unpacks a dataset's detail (nil when j is not one).
func DatagenOf(j *arbiterv1.Job) *arbiterv1.DatagenJob {
	d := &arbiterv1.DatagenJob{}
	if j.GetDetail() == nil || j.GetDetail().UnmarshalTo(d) != nil {
		return nil
	}
	return d
}

func newDatagenJob(j *arbiterv1.Job) *DatagenJSON {
	d := DatagenOf(j)
	if d == nil {
		return nil
	}
	s, p := d.GetSpec(), d.GetProgress()
	o := &DatagenJSON{Engine: jobreport.NewEngineJSON(s.GetEngine()), Nodes: s.GetNodes(), PositionsWanted: s.GetPositions(),
		Positions: p.GetPositions(), Games: p.GetGames(), Shards: p.GetShards(), Duplicates: p.GetDuplicates(),
		KeepDuplicates: s.GetKeepDuplicates(), WhiteWins: p.GetWhiteWins(), Draws: p.GetDraws(), BlackWins: p.GetBlackWins(),
		PositionsPerSecond: p.GetPositionsPerSecond(), Seed: s.GetSeed(), RandomPlies: [2]uint32{s.GetRandomPliesMin(), s.GetRandomPliesMax()}}
	if p.GetGames() > 0 {
		o.AverageGamePlies = float64(p.GetPlies()) / float64(p.GetGames())
	}
	// The rate is of the positions seen: dropped duplicates were seen
	// besides the positions, kept ones are among them.
	seen := p.GetPositions()
	if !s.GetKeepDuplicates() {
		seen += p.GetDuplicates()
	}
	if seen > 0 {
		o.DuplicateRate = float64(p.GetDuplicates()) / float64(seen)
	}
	for _, w := range p.GetWorkers() {
		dw := DatagenWork{WorkerID: w.GetWorkerId(), Name: w.GetName(), Positions: w.GetPositions(), Games: w.GetGames(),
			Batches: w.GetBatches(), Refused: w.GetRefused()}
		if w.GetSeconds() > 0 {
			dw.PositionsPerSecond = float64(w.GetPositions()) / w.GetSeconds()
		}
		o.Workers = append(o.Workers, dw)
	}
	return o
}

func datagenRow(j *arbiterv1.Job) string {
	d := DatagenOf(j)
	s, p := d.GetSpec(), d.GetProgress()
	return fmt.Sprintf("%s\t%s\t%s\t%d\t%d/%d\t%d\t%.0f", j.GetJobId(), jobreport.ListState(j), s.GetEngine().GetName(), s.GetNodes(),
		p.GetPositions(), s.GetPositions(), p.GetGames(), p.GetPositionsPerSecond())
}

// PrintDatagen prints one dataset (arbiter status JOB).
func PrintDatagen(out io.Writer, j *arbiterv1.Job) {
	o := newDatagenJob(j)
	if o == nil {
		fmt.Fprintf(out, "Dataset:    %s\nState:      %s\n", j.GetJobId(), jobreport.StateName(j.GetState()))
		return
	}
	fmt.Fprintf(out, "Dataset:    %s\nState:      %s\n", j.GetJobId(), jobreport.StateName(j.GetState()))
	fmt.Fprintf(out, "Engine:     %s at %d nodes, %d-%d random plies, seed %d\n", jobreport.EngineDesc(DatagenOf(j).GetSpec().GetEngine()), o.Nodes,
		o.RandomPlies[0], o.RandomPlies[1], o.Seed)
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	if b := j.GetProgress().GetBlocked(); b != "" {
		fmt.Fprintf(out, "Blocked:    %s\n", b)
	}
	dups := "dropped"
	if o.KeepDuplicates {
		dups = "kept"
	}
	fmt.Fprintf(out, "Positions:  %d of %d (%.0f per second)\n", o.Positions, o.PositionsWanted, o.PositionsPerSecond)
	fmt.Fprintf(out, "Games:      %d (White %d, draws %d, Black %d; %.1f plies on average) in %d shards\n", o.Games, o.WhiteWins, o.Draws,
		o.BlackWins, o.AverageGamePlies, o.Shards)
	fmt.Fprintf(out, "Duplicates: %d (%.2f%%, %s)\n", o.Duplicates, 100*o.DuplicateRate, dups)
	for _, w := range o.Workers {
		fmt.Fprintf(out, "Worker:     %s %s: %d positions, %d games, %d batches, %.0f positions/s, %d refused\n", w.WorkerID, w.Name,
			w.Positions, w.Games, w.Batches, w.PositionsPerSecond, w.Refused)
	}
}

//go:embed detail.schema.json
var detailSchema []byte

func init() {
	jobkind.Register(jobkind.Kind{Name: Kind, Family: Family, Path: "/datagen/", Noun: "dataset"})
	jobreport.RegisterReport(Family, jobreport.Report{Order: 50, Header: "DATASET\tSTATE\tENGINE\tNODES\tPOSITIONS\tGAMES\tPOS/S", Row: datagenRow,
		Detail: PrintDatagen, Wait: waitJob, DetailSchema: detailSchema, DetailJSON: func(j *arbiterv1.Job) any {
			if d := newDatagenJob(j); d != nil {
				return d
			}
			return nil
		}})
}
