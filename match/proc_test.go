package match

import (
	"testing"
	"time"
)

func TestOnlyClocklessSearchesArePaced(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want bool
	}{
		{Limits{Nodes: 5000}, true},
		{Limits{Depth: 8}, true},
		{Limits{Base: time.Second, Inc: 10 * time.Millisecond}, false},
		{Limits{Base: time.Second, Nodes: 5000}, false},
		{Limits{MoveTime: 50 * time.Millisecond}, false},
		{Limits{MoveTime: 50 * time.Millisecond, Depth: 8}, false},
	} {
		if got := c.l.Clockless(); got != c.want {
			t.Errorf("%+v.Clockless() = %v, want %v", c.l, got, c.want)
		}
	}
}
