package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtool runs promtool in deploy/prometheus, skipping the test only when
// promtool is not installed (Debian package `prometheus`, which .ci/run
// installs).
func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found on PATH: install Debian's `prometheus` package to check the alert rules")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join(deployDir(t), "prometheus")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
}

func TestPromtoolCheckRules(t *testing.T) { promtool(t, "check", "rules", "alerts.yml") }

func TestPromtoolTestRules(t *testing.T) { promtool(t, "test", "rules", "alerts_test.yml") }

func TestPromtoolCheckConfig(t *testing.T) {
	// Also checks the rule files it loads (alerts.yml, relative to it).
	promtool(t, "check", "config", "prometheus.yml")
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert  string `json:"alert"`
			Record string `json:"record"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

var metricNameRE = regexp.MustCompile(`\b(arbiter_[a-z0-9_]+|grpc_server_[a-z0-9_]+)\b`)

// TestAlertsUseContractMetrics: every metric the rules query is in the
// contract (METRICS.md) with the labels the rules use, so the metrics half
// of issue 7 cannot drift from the alerts unnoticed.
func TestAlertsUseContractMetrics(t *testing.T) {
	dir := filepath.Join(deployDir(t), "prometheus")
	var rf ruleFile
	readYAML(t, filepath.Join(dir, "alerts.yml"), &rf)
	doc, err := os.ReadFile(filepath.Join(dir, "METRICS.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Names in the first column of the contract tables: | `name` | type | labels | ...
	contract := map[string]string{}
	histograms := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 5 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cols[1]), "`")
		if metricNameRE.MatchString(name) && metricNameRE.FindString(name) == name {
			contract[name] = cols[3] // the labels column
			histograms[name] = strings.TrimSpace(cols[2]) == "histogram"
		}
	}
	if len(contract) < 20 {
		t.Fatalf("METRICS.md: found %d metrics in its tables; is the table format intact?", len(contract))
	}
	labelRE := regexp.MustCompile(`([a-z_]+)\s*(=~|!=|=)\s*"([^"]*)"`)
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			for _, m := range metricNameRE.FindAllStringIndex(r.Expr, -1) {
				name := r.Expr[m[0]:m[1]]
				labels, ok := contract[name]
				if !ok {
					// A histogram's series: name_bucket (with le), name_sum, name_count.
					for _, suffix := range []string{"_bucket", "_sum", "_count"} {
						if base, cut := strings.CutSuffix(name, suffix); cut && histograms[base] {
							labels, ok = contract[base]+" `le`", true
						}
					}
				}
				if !ok {
					t.Errorf("rule %s%s uses %s, which METRICS.md does not define", r.Alert, r.Record, name)
					continue
				}
				n++
				// Label matchers right after the name: name{l="v", ...}.
				if rest := r.Expr[m[1]:]; strings.HasPrefix(rest, "{") {
					sel := rest[:strings.Index(rest, "}")+1]
					for _, lm := range labelRE.FindAllStringSubmatch(sel, -1) {
						if !strings.Contains(labels, "`"+lm[1]+"`") {
							t.Errorf("rule %s%s matches label %s of %s, which METRICS.md does not list for it", r.Alert, r.Record, lm[1], name)
						}
						if lm[2] == "=" && !strings.Contains(string(doc), "`"+lm[3]+"`") {
							t.Errorf("rule %s%s matches %s=%q, a value METRICS.md does not define", r.Alert, r.Record, lm[1], lm[3])
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no arbiter_ metric found in the rules")
	}
}

// TestEveryAlertTested: each alert in alerts.yml has a promtool unit test
// case where it fires and one where it stays quiet.
func TestEveryAlertTested(t *testing.T) {
	dir := filepath.Join(deployDir(t), "prometheus")
	var rf ruleFile
	readYAML(t, filepath.Join(dir, "alerts.yml"), &rf)
	var tf struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	readYAML(t, filepath.Join(dir, "alerts_test.yml"), &tf)
	if !slices.Contains(tf.RuleFiles, "alerts.yml") {
		t.Errorf("alerts_test.yml does not test alerts.yml")
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tf.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	var alerts []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts = append(alerts, r.Alert)
			}
		}
	}
	for _, want := range []string{"ArbiterNoWorkers", "ArbiterJobStalled", "ArbiterLeaseExpiryStorm", "ArbiterVerificationMismatch", "ArbiterTimeLossRateRising"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("alerts.yml has no alert %s", want)
		}
	}
	for _, a := range alerts {
		if !fires[a] || !quiet[a] {
			t.Errorf("alert %s: tested firing %v, tested quiet %v; want both", a, fires[a], quiet[a])
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
