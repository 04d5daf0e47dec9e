package epd

// The --json report of `arbiter epd` (docs/json/epd.schema.json).

// ReportJSON is the whole run.
type ReportJSON struct {
	Suite     string           `json:"suite"`
	Limit     string           `json:"limit"`
	Positions int              `json:"positions"`
	Engines   []EngineRowJSON  `json:"engines"`
	Results   []ResultJSONLine `json:"results"`
}

// EngineRowJSON is one engine's totals.
type EngineRowJSON struct {
	Name             string   `json:"name"`
	Searched         int      `json:"searched"`
	Solved           int      `json:"solved"`
	Errors           int      `json:"errors"`
	OnlySolver       int      `json:"only_solver"`
	MeanSolveSeconds float64  `json:"mean_solve_seconds"`
	MeanSolveDepth   float64  `json:"mean_solve_depth"`
	Nodes            int64    `json:"nodes"`
	SolvedPercent    float64  `json:"solved_percent"`
	SolvedIDs        []string `json:"solved_ids"`
}

// ResultJSONLine is one engine's search of one position.
type ResultJSONLine struct {
	Engine       string   `json:"engine"`
	ID           string   `json:"id"`
	Line         int      `json:"line"`
	Best         []string `json:"bm"`
	Avoid        []string `json:"am"`
	Solved       bool     `json:"solved"`
	Move         string   `json:"move"`
	SolveSeconds *float64 `json:"solve_seconds,omitempty"`
	SolveDepth   *int     `json:"solve_depth,omitempty"`
	Depth        int      `json:"depth"`
	Nodes        int64    `json:"nodes"`
	ScoreCP      *int     `json:"score_cp,omitempty"`
	ScoreMate    *int     `json:"score_mate,omitempty"`
	Seconds      float64  `json:"seconds"`
	Error        string   `json:"error,omitempty"`
}

func reportJSON(cfg RunConfig, names []string, rows []EngineRow, results []Result) ReportJSON {
	rep := ReportJSON{Suite: cfg.Suite.Name, Limit: cfg.Limit.String(), Positions: len(cfg.Suite.Positions),
		Engines: make([]EngineRowJSON, len(rows)), Results: make([]ResultJSONLine, 0, len(results))}
	for i, r := range rows {
		row := EngineRowJSON{Name: r.Engine, Searched: r.Positions, Solved: r.Solved, Errors: r.Errors, OnlySolver: r.OnlySolver,
			MeanSolveSeconds: r.MeanSolveTime.Seconds(), MeanSolveDepth: r.MeanSolveDepth, Nodes: r.Nodes, SolvedIDs: []string{}}
		if r.Positions > 0 {
			row.SolvedPercent = 100 * float64(r.Solved) / float64(r.Positions)
		}
		rep.Engines[i] = row
	}
	for _, r := range results {
		p := &cfg.Suite.Positions[r.Position]
		line := ResultJSONLine{Engine: names[r.Engine], ID: p.ID, Line: p.Line, Best: nonNil(p.Best), Avoid: nonNil(p.Avoid),
			Solved: r.Solved, Move: r.Move, Depth: r.Depth, Nodes: r.Nodes, Seconds: r.Elapsed.Seconds(), Error: r.Error}
		if r.Solved {
			secs, depth := r.SolveTime.Seconds(), r.SolveDepth
			line.SolveSeconds, line.SolveDepth = &secs, &depth
			rep.Engines[r.Engine].SolvedIDs = append(rep.Engines[r.Engine].SolvedIDs, p.ID)
		}
		if r.HasScore {
			if r.Score.Mate != 0 {
				m := r.Score.Mate
				line.ScoreMate = &m
			} else {
				cp := r.Score.CP
				line.ScoreCP = &cp
			}
		}
		rep.Results = append(rep.Results, line)
	}
	return rep
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
