package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// Limits on what a Prometheus reply may make this package keep.
const (
	MaxReply  = 4 << 20
	MaxSeries = 32
	MaxPoints = 400
)

// Series is one series of a range query: its labels and its values at
// evenly spaced times (NaN-free; missing steps are left out).
type Series struct {
	Labels map[string]string
	Times  []time.Time
	Values []float64
}

// Last is the series' latest value.
func (s Series) Last() float64 { return s.Values[len(s.Values)-1] }

// Client queries one Prometheus's HTTP API.
type Client struct {
	// URL is Prometheus's base URL (http://host:port/).
	URL  string
	HTTP *http.Client
}

// QueryRange runs expr from start to end every step (at most MaxPoints
// steps) and returns its series (at most MaxSeries, by their labels).
func (c *Client) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	if step <= 0 || end.Sub(start)/step > MaxPoints {
		return nil, fmt.Errorf("query range %s..%s by %s: more than %d points", start, end, step, MaxPoints)
	}
	u, err := url.JoinPath(c.URL, "api/v1/query_range")
	if err != nil {
		return nil, fmt.Errorf("prometheus URL %q: %w", c.URL, err)
	}
	form := url.Values{"query": {expr}, "start": {unix(start)}, "end": {unix(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	req.URL.RawQuery = form.Encode()
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxReply+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxReply {
		return nil, fmt.Errorf("prometheus %s: reply over %d bytes", c.URL, MaxReply)
	}
	return parseMatrix(body, resp.Status)
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }

// parseMatrix reads a query_range reply.
func parseMatrix(body []byte, status string) ([]Series, error) {
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("prometheus reply (%s): %w", status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s %s", status, r.Error)
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("prometheus: result type %q, want matrix", r.Data.ResultType)
	}
	res := r.Data.Result
	sort.Slice(res, func(i, j int) bool { return fmt.Sprint(res[i].Metric) < fmt.Sprint(res[j].Metric) })
	var out []Series
	for _, m := range res[:min(len(res), MaxSeries)] {
		s := Series{Labels: m.Metric}
		for _, v := range m.Values[:min(len(m.Values), MaxPoints+1)] {
			sec, ok1 := v[0].(float64)
			str, ok2 := v[1].(string)
			x, err := strconv.ParseFloat(str, 64)
			if !ok1 || !ok2 || err != nil || x != x {
				continue
			}
			s.Times = append(s.Times, time.UnixMilli(int64(sec*1000)))
			s.Values = append(s.Values, x)
		}
		if len(s.Values) > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}
