package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"go.uber.org/zap"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

// Payload is a json hook's body.
type Payload struct {
	Event string `json:"event"`
	// Delivery is the idempotency key (also in X-Arbiter-Delivery).
	Delivery string `json:"delivery"`
	// Job is the job as `arbiter status JOB --json` prints it (with
	// Config.JobJSON; else the Job message in protobuf JSON).
	Job json.RawMessage `json:"job"`
	// Block and FishtestBlock are the result block in OpenBench's and
	// Fishtest's layouts (`arbiter status JOB --block`).
	Block         string `json:"block"`
	FishtestBlock string `json:"fishtest_block"`
	URL           string `json:"url,omitempty"`
}

// eventsOf are the events job j is in now.
func eventsOf(j *arbiterv1.Job) []string {
	switch j.GetState() {
	case arbiterv1.JobState_JOB_STATE_DONE:
		return []string{EventFinished}
	case arbiterv1.JobState_JOB_STATE_FAILED:
		return []string{EventFailed}
	case arbiterv1.JobState_JOB_STATE_RUNNING:
		if j.GetProgress().GetBlocked() != "" {
			return []string{EventBlocked}
		}
	}
	return nil
}

// scan reads the newest jobs and records a delivery for each event a hook
// subscribed to that has none yet. An event before a hook was made is not
// sent to it (a new hook is not flooded with the farm's history).
func (m *Manager) scan(ctx context.Context) error {
	m.mu.Lock()
	hooks := append([]*store.Hook(nil), m.hooks...)
	m.mu.Unlock()
	if m.jobs == nil {
		return nil
	}
	followers, err := m.followers(ctx)
	if err != nil {
		return err
	}
	if len(hooks) == 0 && len(followers) == 0 {
		return nil
	}
	resp, err := m.jobs.ListJobs(m.withToken(ctx), &arbiterv1.ListJobsRequest{Limit: scanJobs})
	if err != nil {
		return err
	}
	for _, j := range resp.GetJobs() {
		for _, ev := range eventsOf(j) {
			if err := m.recordFollowEvents(ctx, j, ev, followers[j.GetJobId()]); err != nil {
				return err
			}
			var full *arbiterv1.Job
			for _, h := range hooks {
				key := h.ID + "/" + j.GetJobId() + "/" + ev
				if !strings.Contains(","+h.Events+",", ","+ev+",") || !covers(h, j.GetSubmitter(), followers[j.GetJobId()]) {
					continue
				}
				m.mu.Lock()
				seen := m.seen[key]
				m.mu.Unlock()
				if seen {
					continue
				}
				if ev != EventBlocked && j.GetFinishedAt() != nil && j.GetFinishedAt().AsTime().Before(h.CreatedAt) {
					m.markSeen(key)
					continue
				}
				if full == nil {
					g, err := m.jobs.GetJob(m.withToken(ctx), &arbiterv1.GetJobRequest{JobId: j.GetJobId()})
					if err != nil {
						return err
					}
					full = g.GetJob()
					if ev == EventBlocked && full.GetProgress().GetBlocked() == "" && j.GetProgress().GetBlocked() != "" {
						full.Progress.Blocked = j.GetProgress().GetBlocked()
					}
				}
				body, err := m.payload(h, key, ev, full)
				if err != nil {
					return err
				}
				now := m.cfg.Now()
				added, err := m.cfg.Store.AddDelivery(ctx, &store.Delivery{ID: key, HookID: h.ID, JobID: j.GetJobId(), Event: ev,
					Payload: string(body), State: "pending", NextAt: now, CreatedAt: now})
				if err != nil {
					return err
				}
				if added {
					m.log.Info("webhook event", zap.String("hook", h.ID), zap.String("job", j.GetJobId()), zap.String("event", ev))
				}
				m.markSeen(key)
			}
		}
	}
	return nil
}

func (m *Manager) markSeen(key string) {
	m.mu.Lock()
	m.seen[key] = true
	m.mu.Unlock()
}

// payload is the body a hook gets for an event of job j.
func (m *Manager) payload(h *store.Hook, key, ev string, j *arbiterv1.Job) ([]byte, error) {
	link := ""
	if m.cfg.PageURL != nil {
		link = m.cfg.PageURL(j.GetJobId())
	}
	block := resultblock.Of(j, resultblock.OpenBench, link)
	title := title(j, ev)
	switch h.Format {
	case "discord":
		// Discord takes up to 2000 characters of content.
		content := "**" + title + "**\n```\n" + block + "```"
		if len(content) > 2000 {
			content = content[:1990] + "…```"
		}
		return json.Marshal(map[string]string{"content": content})
	case "slack":
		return json.Marshal(map[string]string{"text": "*" + title + "*\n```\n" + block + "```"})
	}
	job, err := m.jobJSON(j)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Payload{Event: ev, Delivery: key, Job: job, Block: block,
		FishtestBlock: resultblock.Of(j, resultblock.Fishtest, link), URL: link})
}

// title is the one line that says what happened: the job, the event,
// the engines, the verdict, why it is blocked or failed.
func title(j *arbiterv1.Job, ev string) string {
	t := fmt.Sprintf("%s %s %s", jobkind.Of(j).Noun, j.GetJobId(), ev)
	if m := j.GetMatch(); m != nil {
		t += ": " + m.GetEngineA().GetName() + " vs " + m.GetEngineB().GetName()
	}
	if s := j.GetMatchProgress().GetSprtState(); s == "accepted" {
		t += " (H1 accepted)"
	} else if s == "rejected" {
		t += " (H0 accepted)"
	}
	if b := j.GetProgress().GetBlocked(); ev == EventBlocked && b != "" {
		t += ": " + b
	}
	if e := j.GetError(); ev == EventFailed && e != "" {
		t += ": " + e
	}
	return t
}

// jobJSON is job j as the payload carries it.
func (m *Manager) jobJSON(j *arbiterv1.Job) (json.RawMessage, error) {
	if m.cfg.JobJSON != nil {
		return json.Marshal(m.cfg.JobJSON(j))
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(j)
}

// deliverDue starts the deliveries that are due, each in its own
// goroutine, within the budgets (inFlight): a delivery already being
// attempted is not started again, an owner at its budget waits for the
// next pass. It does not wait for the attempts (a receiver that hangs
// holds only its own goroutine, up to Timeout); wait does.
func (m *Manager) deliverDue(ctx context.Context) {
	m.deliverMu.Lock()
	defer m.deliverMu.Unlock()
	due, err := m.cfg.Store.DueDeliveries(ctx, m.cfg.Now(), m.cfg.PerOwner, dueBatch)
	if err != nil {
		m.log.Warn("webhook deliveries", zap.Error(err))
		return
	}
	for _, d := range due {
		if ctx.Err() != nil {
			return
		}
		h := m.hookByID(d.HookID)
		if h == nil {
			continue // removed: its deliveries went with it
		}
		if !m.flight.start(d.ID, h.Owner) {
			continue
		}
		m.attempts.Add(1)
		go func() {
			defer m.attempts.Done()
			defer m.flight.done(d.ID, h.Owner)
			m.attempt(ctx, h, d)
		}()
	}
}

// wait returns once every attempt started has ended.
func (m *Manager) wait() { m.attempts.Wait() }

// hookByID returns the hook of that id (nil: removed).
func (m *Manager) hookByID(id string) *store.Hook {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range m.hooks {
		if h.ID == id {
			return h
		}
	}
	return nil
}

// inFlight is the budget of deliveries being attempted at once: at most
// perOwner of one hook owner's, at most total in all, and each delivery
// once. Why per owner: the receivers are the owners' choice, and a
// receiver that hangs holds its attempt for the whole Timeout; one user's
// twenty slow receivers must cost other users nothing.
type inFlight struct {
	mu              sync.Mutex
	perOwner, total int
	ids             map[string]bool
	byOwner         map[string]int
}

func newInFlight(perOwner, total int) *inFlight {
	return &inFlight{perOwner: perOwner, total: total, ids: map[string]bool{}, byOwner: map[string]int{}}
}

// start takes a place for delivery id of owner's hook; false: it is being
// attempted already, or owner or everyone is at the budget.
func (f *inFlight) start(id, owner string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[id] || f.byOwner[owner] >= f.perOwner || len(f.ids) >= f.total {
		return false
	}
	f.ids[id] = true
	f.byOwner[owner]++
	return true
}

// done gives back the place start took.
func (f *inFlight) done(id, owner string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ids, id)
	if f.byOwner[owner]--; f.byOwner[owner] <= 0 {
		delete(f.byOwner, owner)
	}
}

// attempt sends one delivery once and records the outcome.
func (m *Manager) attempt(ctx context.Context, h *store.Hook, d *store.Delivery) {
	d.Attempts++
	status, err := m.send(ctx, h, d)
	now := m.cfg.Now()
	d.LastStatus, d.LastError = status, ""
	outcome := "delivered"
	switch {
	case err == nil:
		d.State, d.DeliveredAt = "delivered", now
	default:
		d.LastError = err.Error()
		if len(d.LastError) > 500 {
			d.LastError = d.LastError[:500]
		}
		if d.Attempts >= m.cfg.MaxAttempts {
			d.State, outcome = "failed", "failed"
		} else {
			backoff := m.cfg.RetryBase << (d.Attempts - 1)
			if backoff > maxBackoff || backoff <= 0 {
				backoff = maxBackoff
			}
			d.NextAt, outcome = now.Add(backoff), "retry"
		}
	}
	m.sent.WithLabelValues(outcome).Inc()
	if err := m.cfg.Store.UpdateDelivery(ctx, d); err != nil {
		m.log.Warn("webhook delivery not recorded", zap.String("delivery", d.ID), zap.Error(err))
	}
	m.log.Info("webhook attempt", zap.String("delivery", d.ID), zap.String("url", redactQuery(h.URL)), zap.Int("attempt", d.Attempts),
		zap.Int("status", status), zap.String("outcome", outcome), zap.String("error", d.LastError))
}

// send POSTs a delivery's payload: it returns the HTTP status and an
// error unless the status is 2xx.
func (m *Manager) send(ctx context.Context, h *store.Hook, d *store.Delivery) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	body := []byte(d.Payload)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "arbiter-webhook")
	req.Header.Set("X-Arbiter-Event", d.Event)
	req.Header.Set("X-Arbiter-Delivery", d.ID)
	req.Header.Set("X-Arbiter-Signature-256", "sha256="+Sign(h.Secret, body))
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		if resp.StatusCode/100 == 3 {
			return resp.StatusCode, fmt.Errorf("HTTP %d: redirects are not followed (give the final URL)", resp.StatusCode)
		}
		return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}
