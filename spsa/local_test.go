package spsa

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// A local tune of two real parameters of the embedded engine: every batch
// is played once by engines carrying θ ± c_k·Δ, each result is applied
// once, and the returned order replays to the tune's θ.
func TestLocalTuneBuiltin(t *testing.T) {
	decls, err := BuiltinOptions()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := FromEngine(decls, []string{"RFPMargin", "FutMargin"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(ps, 8, 2, 11)
	tu, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	moves := []string{"e2e4", "d2d4", "c2c4", "g1f3"}
	var mu sync.Mutex
	made := map[string][]match.Option{} // engine name → options, per player made
	players := 0
	var seen []Update
	l := &Local{
		Engine:      match.EngineConfig{Name: "dev", Proto: "builtin", Options: []match.Option{{Name: "Hash", Value: "1"}, {Name: "rfpmargin", Value: "999"}}},
		Limits:      match.Limits{Nodes: 400},
		Openings:    func(i int) match.Opening { return match.Opening{ID: i, Moves: []string{moves[i%len(moves)]}} },
		Concurrency: 2,
		Builtin:     builtin.New,
		NewPlayer: func(e match.EngineConfig) (match.Player, error) {
			mu.Lock()
			made[e.Name] = e.Options
			players++
			mu.Unlock()
			return match.NewPlayer(e, builtin.New)
		},
		OnUpdate: func(u Update, t *Tune) { seen = append(seen, u) },
	}
	order, err := l.Run(context.Background(), tu, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != cfg.Batches() || tu.Updates() != cfg.Batches() || len(seen) != len(order) {
		t.Fatalf("%d updates returned, %d applied, %d reported; want %d", len(order), tu.Updates(), len(seen), cfg.Batches())
	}
	got := map[int]bool{}
	for _, u := range order {
		if got[u.Batch] || u.Wins+u.Losses > 4 {
			t.Fatalf("update %+v: repeated or impossible", u)
		}
		got[u.Batch] = true
	}
	if players != 2*cfg.Batches() {
		t.Errorf("%d players made for %d batches", players, cfg.Batches())
	}
	for _, name := range []string{"dev+", "dev-"} {
		opts := made[name]
		if len(opts) != 3 || opts[0] != (match.Option{Name: "Hash", Value: "1"}) {
			t.Fatalf("%s: options %v", name, opts)
		}
		for i, o := range opts[1:] {
			v, err := strconv.Atoi(o.Value)
			if o.Name != ps[i].Name || err != nil || float64(v) < ps[i].Min || float64(v) > ps[i].Max {
				t.Errorf("%s: option %v", name, o)
			}
		}
	}
	re, err := Replay(cfg, order)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(re.Theta(), tu.Theta()) {
		t.Errorf("replay %v, tune %v", re.Theta(), tu.Theta())
	}

	// Resuming skips the batches already applied: nothing is left.
	skip := map[int]bool{}
	for _, u := range order {
		skip[u.Batch] = true
	}
	players = 0
	if more, err := l.Run(context.Background(), re, skip); err != nil || len(more) != 0 || players != 0 {
		t.Errorf("resume of a finished tune: %v %v, %d players", more, err, players)
	}
	// An engine that cannot start stops the tune with its error.
	l.Engine.Options = []match.Option{{Name: "NoSuchOption", Value: "1"}}
	fresh, _ := New(cfg)
	if _, err := l.Run(context.Background(), fresh, nil); err == nil || fresh.Updates() != 0 {
		t.Errorf("an engine with a bad option: %v, %d updates", err, fresh.Updates())
	}
}
