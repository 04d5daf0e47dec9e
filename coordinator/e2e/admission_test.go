//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arbiter-chess/arbiter/base/grpcerr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// The audit of issue 41 (an attacker with one ordinary credential or
// none) against the one admission layer: every test starts the real
// binary on loopback, sends what the attacker sends, reads the
// coordinator's memory from /proc, and ends with an honest control that
// succeeds.

// rssLimitKiB is the bound of the coordinator's peak RSS under each attack.
const rssLimitKiB = 200 << 10

// webCoordinator starts a coordinator with its pages and JSON API on an
// HTTP address, returning the process and the pages' base URL.
func webCoordinator(t *testing.T, addr, data string, extra ...string) (*proc, string) {
	t.Helper()
	httpAddr := proctest.FreeAddr(t)
	co := coordinator(t, addr, data, append([]string{"--http", httpAddr}, extra...)...)
	base := "http://" + httpAddr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return co, base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pages not serving: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// httpResult is an answer, or the error of a request the server cut off
// (it closes a connection whose body it will not read).
type httpResult struct {
	status int
	body   string
	header http.Header
	err    error
}

// send makes a request with body (n bytes declared), extra headers and
// cookies; it never follows redirects.
func send(method, u string, body io.Reader, n int64, header map[string]string) httpResult {
	return sendWithin(2*time.Minute, method, u, body, n, header)
}

// sendWithin is send giving up after d.
func sendWithin(d time.Duration, method, u string, body io.Reader, n int64, header map[string]string) httpResult {
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return httpResult{err: err}
	}
	req.ContentLength = n
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: d, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return httpResult{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return httpResult{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// cutOff reports whether err is the server closing a connection on a body
// it refused (the answer may be lost when the client is still writing).
func cutOff(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "connection reset") ||
		strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "forcibly closed"))
}

// burst sends n requests at once, each with a body of size bytes made by
// one shared slice, and tallies the answers by status (0 for cut off).
func burst(t *testing.T, n int, do func(i int) httpResult) map[int]int {
	t.Helper()
	var mu sync.Mutex
	tally := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.err == nil:
				tally[r.status]++
			case cutOff(r.err):
				tally[0]++
			default:
				t.Errorf("request %d: %v", i, r.err)
			}
		}()
	}
	wg.Wait()
	return tally
}

// webSession is a browser's cookies and form token on the pages.
type webSession struct {
	base    string
	cookies map[string]string
	csrf    string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// newWebSession opens /signin for its CSRF cookie and token.
func newWebSession(t *testing.T, base string) *webSession {
	t.Helper()
	s := &webSession{base: base, cookies: map[string]string{}}
	r := s.do("GET", "/signin", nil)
	m := csrfRE.FindStringSubmatch(r.body)
	if r.err != nil || m == nil {
		t.Fatalf("GET /signin: %v %d, no CSRF token", r.err, r.status)
	}
	s.csrf = m[1]
	return s
}

func (s *webSession) cookieHeader() string {
	var parts []string
	for k, v := range s.cookies {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, "; ")
}

// do sends a form (nil: none) with the session's cookies and the CSRF
// token in the query, as the pages' forms do.
func (s *webSession) do(method, path string, form url.Values) httpResult {
	var body io.Reader
	var n int64
	h := map[string]string{"Cookie": s.cookieHeader()}
	if form != nil {
		enc := form.Encode()
		body, n = strings.NewReader(enc), int64(len(enc))
		h["Content-Type"] = "application/x-www-form-urlencoded"
		path += "?csrf=" + url.QueryEscape(s.csrf)
	}
	r := send(method, s.base+path, body, n, h)
	if r.err == nil {
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.MaxAge < 0 {
				delete(s.cookies, c.Name)
			} else {
				s.cookies[c.Name] = c.Value
			}
		}
	}
	return r
}

// addAccount adds an active account to the store of the coordinator
// running on data, with the CLI.
func addAccount(t *testing.T, data, name, password string) {
	t.Helper()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"user", "add", name, "--role", "user", "--data", data, "--password-file", pw}
	if u := storeURL(t, data); u != "" {
		args = append(args, "--store", u)
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("arbiter user add: %v\n%s", err, out)
	}
}

// bigMatchSpec is a valid test whose inline book makes it about size
// bytes of JSON: a legitimate large submit.
func bigMatchSpec(size int) *arbiterv1.MatchSpec {
	spec := &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded"},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Games:       2,
	}
	for i := 0; i < size/100; i++ {
		spec.Openings = append(spec.Openings, &arbiterv1.Opening{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", MovesUci: []string{"e7e5"}})
	}
	return spec
}

// TestAPIBodiesWithAMadeUpTokenCostNothing: 40 × 30 MB to /api/v1/tests
// with a made-up bearer token are refused 401 from the headers; the
// coordinator's peak RSS stays under 200 MB (3.74 GB before admission).
// Control: an 8 MB test submitted with a client token is created.
func TestAPIBodiesWithAMadeUpTokenCostNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1.2 GB over loopback")
	}
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co, base := webCoordinator(t, addr, data)
	pid := co.cmd.Process.Pid
	body := bytes.Repeat([]byte("x"), 30<<20)
	tally := burst(t, 40, func(int) httpResult {
		return send("POST", base+"/api/v1/tests", bytes.NewReader(body), int64(len(body)),
			map[string]string{"Authorization": "Bearer arb_madeup0000000000000000000000000000000000", "Content-Type": "application/json"})
	})
	peak := procKiB(t, pid, "VmHWM")
	t.Logf("40 × 30 MB with a made-up token: answers %v, coordinator peak RSS %d MiB", tally, peak>>10)
	if tally[http.StatusUnauthorized] == 0 || tally[http.StatusUnauthorized]+tally[0] != 40 {
		t.Errorf("answers %v: want every one 401 (or cut off unread)", tally)
	}
	if peak > rssLimitKiB {
		t.Errorf("coordinator peak RSS %d MiB, want under 200 MiB", peak>>10)
	}

	// Control: a legitimate large submit with the right credential works.
	spec, err := protojson.Marshal(bigMatchSpec(8 << 20))
	if err != nil {
		t.Fatal(err)
	}
	r := send("POST", base+"/api/v1/tests", bytes.NewReader(spec), int64(len(spec)),
		map[string]string{"Authorization": "Bearer " + newCredential(t, addr, "client"), "Content-Type": "application/json"})
	if r.err != nil || r.status != http.StatusCreated {
		t.Fatalf("an %d MB test with a client token: %v %d %.300s", len(spec)>>20, r.err, r.status, r.body)
	}
	var job struct {
		ID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(r.body), &job); err != nil || job.ID == "" {
		t.Fatalf("created test: %v %.300s", err, r.body)
	}
}

// TestAnonymousFormBodiesCostNothing: 40 × 15 MB anonymous form posts
// (no CSRF token, no session) to the submit form, and 40 × 15 MB sign-in
// forms with a valid CSRF token, are refused from the headers (403, 413);
// the coordinator's peak RSS stays under 200 MB (1.32 GB before).
// Control: a legitimate sign-in with a password works.
func TestAnonymousFormBodiesCostNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1.2 GB over loopback")
	}
	addr, data := proctest.FreeAddr(t), t.TempDir()
	const secret = "correct horse battery"
	co, base := webCoordinator(t, addr, data)
	addAccount(t, data, "ada", secret)
	pid := co.cmd.Process.Pid
	body := bytes.Repeat([]byte("x"), 15<<20)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	tally := burst(t, 40, func(int) httpResult {
		return send("POST", base+"/submit/test", bytes.NewReader(body), int64(len(body)), form)
	})
	if tally[http.StatusForbidden] == 0 || tally[http.StatusForbidden]+tally[0] != 40 {
		t.Errorf("anonymous submit forms without a CSRF token: %v, want every one 403 (or cut off unread)", tally)
	}
	s := newWebSession(t, base)
	signin := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": s.cookieHeader()}
	tally = burst(t, 40, func(int) httpResult {
		return send("POST", base+"/signin?csrf="+url.QueryEscape(s.csrf), bytes.NewReader(body), int64(len(body)), signin)
	})
	if tally[http.StatusRequestEntityTooLarge] == 0 || tally[http.StatusRequestEntityTooLarge]+tally[0] != 40 {
		t.Errorf("15 MB sign-in forms: %v, want every one 413 (or cut off unread)", tally)
	}
	peak := procKiB(t, pid, "VmHWM")
	t.Logf("80 × 15 MB anonymous forms: coordinator peak RSS %d MiB", peak>>10)
	if peak > rssLimitKiB {
		t.Errorf("coordinator peak RSS %d MiB, want under 200 MiB", peak>>10)
	}

	// Control: the sign-in form, of its real size, signs in.
	r := s.do("POST", "/signin", url.Values{"name": {"ada"}, "password": {secret}, "next": {"/"}})
	if r.err != nil || r.status != http.StatusSeeOther || !strings.HasPrefix(s.cookies["__Host-arbiter-session"], "ses_") {
		t.Fatalf("ada's sign-in: %v %d %.300s", r.err, r.status, r.body)
	}
}

// TestSignInBurstsAreBounded: 100 sign-ins at once, each from its own
// address (behind a trusted proxy) for its own name, pass every rate
// limit; the hashing pool computes a few and answers the rest 429 at
// once, and the coordinator's peak RSS stays under 200 MB (1.58 GB
// before). 100 wrong passwords at once from one address for one name
// are hashed at most 10 times (85 before): the rest are 429 without
// hashing. Control: a legitimate sign-in then works.
func TestSignInBurstsAreBounded(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	const secret = "correct horse battery"
	co, base := webCoordinator(t, addr, data, "--trusted-proxy", "127.0.0.1")
	addAccount(t, data, "ada", secret)
	pid := co.cmd.Process.Pid
	s := newWebSession(t, base)
	attempt := func(from, name, password string) httpResult {
		f := url.Values{"name": {name}, "password": {password}}.Encode()
		return send("POST", base+"/signin?csrf="+url.QueryEscape(s.csrf), strings.NewReader(f), int64(len(f)),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": s.cookieHeader(), "X-Forwarded-For": from})
	}
	tally := burst(t, 100, func(i int) httpResult {
		return attempt(fmt.Sprintf("203.0.113.%d", i+1), fmt.Sprintf("nobody%d", i), "not the password")
	})
	peak := procKiB(t, pid, "VmHWM")
	t.Logf("100 sign-ins at once from 100 addresses: answers %v, coordinator peak RSS %d MiB", tally, peak>>10)
	if tally[http.StatusTooManyRequests] == 0 || tally[http.StatusUnauthorized] == 0 || tally[http.StatusTooManyRequests]+tally[http.StatusUnauthorized] != 100 {
		t.Errorf("answers %v: want some hashed (401) and the excess refused (429)", tally)
	}
	if tally[http.StatusUnauthorized] > 50 {
		t.Errorf("%d of 100 sign-ins hashed at once: the pool (2 running, 8 queued) should have refused most", tally[http.StatusUnauthorized])
	}
	if peak > rssLimitKiB {
		t.Errorf("coordinator peak RSS %d MiB, want under 200 MiB", peak>>10)
	}

	// One address, one name, 100 wrong passwords at once: the limits are
	// reserved before hashing, so at most 10 are hashed. They come in
	// waves the pool takes; the rest are refused by the limit.
	hashed := 0
	for wave := range 10 {
		tally = burst(t, 10, func(i int) httpResult { return attempt("198.51.100.7", "ada", fmt.Sprintf("wrong %d %d", wave, i)) })
		hashed += tally[http.StatusUnauthorized]
	}
	t.Logf("100 wrong passwords for one name from one address: %d hashed", hashed)
	if hashed == 0 || hashed > 10 {
		t.Errorf("%d wrong passwords hashed, want 1 to 10 (the per-name and per-address burst)", hashed)
	}

	// Control: ada signs in from another address. The guesses above spent
	// her name's burst (the per-name limit lets a stranger slow her
	// sign-in, docs/security.md), so she may wait for the name's next
	// token (one per 30 s), then signs in.
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := attempt("192.0.2.44", "ada", secret)
		if r.err == nil && r.status == http.StatusSeeOther {
			break
		}
		if r.err != nil || r.status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("ada's sign-in: %v %d %.300s", r.err, r.status, r.body)
		}
		time.Sleep(2 * time.Second)
	}
}

// TestSignUpLimitedAndSilentAboutNames: sign-ups from one address stop
// after 3 (300 pending accounts in 28 s before), a taken name gets the
// same page as a free one, and X-Forwarded-For from loopback is not
// believed without --trusted-proxy (each forged address still counts as
// the one peer). Control: the first sign-ups, of a free name, work.
func TestSignUpLimitedAndSilentAboutNames(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	_, base := webCoordinator(t, addr, data, "--signup")
	addAccount(t, data, "ada", "correct horse battery")
	s := newWebSession(t, base)
	signUp := func(name, from string) httpResult {
		f := url.Values{"name": {name}, "password": {"a long password"}, "password_repeat": {"a long password"}}.Encode()
		return send("POST", base+"/signup?csrf="+url.QueryEscape(s.csrf), strings.NewReader(f), int64(len(f)),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": s.cookieHeader(), "X-Forwarded-For": from})
	}
	free := signUp("bea", "203.0.113.1")
	taken := signUp("ada", "203.0.113.2")
	if free.err != nil || taken.err != nil || free.status != http.StatusOK || taken.status != free.status {
		t.Fatalf("sign-up of a free name: %v %d; of a taken one: %v %d", free.err, free.status, taken.err, taken.status)
	}
	clean := func(b string) string {
		b = csrfRE.ReplaceAllString(b, "")
		b = regexp.MustCompile(`csrf=[^"&]+`).ReplaceAllString(b, "")
		b = regexp.MustCompile(`rendered [^<]+`).ReplaceAllString(b, "")
		return strings.ReplaceAll(b, "bea", "ada")
	}
	if clean(free.body) != clean(taken.body) {
		t.Errorf("a taken name's sign-up page differs from a free one's:\n%.600s\n---\n%.600s", clean(free.body), clean(taken.body))
	}
	var statuses []int
	for i := range 20 {
		r := signUp(fmt.Sprintf("spam%d", i), fmt.Sprintf("198.51.100.%d", i+1))
		if r.err != nil {
			t.Fatal(r.err)
		}
		statuses = append(statuses, r.status)
	}
	// bea and ada took two of the peer's three; spam0 the third.
	if statuses[0] != http.StatusOK || statuses[1] != http.StatusTooManyRequests || statuses[19] != http.StatusTooManyRequests {
		t.Errorf("sign-ups 3 to 22 from one peer with forged X-Forwarded-For: %v, want 200 then 429 (3 per address)", statuses)
	}
}

// TestRightRoleGRPCBodiesBounded: a client credential sends 64 × 15 MB
// to SubmitMatch, its own method, over one connection. Each call
// reserves its method's limit from the byte budget at the tap, before
// grpc-go reads the body; past the identity's share the calls are
// refused RESOURCE_EXHAUSTED (BUSY, naming the flag), and the
// coordinator's peak RSS stays under 200 MB (1.24 GB before). Control: a
// legitimate large test is then created.
func TestRightRoleGRPCBodiesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 960 MB over loopback")
	}
	addr := proctest.FreeAddr(t)
	co := coordinator(t, addr, t.TempDir())
	pid := co.cmd.Process.Pid
	conn := dial(t, addr, newCredential(t, addr, "client"))
	jobs := arbiterv1.NewJobServiceClient(conn)
	huge := &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{BookName: strings.Repeat("x", 15<<20)}}
	var mu sync.Mutex
	seen := map[string]int{}
	var busyMsg string
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := jobs.SubmitMatch(ctxT(t, 2*time.Minute), huge)
			mu.Lock()
			defer mu.Unlock()
			key := status.Code(err).String() + "/" + grpcerr.Reason(err)
			seen[key]++
			if grpcerr.Reason(err) == "BUSY" {
				busyMsg = status.Convert(err).Message()
			}
		}()
	}
	wg.Wait()
	peak := procKiB(t, pid, "VmHWM")
	t.Logf("64 × 15 MB right-role SubmitMatch: %v, coordinator peak RSS %d MiB", seen, peak>>10)
	if seen["ResourceExhausted/BUSY"] == 0 || !strings.Contains(busyMsg, "--max-request-bytes-per-identity") {
		t.Errorf("answers %v (%q): want the excess refused BUSY naming --max-request-bytes-per-identity", seen, busyMsg)
	}
	if seen["InvalidArgument/BAD_INPUT"]+seen["InvalidArgument/"] == 0 {
		t.Errorf("answers %v: want those admitted read and refused for their spec", seen)
	}
	if peak > rssLimitKiB {
		t.Errorf("coordinator peak RSS %d MiB, want under 200 MiB", peak>>10)
	}
	// Control: a legitimate 8 MB test is created.
	resp, err := jobs.SubmitMatch(ctxT(t, time.Minute), &arbiterv1.SubmitMatchRequest{Spec: bigMatchSpec(8 << 20)})
	if err != nil || resp.GetJob().GetJobId() == "" {
		t.Fatalf("a legitimate large test: %v", err)
	}
}
