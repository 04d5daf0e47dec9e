package dashgen

import "fmt"

// builder lays panels out left to right in rows of 24 columns.
type builder struct {
	d      *Dashboard
	x, y   int
	rowH   int
	nextID int
}

func newDashboard(uid, title, description string) *builder {
	return &builder{d: &Dashboard{
		UID: uid, Title: title, Description: description,
		Tags: []string{"arbiter"}, Timezone: "browser", GraphTooltip: 1, Refresh: "30s",
		SchemaVersion: 39, Version: 1, Time: TimeRange{From: "now-1h", To: "now"},
		Templating:  Templating{List: []Variable{}},
		Annotations: Annotations{List: []any{}},
		Links: []Link{{Title: "Arbiter dashboards", Type: "dashboards", Tags: []string{"arbiter"},
			AsDropdown: true, IncludeVars: false, KeepTime: true}},
	}}
}

// row starts a new row with a title.
func (b *builder) row(title string) {
	b.newline()
	b.nextID++
	f := false
	b.d.Panels = append(b.d.Panels, &Panel{ID: b.nextID, Type: "row", Title: title, Collapsed: &f,
		GridPos: GridPos{H: 1, W: 24, X: 0, Y: b.y}, Panels: []*Panel{}})
	b.y++
}

func (b *builder) newline() {
	if b.x > 0 {
		b.y += b.rowH
		b.x, b.rowH = 0, 0
	}
}

// add places p with width w and height h.
func (b *builder) add(p *Panel, w, h int) *Panel {
	if b.x+w > 24 {
		b.newline()
	}
	b.nextID++
	p.ID = b.nextID
	p.GridPos = GridPos{H: h, W: w, X: b.x, Y: b.y}
	p.Datasource = prom
	for i := range p.Targets {
		p.Targets[i].RefID = string(rune('A' + i))
		p.Targets[i].Datasource = prom
		if !p.Targets[i].Instant {
			p.Targets[i].Range = true
		}
	}
	if p.FieldConfig == nil {
		p.FieldConfig = &FieldConfig{}
	}
	if p.FieldConfig.Overrides == nil {
		p.FieldConfig.Overrides = []Override{}
	}
	if p.FieldConfig.Defaults.Mappings == nil {
		p.FieldConfig.Defaults.Mappings = []any{}
	}
	b.d.Panels = append(b.d.Panels, p)
	b.x += w
	b.rowH = max(b.rowH, h)
	return p
}

// variable adds a multi-value query variable over label's values of metric.
func (b *builder) variable(name, label, metric string) {
	q := fmt.Sprintf("label_values(%s, %s)", metric, name)
	b.d.Templating.List = append(b.d.Templating.List, Variable{
		Name: name, Label: label, Type: "query", Datasource: prom, Definition: q,
		Query:   VariableQuery{Query: q, RefID: "PrometheusVariableQueryEditor-VariableQuery"},
		Refresh: 2, IncludeAll: true, Multi: true, AllValue: ".*", Sort: 1,
	})
}

func (b *builder) build() *Dashboard { return b.d }

// q is a range query with a legend.
func q(expr, legend string) Target { return Target{Expr: expr, LegendFormat: legend} }

func ptr[T any](v T) *T { return &v }

// timeseries is a line chart.
func timeseries(title, desc, unit string, targets ...Target) *Panel {
	return &Panel{Type: "timeseries", Title: title, Description: desc, Targets: targets,
		FieldConfig: &FieldConfig{Defaults: FieldDefaults{Unit: unit,
			Custom: map[string]any{"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never", "spanNulls": true}}},
		Options: map[string]any{
			"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		}}
}

// stacked is a stacked area chart.
func stacked(title, desc, unit string, targets ...Target) *Panel {
	p := timeseries(title, desc, unit, targets...)
	p.FieldConfig.Defaults.Custom["stacking"] = map[string]any{"mode": "normal", "group": "A"}
	p.FieldConfig.Defaults.Custom["fillOpacity"] = 40
	return p
}

// stat shows the last value, coloured by thresholds (base colour first,
// then value/colour pairs).
func stat(title, desc, unit string, t Target, base string, steps ...any) *Panel {
	th := &Thresholds{Mode: "absolute", Steps: []Step{{Color: base}}}
	for i := 0; i+1 < len(steps); i += 2 {
		th.Steps = append(th.Steps, Step{Value: ptr(toFloat(steps[i])), Color: steps[i+1].(string)})
	}
	return &Panel{Type: "stat", Title: title, Description: desc, Targets: []Target{t},
		FieldConfig: &FieldConfig{Defaults: FieldDefaults{Unit: unit, Thresholds: th, Color: map[string]any{"mode": "thresholds"}}},
		Options: map[string]any{
			"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
			"colorMode":     "background", "graphMode": "area", "justifyMode": "auto", "textMode": "auto",
			"orientation": "auto",
		}}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	panic(fmt.Sprintf("threshold %v", v))
}

// bars is a bar gauge of the latest values (one bar per series).
func bars(title, desc, unit string, targets ...Target) *Panel {
	for i := range targets {
		targets[i].Instant = true
	}
	return &Panel{Type: "bargauge", Title: title, Description: desc, Targets: targets,
		FieldConfig: &FieldConfig{Defaults: FieldDefaults{Unit: unit, Min: ptr(0.0), Color: map[string]any{"mode": "palette-classic"}}},
		Options: map[string]any{
			"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
			"orientation":   "horizontal", "displayMode": "gradient", "showUnfilled": true,
		}}
}

// table lists the latest values of an instant query, one row per series.
func table(title, desc string, t Target) *Panel {
	t.Instant, t.Format = true, "table"
	return &Panel{Type: "table", Title: title, Description: desc, Targets: []Target{t},
		Options: map[string]any{"showHeader": true, "cellHeight": "sm"}}
}
