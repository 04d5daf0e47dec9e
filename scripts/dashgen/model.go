// Package dashgen generates the Grafana dashboards in dashboards/ from Go:
// a small typed model of Grafana's dashboard JSON (only what the Arbiter
// dashboards use) and the four dashboards themselves. The committed JSON is
// kept current by a golden test (`go test ./scripts/dashgen -update`
// rewrites it), and every query is run against a real Prometheus scraping a
// running cluster by TestPanelsAgainstPrometheus.
//
// A hand-written model rather than grafana-foundation-sdk: it keeps the
// generated JSON small and stable, adds no dependency, and the dashboards
// only need timeseries, stat, bar gauge and table panels.
package dashgen

import (
	"bytes"
	"encoding/json"
)

// DatasourceUID is the Prometheus datasource provisioned by
// deploy/grafana/provisioning/datasources/prometheus.yaml.
const DatasourceUID = "prometheus"

// Datasource references a Grafana datasource.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

var prom = &Datasource{Type: "prometheus", UID: DatasourceUID}

// Dashboard is Grafana's dashboard model (schema 39).
type Dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	Description   string      `json:"description,omitempty"`
	Tags          []string    `json:"tags"`
	Timezone      string      `json:"timezone"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"`
	Refresh       string      `json:"refresh"`
	SchemaVersion int         `json:"schemaVersion"`
	Version       int         `json:"version"`
	Time          TimeRange   `json:"time"`
	Templating    Templating  `json:"templating"`
	Annotations   Annotations `json:"annotations"`
	Links         []Link      `json:"links"`
	Panels        []*Panel    `json:"panels"`
}

// TimeRange is the default time range.
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Templating holds the dashboard variables.
type Templating struct {
	List []Variable `json:"list"`
}

// Annotations (none besides Grafana's built-in).
type Annotations struct {
	List []any `json:"list"`
}

// Link links to the other Arbiter dashboards (by tag).
type Link struct {
	Title       string   `json:"title"`
	Type        string   `json:"type"`
	Tags        []string `json:"tags"`
	AsDropdown  bool     `json:"asDropdown"`
	IncludeVars bool     `json:"includeVars"`
	KeepTime    bool     `json:"keepTime"`
}

// Variable is a query variable over a label's values.
type Variable struct {
	Name       string        `json:"name"`
	Label      string        `json:"label"`
	Type       string        `json:"type"`
	Datasource *Datasource   `json:"datasource"`
	Definition string        `json:"definition"`
	Query      VariableQuery `json:"query"`
	Refresh    int           `json:"refresh"`
	IncludeAll bool          `json:"includeAll"`
	Multi      bool          `json:"multi"`
	AllValue   string        `json:"allValue"`
	Sort       int           `json:"sort"`
	Current    struct{}      `json:"current"`
}

// VariableQuery is the Prometheus variable query.
type VariableQuery struct {
	Query string `json:"query"`
	RefID string `json:"refId"`
}

// Panel is one panel (or a row, with Type "row").
type Panel struct {
	ID          int          `json:"id"`
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	GridPos     GridPos      `json:"gridPos"`
	Datasource  *Datasource  `json:"datasource,omitempty"`
	Targets     []Target     `json:"targets,omitempty"`
	FieldConfig *FieldConfig `json:"fieldConfig,omitempty"`
	Options     any          `json:"options,omitempty"`
	Collapsed   *bool        `json:"collapsed,omitempty"`
	Panels      []*Panel     `json:"panels,omitempty"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Target is one PromQL query of a panel.
type Target struct {
	RefID        string      `json:"refId"`
	Datasource   *Datasource `json:"datasource"`
	Expr         string      `json:"expr"`
	LegendFormat string      `json:"legendFormat,omitempty"`
	Instant      bool        `json:"instant,omitempty"`
	Range        bool        `json:"range"`
	Format       string      `json:"format,omitempty"`
}

// FieldConfig sets units, ranges and colours.
type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []Override    `json:"overrides"`
}

// FieldDefaults are the panel-wide field settings.
type FieldDefaults struct {
	Unit       string         `json:"unit,omitempty"`
	Min        *float64       `json:"min,omitempty"`
	Max        *float64       `json:"max,omitempty"`
	Decimals   *int           `json:"decimals,omitempty"`
	Color      map[string]any `json:"color,omitempty"`
	Thresholds *Thresholds    `json:"thresholds,omitempty"`
	Custom     map[string]any `json:"custom,omitempty"`
	Mappings   []any          `json:"mappings"`
}

// Thresholds colour values by steps.
type Thresholds struct {
	Mode  string `json:"mode"`
	Steps []Step `json:"steps"`
}

// Step is one threshold (Value nil: the base colour).
type Step struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// Override changes field settings of the series a matcher selects.
type Override struct {
	Matcher    Matcher    `json:"matcher"`
	Properties []Property `json:"properties"`
}

// Matcher selects fields.
type Matcher struct {
	ID      string `json:"id"`
	Options string `json:"options"`
}

// Property is one overridden setting.
type Property struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// JSON renders a dashboard as Grafana reads it: indented, stable, ending in
// a newline.
func (d *Dashboard) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
