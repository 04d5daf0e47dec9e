package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Canonical is the one spelling of repository repo that names its mirror,
// so that the spellings of one repository share one (and count once
// toward a quota): the scheme and host in lower case, the scheme's
// default port dropped, the path's repeated and trailing slashes and
// its ".git" suffix dropped, and an scp-like ssh address
// (user@host:path) written as the ssh URL git reads it as
// (ssh://user@host/path). The fetch itself uses repo as given.
func Canonical(repo string) string {
	if !strings.Contains(repo, "://") && IsRemote(repo) {
		colon := strings.Index(repo, ":")
		repo = "ssh://" + repo[:colon] + "/" + strings.TrimPrefix(repo[colon+1:], "/")
	}
	u, err := url.Parse(repo)
	if err != nil || u.Scheme == "" {
		return repo
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == defaultPorts[u.Scheme] {
		port = ""
	}
	u.Host = host
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	if port != "" {
		u.Host += ":" + port
	}
	p := path.Clean("/" + u.Path)
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	u.Path, u.RawPath = p, ""
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22", "git": "9418"}

// FetchLimits bound one fetch into a mirror.
type FetchLimits struct {
	// MaxBytes is how much the mirror may grow during the fetch (0: no
	// bound); Which names the limit in the error ("--git-max-bytes").
	MaxBytes int64
	Which    string
	// Stall stops a fetch during which the mirror has not grown for this
	// long (0: never): a server that accepts and never answers.
	Stall time.Duration
	// Every is how often the mirror is measured (250 ms when 0).
	Every time.Duration
}

// ErrTooLarge is the cause of a fetch stopped for its size.
type ErrTooLarge struct {
	Limit int64
	Which string
}

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("stopped after more than %d bytes were fetched (the limit, %s)", e.Limit, e.Which)
}

// ErrStalled is the cause of a fetch stopped because nothing came.
type ErrStalled struct{ After time.Duration }

func (e *ErrStalled) Error() string {
	return fmt.Sprintf("stopped: nothing received for %v", e.After)
}

// Guard watches directory dir while a fetch writes into it, and cancels
// the returned context (cause ErrTooLarge or ErrStalled, read with
// context.Cause) as soon as dir has grown past lim.MaxBytes or has not
// grown for lim.Stall: a fetch run under that context is stopped while it
// streams, not after. stop ends the watch; call it once the fetch ended.
func Guard(ctx context.Context, dir string, lim FetchLimits) (guarded context.Context, stop func()) {
	every := lim.Every
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := DirSize(dir)
		last, grewAt := start, time.Now()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			size := DirSize(dir)
			if lim.MaxBytes > 0 && size-start > lim.MaxBytes {
				cancel(&ErrTooLarge{Limit: lim.MaxBytes, Which: lim.Which})
				return
			}
			if size != last {
				last, grewAt = size, time.Now()
			} else if lim.Stall > 0 && time.Since(grewAt) > lim.Stall {
				cancel(&ErrStalled{After: lim.Stall})
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		<-finished
		cancel(nil)
	}
}

// StopCause is why a guarded fetch was stopped: an *ErrTooLarge or
// *ErrStalled, or nil when the guard did not stop it.
func StopCause(ctx context.Context) error {
	cause := context.Cause(ctx)
	var big *ErrTooLarge
	var stalled *ErrStalled
	if errors.As(cause, &big) || errors.As(cause, &stalled) {
		return cause
	}
	return nil
}

// DirSize is the bytes of the regular files under dir (0 when it cannot
// be read: a mirror not made yet).
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking (git's temporary files)
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
