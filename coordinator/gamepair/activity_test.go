package gamepair

import (
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func TestActivityCountsTheLastHour(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 30, 0, time.UTC)
	a := NewActivity(func() time.Time { return now })
	a.Note("w1", now.Add(-2*time.Hour), 100, 5) // replayed, too old
	a.Note("w1", now.Add(-59*time.Minute), 10, 1)
	a.Note("w1", now, 4, 0)
	a.Note("w2", now.Add(-30*time.Minute), 0, 1) // a lost lease
	got := a.Recent()
	if got["w1"] != (Recent{Games: 14, Incidents: 1}) || got["w2"] != (Recent{Incidents: 1}) || len(got) != 2 {
		t.Fatalf("recent %v", got)
	}
	// An hour later w1's last batch falls out of the window and w2 is
	// forgotten; a minute slot reused by a new minute starts from zero.
	now = now.Add(61 * time.Minute)
	a.Note("w1", now, 2, 0)
	if got := a.Recent(); got["w1"] != (Recent{Games: 2}) || len(got) != 1 {
		t.Fatalf("an hour later: %v", got)
	}
	var none *Activity
	none.Note("w1", now, 1, 1)
	if none.Recent() != nil {
		t.Fatal("a nil Activity counts")
	}
}

func TestIncidentEventsAreBounded(t *testing.T) {
	at := time.Unix(1, 0)
	incs := make([]*arbiterv1.Incident, 20)
	for i := range incs {
		incs[i] = &arbiterv1.Incident{GameIndex: uint32(i), Kind: arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS,
			Engine: "new", Detail: strings.Repeat("é", 400)}
	}
	evs := IncidentEvents("j", "u", "w", incs, at)
	if len(evs) != maxIncidentEvents+1 {
		t.Fatalf("%d events", len(evs))
	}
	if d := evs[0].Detail; !strings.HasPrefix(d, "game 0: time_loss (new): é") || len(d) > maxEventDetail+len("…") || evs[0].Kind != EvIncident {
		t.Fatalf("first event %q (%d bytes)", d, len(d))
	}
	if d := evs[maxIncidentEvents].Detail; d != "and 4 more incidents in this batch" {
		t.Fatalf("last event %q", d)
	}
	if IncidentCount(map[string]int64{IncTimeLoss: 2, IncOverrun: 3, IncCrash: 1}) != 3 {
		t.Fatal("overruns counted as incidents")
	}
}
