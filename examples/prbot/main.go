// Command prbot is the bot a repository runs for its pull requests: given
// a pull request's branch, it submits an SPRT of that branch against the
// base branch through Arbiter's JSON API, waits for the webhook that says
// the test ended, checks its signature, and posts the result block back
// (as a comment on the pull request, through GitHub's issue-comment API,
// or to any URL that takes {"body": "..."}).
//
//	go run ./examples/prbot --api https://farm.example.org --token $ARBITER_TOKEN \
//	  --repo https://github.com/me/engine.git --branch pr-42 --base main \
//	  --build 'make -j EXE=engine' --bench 11517 --book books/uho-200.epd \
//	  --listen :8088 --hook-url https://bot.example.org:8088/arbiter \
//	  --post https://api.github.com/repos/me/engine/issues/42/comments --post-token $GITHUB_TOKEN
//
// It needs a client credential of the farm (arbiter token create --role
// client) and an address the coordinator can reach for the webhook.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Config is what the bot is told.
type Config struct {
	API, Token         string // the coordinator's web address and a client credential
	Repo, Branch, Base string // the repository, the pull request's branch and the base branch
	Build              string // the build command
	Bench              uint64 // the bench signature (0: unchecked)
	Book               string // an EPD or PGN opening book on this machine
	Nodes              uint64 // fixed nodes per move (0: TC instead)
	TC                 string // X+Y seconds, when Nodes is 0
	Elo0, Elo1         float64
	Listen, HookURL    string // where the bot listens, and that address as the coordinator reaches it
	Post, PostToken    string // where the block goes, and its bearer token
	Out                io.Writer
	OnListening        func(addr string)
	Timeout            time.Duration
}

func main() {
	var c Config
	flag.StringVar(&c.API, "api", os.Getenv("ARBITER_API"), "the coordinator's web address")
	flag.StringVar(&c.Token, "token", os.Getenv("ARBITER_TOKEN"), "a client credential of the farm")
	flag.StringVar(&c.Repo, "repo", "", "the repository URL (https, ssh or git://)")
	flag.StringVar(&c.Branch, "branch", "", "the pull request's branch")
	flag.StringVar(&c.Base, "base", "main", "the branch it is tested against")
	flag.StringVar(&c.Build, "build", "make -j EXE=engine", "the build command (it makes ./engine)")
	flag.Uint64Var(&c.Bench, "bench", 0, "the bench signature of both branches (0: unchecked)")
	flag.StringVar(&c.Book, "book", "books/uho-200.epd", "the opening book")
	flag.Uint64Var(&c.Nodes, "nodes", 0, "fixed nodes per move (0: --tc)")
	flag.StringVar(&c.TC, "tc", "8+0.08", "time control X+Y in seconds")
	flag.Float64Var(&c.Elo0, "elo0", 0, "SPRT elo0")
	flag.Float64Var(&c.Elo1, "elo1", 5, "SPRT elo1")
	flag.StringVar(&c.Listen, "listen", ":8088", "where the webhook is received")
	flag.StringVar(&c.HookURL, "hook-url", "", "the webhook's address as the coordinator reaches it (default: --listen's, for a coordinator on this machine)")
	flag.StringVar(&c.Post, "post", "", "where the result block is posted as {\"body\": ...} (a GitHub issue-comments URL); empty: printed only")
	flag.StringVar(&c.PostToken, "post-token", os.Getenv("GITHUB_TOKEN"), "bearer token of --post")
	flag.DurationVar(&c.Timeout, "timeout", 24*time.Hour, "give up after this long")
	flag.Parse()
	c.Out = os.Stdout
	if err := Run(context.Background(), c); err != nil {
		log.Fatal(err)
	}
}

// Run submits the test, waits for its webhook and posts the block.
func Run(ctx context.Context, c Config) error {
	if c.Repo == "" || c.Branch == "" || c.API == "" || c.Token == "" {
		return errors.New("--api, --token, --repo and --branch are required")
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	lis, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return err
	}
	defer lis.Close()
	if c.HookURL == "" { // the coordinator runs on this machine
		c.HookURL = "http://" + lis.Addr().String() + "/arbiter"
	}

	// 1. A webhook for this bot's jobs; its secret checks what arrives.
	var hook struct{ ID, Secret string }
	if err := call(ctx, c, "POST", "/hooks", map[string]any{"url": c.HookURL, "events": []string{"finished", "failed"}}, &hook); err != nil {
		return fmt.Errorf("adding the webhook: %w", err)
	}
	defer call(context.Background(), c, "DELETE", "/hooks/"+hook.ID, nil, nil)

	// 2. The test: both branches fetched by the coordinator from the
	// repository (an artifact with a repository and a branch, no hash).
	spec, err := testSpec(c)
	if err != nil {
		return err
	}
	body, err := protojson.Marshal(spec)
	if err != nil {
		return err
	}
	var job struct {
		JobID string `json:"job_id"`
	}
	if err := call(ctx, c, "POST", "/tests", json.RawMessage(body), &job); err != nil {
		return fmt.Errorf("submitting the test: %w", err)
	}
	fmt.Fprintf(c.Out, "test %s: %s vs %s submitted\n", job.JobID, c.Branch, c.Base)

	// 3. The webhook: signed by the hook's secret, about our test.
	type delivery struct {
		hooks.Payload
		job jobreport.JobJSON
	}
	done := make(chan delivery, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
		if err != nil || !hooks.Verify(hook.Secret, b, r.Header.Get("X-Arbiter-Signature-256")) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p delivery
		if json.Unmarshal(b, &p.Payload) != nil || json.Unmarshal(p.Payload.Job, &p.job) != nil {
			http.Error(w, "bad payload", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		if p.job.JobID == job.JobID {
			select {
			case done <- p:
			default: // a redelivery after a coordinator restart (same X-Arbiter-Delivery)
			}
		}
	})}
	go srv.Serve(lis)
	defer srv.Close()
	var p delivery
	select {
	case p = <-done:
	case <-ctx.Done():
		var now struct {
			State, Blocked string
			Test           struct{ Games int }
		}
		call(context.Background(), c, "GET", "/jobs/"+job.JobID, nil, &now)
		return fmt.Errorf("test %s: no webhook before the timeout (the test is %s after %d games %s)", job.JobID, now.State, now.Test.Games, now.Blocked)
	}

	// 4. The block goes back to the pull request.
	verdict := "finished"
	if p.job.Test != nil && p.job.Test.SPRT != nil {
		verdict = map[string]string{"accepted": "passed", "rejected": "failed"}[p.job.Test.SPRT.State]
	}
	if p.Event == "failed" {
		verdict = "could not run: " + p.job.Error
	}
	comment := fmt.Sprintf("Arbiter SPRT of `%s` against `%s`: %s\n```\n%s```\n", c.Branch, c.Base, verdict, p.Block)
	fmt.Fprint(c.Out, comment)
	if c.Post == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"body": comment})
	req, err := http.NewRequestWithContext(ctx, "POST", c.Post, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.github+json")
	if c.PostToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.PostToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("posting the block: HTTP %d", resp.StatusCode)
	}
	return nil
}

// testSpec is the SPRT of the branch against the base.
func testSpec(c Config) (*arbiterv1.MatchSpec, error) {
	book, err := match.LoadBook(match.BookOptions{Path: c.Book, Order: "random", Seed: 1})
	if err != nil {
		return nil, err
	}
	engine := func(name, ref string) *arbiterv1.EngineSpec {
		return &arbiterv1.EngineSpec{Name: name, Artifact: &arbiterv1.EngineArtifact{Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE,
			Repository: c.Repo, Branch: ref, Build: c.Build, Bench: c.Bench}}
	}
	s := &arbiterv1.MatchSpec{EngineA: engine(c.Branch, c.Branch), EngineB: engine(c.Base, c.Base), BookName: c.Book, BookOrder: "random", Seed: 1,
		Sprt: &arbiterv1.SprtParams{Elo0: c.Elo0, Elo1: c.Elo1, Alpha: 0.05, Beta: 0.05, Model: "normalized"}}
	if c.Nodes > 0 {
		s.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: c.Nodes}}
	} else {
		var l match.Limits
		if _, err := l.ParseLimit("tc", c.TC); err != nil {
			return nil, err
		}
		if s.TimeControl, err = matchspec.LimitsToProto(l); err != nil {
			return nil, err
		}
	}
	for _, o := range book.Openings {
		s.Openings = append(s.Openings, matchspec.OpeningToProto(o))
	}
	return s, nil
}

// call makes one call of the JSON API.
func call(ctx context.Context, c Config, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.API, "/")+"/api/v1"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, e.Error)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
