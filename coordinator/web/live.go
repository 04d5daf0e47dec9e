package web

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Live updates. A page that changes while work runs names a live URL, its
// own with ?live=1; the page's script (static/live.js) opens it as an
// EventSource and, at each "update" event, replaces the page's live region
// (template "live") with the event's HTML. The server renders that region
// again when the page's job changes (core.Changed) or, for lists and
// workers, every LiveInterval, and sends it only when it differs from the
// last one sent. Without JavaScript nothing of this runs and the page is
// complete as served.

// minLiveGap coalesces bursts of changes (a batch a second per worker).
const minLiveGap = 300 * time.Millisecond

func (s *Server) stream(w http.ResponseWriter, r *http.Request, vw viewer, fn pageFunc) {
	select {
	case <-s.closing:
		s.fail(w, r, vw, pageError(http.StatusServiceUnavailable, "Stopping", "The coordinator is stopping: no live updates."))
		return
	default:
	}
	select {
	case s.live <- struct{}{}:
		defer func() { <-s.live }()
	default:
		s.fail(w, r, vw, pageError(http.StatusServiceUnavailable, "Busy", "%d live pages are open, the most this coordinator serves; reload later.",
			s.cfg.MaxLiveStreams))
		return
	}
	// Build once before answering, so that an unknown job is a 404 and
	// not an empty stream.
	v, err := s.build(nil, r, vw, fn)
	if err != nil {
		s.fail(w, r, vw, err)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives a server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("retry: 3000\n\n")); err != nil {
		return
	}
	rc.Flush()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.MaxLiveDuration)
	defer cancel()
	var last []byte
	first := true
	for {
		// Watch before building, so that a change while building is seen.
		var changed <-chan struct{}
		if len(v.watch) > 0 {
			changed, _ = s.cfg.Core.Changed(v.watch[0])
		}
		if !first {
			// The credential is resolved again: a revoked one stops here.
			vw = s.viewerOf(r)
			if err := s.mayRead(vw); err != nil {
				writeEvent(w, "end", "")
				rc.Flush()
				return
			}
			if v, err = s.build(nil, r, vw, fn); err != nil {
				writeEvent(w, "end", "")
				rc.Flush()
				return
			}
		}
		first = false
		frag, err := s.fragment(v)
		if err != nil {
			s.log.Error("rendering a live update", zap.String("path", r.URL.Path), zap.Error(err))
			return
		}
		if !bytes.Equal(frag, last) {
			if err := writeEvent(w, "update", string(frag)); err != nil {
				return
			}
			rc.Flush()
			last = frag
		}
		if v.Live == "" {
			// The page stopped changing (its job ended): the last update
			// is sent.
			writeEvent(w, "end", "")
			rc.Flush()
			return
		}
		every := s.cfg.LiveInterval
		if changed != nil {
			every = max(every, 5*time.Second) // ages ("12 s ago") move on
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.closing:
			t.Stop()
			return
		case <-changed:
		case <-t.C:
		}
		t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-time.After(minLiveGap):
		}
	}
}

// fragment renders a page's live region.
func (s *Server) fragment(v *view) ([]byte, error) {
	var buf bytes.Buffer
	err := s.pages[v.tmpl].ExecuteTemplate(&buf, "live", v)
	return buf.Bytes(), err
}

// writeEvent writes one server-sent event; data may span lines.
func writeEvent(w http.ResponseWriter, event, data string) error {
	var b strings.Builder
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteByte('\n')
	// A carriage return would end an event line too.
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write([]byte(b.String()))
	return err
}
