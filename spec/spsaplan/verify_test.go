package spsaplan

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
)

// The local verification plays the tuned engine with θ (as the engine
// takes it) against it with the start values, at the tune's limits with
// the engine's own options on both sides; it plays, and reports the Elo.
func TestVerifyPlan(t *testing.T) {
	p, err := Parse(context.Background(), flags(func(f *Flags) {
		f.Engine = "name=dev,builtin,option.Hash=1,option.rfpmargin=80"
		f.Params = "from-engine:RFPMargin,FutMargin"
	}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Config.Params[0].Start != 80 {
		t.Fatalf("RFPMargin starts at %v, want 80 (--engine's option)", p.Config.Params[0].Start)
	}
	for _, c := range []struct {
		games int
		sprt  string
		want  string
	}{{0, "", "--confirm-games"}, {3, "", "--confirm-games 3"}, {-2, "", "--confirm-games -2"}, {4, "elo0=5,elo1=0", "--confirm-sprt"}} {
		if _, err := p.VerifyPlan([]float64{101.4, 70.6}, c.games, c.sprt, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("games %d sprt %q: %v, want an error naming %s", c.games, c.sprt, err, c.want)
		}
	}
	vp, err := p.VerifyPlan([]float64{101.4, 70.6}, 4, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := vp.Config
	if cfg.Engines[0].Name != "dev-tuned" || cfg.Engines[1].Name != "dev-start" || cfg.Pairs != 2 || cfg.Concurrency != 2 ||
		cfg.Limits != p.Setup.Config.Limits {
		t.Errorf("plan: engines %s and %s, %d pairs, concurrency %d, limits %v", cfg.Engines[0].Name, cfg.Engines[1].Name, cfg.Pairs,
			cfg.Concurrency, cfg.Limits)
	}
	want := [2]string{"FutMargin=71 Hash=1 RFPMargin=101", "FutMargin=90 Hash=1 RFPMargin=80"}
	for i, e := range cfg.Engines {
		if got := optionList(e.Options); got != want[i] {
			t.Errorf("engine %s options %q, want %q (the option of --engine in another case replaced)", e.Name, got, want[i])
		}
	}
	if testing.Short() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if st, err := vp.Run(ctx, matchplanRunOptions(&out)); err != nil || st.Status != match.StatusComplete {
		t.Fatalf("verification: %v, %+v", err, st)
	}
	for _, w := range []string{"Results of dev-tuned vs dev-start (nodes=300, uho-200.epd):", "Games: 4, Wins: ", "Finished match"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("verification output lacks %q:\n%s", w, out.String())
		}
	}
}

func optionList(opts []match.Option) string {
	var s []string
	for _, o := range opts {
		s = append(s, o.Name+"="+o.Value)
	}
	return strings.Join(s, " ")
}

func matchplanRunOptions(out *bytes.Buffer) matchplan.RunOptions {
	return matchplan.RunOptions{Out: out, Quiet: true, Builtin: builtin.New}
}
