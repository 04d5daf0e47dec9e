package protocol

import (
	"testing"
	"time"
)

func TestPaceQuietPeriod(t *testing.T) {
	var p pace
	for i := 0; i < len(p.recent)-1; i++ {
		p.record(20 * time.Millisecond)
		if q := p.quiet(); q != 0 {
			t.Fatalf("quiet after %d searches = %v, want 0 until %d are on record", i+1, q, len(p.recent))
		}
	}
	p.record(10 * time.Millisecond)
	if q, want := p.quiet(), 10*time.Millisecond*quietShare/100; q != want {
		t.Errorf("quiet = %v, want %d%% of the shortest search (%v)", q, quietShare, want)
	}
	// The shortest leaves the window after len(recent) more searches.
	for range p.recent {
		p.record(30 * time.Millisecond)
	}
	if q, want := p.quiet(), 30*time.Millisecond*quietShare/100; q != want {
		t.Errorf("quiet = %v, want %v", q, want)
	}
	for range p.recent {
		p.record(time.Minute)
	}
	if q := p.quiet(); q != maxQuiet {
		t.Errorf("quiet after long searches = %v, want the cap %v", q, maxQuiet)
	}
}
