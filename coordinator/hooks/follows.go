package hooks

// Follows: a signed-in user follows a job on the web pages and is told
// when it finishes, fails or is blocked — in the browser (the pages poll
// the user's events, package web) and through the user's own webhooks of
// scope "followed". The scan that finds events for hooks finds them for
// followers too, so a follower and a hook see the same events.

import (
	"context"
	"errors"
	"net/url"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Bounds of follows.
const (
	// MaxFollowsPerIdentity bounds the jobs one user follows: each is
	// looked at on every scan.
	MaxFollowsPerIdentity = 200
	// MaxEventsRead bounds the events one read returns.
	MaxEventsRead = 100
	maxJobIDBytes = 128
)

// Follow makes id follow job jobID. The job must exist; following it
// twice is refused (AlreadyExists), as is a credential that may not
// submit (workers).
func (m *Manager) Follow(ctx context.Context, id identity.Identity, jobID string) error {
	if !id.CanSubmit() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not follow jobs", apierr.Q(id.Name), id.Role)
	}
	if jobID == "" || len(jobID) > maxJobIDBytes {
		return apierr.Invalid("job id %s: not a job id (1 to %d bytes)", apierr.Q(jobID), maxJobIDBytes)
	}
	if m.jobs == nil {
		return apierr.New(apierr.Unavailable, apierr.ReasonBadInput, "this coordinator cannot look jobs up for follows")
	}
	if _, err := m.jobs.GetJob(m.withToken(ctx), &arbiterv1.GetJobRequest{JobId: jobID}); err != nil {
		if status.Code(err) == codes.NotFound || status.Code(err) == codes.InvalidArgument {
			return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "job %s: no such job to follow", apierr.Q(jobID))
		}
		return apierr.New(apierr.Unavailable, apierr.ReasonBadInput, "job %s: %v", apierr.Q(jobID), status.Convert(err).Message())
	}
	mine, err := m.cfg.Store.Follows(ctx, id.Name)
	if err != nil {
		return apierr.Store(err)
	}
	if len(mine) >= MaxFollowsPerIdentity {
		return apierr.New(apierr.ResourceExhausted, apierr.ReasonQuota, "%s follows %d jobs, the most one user may follow: unfollow one first", apierr.Q(id.Name), len(mine))
	}
	added, err := m.cfg.Store.AddFollow(ctx, store.Follow{User: id.Name, JobID: jobID, CreatedAt: m.cfg.Now()})
	if err != nil {
		return apierr.Store(err)
	}
	if !added {
		return apierr.New(apierr.AlreadyExists, apierr.ReasonBadInput, "%s follows job %s already", apierr.Q(id.Name), apierr.Q(jobID))
	}
	m.log.Info("job followed", zap.String("job", jobID), zap.String("by", id.Name))
	return nil
}

// Unfollow ends id's follow of job jobID and drops its events not yet
// read (NotFound when id does not follow it).
func (m *Manager) Unfollow(ctx context.Context, id identity.Identity, jobID string) error {
	if !id.CanSubmit() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not follow jobs", apierr.Q(id.Name), id.Role)
	}
	if err := m.cfg.Store.DeleteFollow(ctx, id.Name, jobID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "%s does not follow job %s", apierr.Q(id.Name), apierr.Q(jobID))
		}
		return apierr.Store(err)
	}
	m.log.Info("job unfollowed", zap.String("job", jobID), zap.String("by", id.Name))
	return nil
}

// Follows returns the jobs id follows, oldest follow first.
func (m *Manager) Follows(ctx context.Context, id identity.Identity) ([]store.Follow, error) {
	if !id.CanSubmit() {
		return nil, nil
	}
	list, err := m.cfg.Store.Follows(ctx, id.Name)
	if err != nil {
		return nil, apierr.Store(err)
	}
	return list, nil
}

// Events returns up to limit (at most MaxEventsRead) of id's events of
// followed jobs after event id after, oldest first.
func (m *Manager) Events(ctx context.Context, id identity.Identity, after int64, limit int) ([]store.FollowEvent, error) {
	if !id.CanSubmit() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which follows no jobs", apierr.Q(id.Name), id.Role)
	}
	if limit <= 0 || limit > MaxEventsRead {
		limit = MaxEventsRead
	}
	if after < 0 {
		return nil, apierr.Invalid("after %d: want an event id, 0 or more", after)
	}
	list, err := m.cfg.Store.FollowEvents(ctx, id.Name, after, limit)
	if err != nil {
		return nil, apierr.Store(err)
	}
	return list, nil
}

// followers maps each followed job to its followers and when each began.
func (m *Manager) followers(ctx context.Context) (map[string]map[string]store.Follow, error) {
	all, err := m.cfg.Store.Follows(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]store.Follow{}
	for _, f := range all {
		if out[f.JobID] == nil {
			out[f.JobID] = map[string]store.Follow{}
		}
		out[f.JobID][f.User] = f
	}
	return out, nil
}

// recordFollowEvents records event ev of job j for each of its followers
// who followed it before it ended (following a finished test tells
// nothing new).
func (m *Manager) recordFollowEvents(ctx context.Context, j *arbiterv1.Job, ev string, followers map[string]store.Follow) error {
	for user, f := range followers {
		key := "follow/" + user + "/" + j.GetJobId() + "/" + ev
		m.mu.Lock()
		seen := m.seen[key]
		m.mu.Unlock()
		if seen {
			continue
		}
		if ev != EventBlocked && j.GetFinishedAt() != nil && j.GetFinishedAt().AsTime().Before(f.CreatedAt) {
			m.markSeen(key)
			continue
		}
		path := jobkind.Of(j).Path
		if path == "" {
			path = "/jobs/"
		}
		added, err := m.cfg.Store.AddFollowEvent(ctx, store.FollowEvent{User: user, JobID: j.GetJobId(), Event: ev,
			Title: title(j, ev), Path: path + url.PathEscape(j.GetJobId()), CreatedAt: m.cfg.Now()})
		if err != nil {
			return err
		}
		if added {
			m.log.Info("followed job event", zap.String("user", user), zap.String("job", j.GetJobId()), zap.String("event", ev))
		}
		m.markSeen(key)
	}
	return nil
}

// covers reports whether hook h is for the events of a job of submitter
// that followers follow: every job's (farm), the jobs its owner follows
// (followed), or its owner's own jobs.
func covers(h *store.Hook, submitter string, followers map[string]store.Follow) bool {
	switch h.Scope {
	case ScopeFarm:
		return true
	case ScopeFollowed:
		_, ok := followers[h.Owner]
		return ok
	}
	return h.Owner == submitter
}
