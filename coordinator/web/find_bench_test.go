package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// findTests is the number of stored tests BenchmarkFindTests lists
// (ARBITER_BENCH_FIND_TESTS overrides it, for a quick look).
const findTests = 100_000

// fillFindStore stores n finished SPRT tests in a real SQLite store in dir:
// 37 submitters, 100 engine names, 50 tags, verdicts passed, failed and
// none in turn, one test with a rare word in its notes, created a minute
// apart.
func fillFindStore(b *testing.B, dir string, n int) {
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	base := testSpec(b, 2000, 0, true)
	base.Openings = nil
	base.OpeningsCount = 200
	params := sprt.Params{Elo0: 0, Elo1: 2, Alpha: 0.05, Beta: 0.05, Model: sprt.Normalized}
	var seqs [3]string
	for k, state := range []sprt.State{sprt.Accepted, sprt.Rejected, sprt.Continue} {
		seq, _ := sprt.NewSequential(params, 2)
		seq.State = state
		raw, _ := json.Marshal(seq)
		seqs[k] = string(raw)
	}
	now := time.Now()
	if err := parallel(n, func(i int) error {
		s := proto.Clone(base).(*arbiterv1.MatchSpec)
		s.EngineA.Name = fmt.Sprintf("dev-%d", i%100)
		s.Tags = []string{fmt.Sprintf("tag-%d", i%50), "stc"}
		s.Notes = fmt.Sprintf("patch %d of the search", i)
		if i == n/3 {
			s.Notes += " rare-needle"
		}
		raw, err := proto.Marshal(s)
		if err != nil {
			return err
		}
		created := now.Add(-time.Duration(n-i) * time.Minute)
		j := &store.Job{ID: fmt.Sprintf("s%011x", i), Kind: "sprt", State: store.StateDone, CreatedAt: created,
			FinishedAt: created.Add(30 * time.Second), RootMoves: []string{}, Submitter: fmt.Sprintf("user%d", i%37), Throughput: 1}
		return CreateBenchTest(ctx, st, j, raw, 2, seqs[i%3])
	}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFindTests renders the list page filtered in the ways people
// look for tests, over a coordinator that loaded 100,000 stored tests
// from a real SQLite store: the first page, a tag, a user with a verdict,
// an engine with text, a word in one test's notes (a pass over every
// test), a user's page, a page deep in the list by its keyset cursor, and
// the same depth by page number. It reports the CPU time per page; there
// is no timed assertion (docs/web.md has the figures).
func BenchmarkFindTests(b *testing.B) {
	n := findTests
	if v, err := strconv.Atoi(os.Getenv("ARBITER_BENCH_FIND_TESTS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	start := time.Now()
	fillFindStore(b, dir, n)
	filled := time.Since(start)
	start = time.Now()
	cl := newCluster(b, clusterOpts{dir: dir})
	b.Logf("%d tests: stored in %v, loaded by the coordinator in %v", n, filled.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	// The cursor of a page in the middle of the list: the seq of the
	// test there.
	mid, _ := cl.c.Core.JobRef(fmt.Sprintf("s%011x", n/2))
	pages := []struct{ name, path string }{
		{"first-page", "/"},
		{"tag", "/?tag=tag-7"},
		{"user-verdict", "/?submitter=user5&verdict=passed"},
		{"engine-text", "/?engine=dev-42&q=search"},
		{"text-one-match", "/?q=rare-needle"},
		{"user-page", "/users/user3"},
		{"tc-dates", "/?tc=nodes%3D2000&from=" + time.Now().AddDate(0, 0, -10).Format(time.DateOnly)},
		{"cursor-middle", "/?kind=test&cursor=" + strconv.FormatInt(mid.Seq, 10)},
		{"page-1000", "/?kind=test&page=1000"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", p.path, nil)
			w := httptest.NewRecorder()
			cl.srv.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", p.path, w.Code, excerpt(w.Body.String()))
			}
			size := w.Body.Len()
			runtime.GC()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				cl.srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", p.path, w.Code)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/page")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}
