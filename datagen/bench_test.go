//go:build unix

package datagen

import (
	"bytes"
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// timedPlayer adds up the time spent in the engine's Think: the engine's
// own search, as the workload sees it.
type timedPlayer struct {
	match.Player
	think, newGame *time.Duration
}

func (p timedPlayer) NewGame(ctx context.Context, chess960 bool) error {
	t0 := time.Now()
	err := p.Player.NewGame(ctx, chess960)
	*p.newGame += time.Since(t0)
	return err
}

func (p timedPlayer) Think(ctx context.Context, req *match.ThinkRequest) (match.Reply, error) {
	t0 := time.Now()
	r, err := p.Player.Think(ctx, req)
	*p.think += time.Since(t0)
	return r, err
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDatagenBatch is one worker's and the coordinator's work for a
// batch of 4 games of the embedded engine at nodes=5000 (as `make
// bench-datagen` runs it): play, encode the shard, decode and replay it,
// derive the records and write them as bullet text. Metrics:
// positions per CPU-second of the process; overhead-% = the share of the
// wall time spent outside the engine (Think and NewGame: the game loop,
// openings, shard, records); newgame-% = the share in NewGame (the
// embedded engine clears its hash table there, as UCI's ucinewgame does).
func BenchmarkDatagenBatch(b *testing.B) {
	s := DefaultSettings()
	s.Nodes = 5000
	var think, newGame time.Duration
	newPlayer := func() (match.Player, error) {
		p, err := builtin.New("dev", nil)
		return timedPlayer{p, &think, &newGame}, err
	}
	positions := 0
	cpu0, wall0 := cpuTime(), time.Now()
	var text []byte
	for i := 0; b.Loop(); i++ {
		games, err := PlayGames(context.Background(), newPlayer, s, BatchSeed(1, uint64(i)), 4)
		if err != nil {
			b.Fatal(err)
		}
		var shard bytes.Buffer
		if err := EncodeShard(&shard, games); err != nil {
			b.Fatal(err)
		}
		back, err := DecodeShard(&shard, DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range back {
			for _, r := range Records(g, s.Filters) {
				text = AppendText(text[:0], r)
				positions++
			}
		}
	}
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	b.ReportMetric(float64(positions)/cpu.Seconds(), "pos/cpu-s")
	b.ReportMetric(100*(wall-think-newGame).Seconds()/wall.Seconds(), "overhead-%")
	b.ReportMetric(100*newGame.Seconds()/wall.Seconds(), "newgame-%")
	b.ReportMetric(float64(positions)/float64(b.N), "pos/op")
}

// BenchmarkDecodeShard: the coordinator's check of a worker's shard
// (decompress, replay every move, the rules at every ply), per ply.
func BenchmarkDecodeShard(b *testing.B) {
	games, err := batch()
	if err != nil {
		b.Fatal(err)
	}
	var shard bytes.Buffer
	EncodeShard(&shard, games)
	plies := 0
	for _, g := range games {
		plies += len(g.Moves)
	}
	data := shard.Bytes()
	for b.Loop() {
		if _, err := DecodeShard(bytes.NewReader(data), DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*plies), "ns/ply")
}
