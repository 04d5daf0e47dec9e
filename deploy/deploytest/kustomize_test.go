package deploytest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const componentLabel = "app.kubernetes.io/component"

// rendered is a kustomization's output, every object strictly decoded into
// its k8s.io/api type.
type rendered struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	pvcs            []*corev1.PersistentVolumeClaim
	secrets         []*corev1.Secret
	hpas            []*autoscalingv2.HorizontalPodAutoscaler
	namespaces      []*corev1.Namespace
	serviceAccounts []*corev1.ServiceAccount
	objects         []metav1.Object
	kinds           []string
}

// kinds maps apiVersion/kind to a constructor of its typed object and the
// slice it goes in. Any other kind in the output fails the test.
func (r *rendered) add(apiVersion, kind string, y []byte) error {
	var obj metav1.Object
	decode := func(v any) error {
		// UnmarshalStrict: unknown and duplicate fields are errors.
		return yaml.UnmarshalStrict(y, v)
	}
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		if err := decode(o); err != nil {
			return err
		}
		r.deployments, obj = append(r.deployments, o), o
	case "v1 Service":
		o := &corev1.Service{}
		if err := decode(o); err != nil {
			return err
		}
		r.services, obj = append(r.services, o), o
	case "v1 PersistentVolumeClaim":
		o := &corev1.PersistentVolumeClaim{}
		if err := decode(o); err != nil {
			return err
		}
		r.pvcs, obj = append(r.pvcs, o), o
	case "v1 Secret":
		o := &corev1.Secret{}
		if err := decode(o); err != nil {
			return err
		}
		r.secrets, obj = append(r.secrets, o), o
	case "autoscaling/v2 HorizontalPodAutoscaler":
		o := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := decode(o); err != nil {
			return err
		}
		r.hpas, obj = append(r.hpas, o), o
	case "v1 Namespace":
		o := &corev1.Namespace{}
		if err := decode(o); err != nil {
			return err
		}
		r.namespaces, obj = append(r.namespaces, o), o
	case "v1 ServiceAccount":
		o := &corev1.ServiceAccount{}
		if err := decode(o); err != nil {
			return err
		}
		r.serviceAccounts, obj = append(r.serviceAccounts, o), o
	default:
		return fmt.Errorf("unexpected object %s %s (add it to the test's decoder)", apiVersion, kind)
	}
	r.objects = append(r.objects, obj)
	r.kinds = append(r.kinds, kind)
	return nil
}

// render runs kustomize (krusty, the engine of `kubectl kustomize`) on
// deploy/kubernetes/<dir> from the real file system.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	path := filepath.Join(deployDir(t), "kubernetes", dir)
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), path)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := &rendered{}
	for _, res := range m.Resources() {
		y, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		gvk := res.GetGvk()
		if err := r.add(gvk.ApiVersion(), gvk.Kind, y); err != nil {
			t.Errorf("%s %s/%s: %v", dir, gvk.Kind, res.GetName(), err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return r
}

func TestKustomizeBase(t *testing.T) {
	r := render(t, "base")
	checkCluster(t, r, "")
	// The coordinator's bootstrap admin token and pool a's worker token,
	// both placeholders.
	if len(r.secrets) != 2 {
		t.Errorf("base: want 2 generated Secrets (arbiter-token, arbiter-worker-token), got %v", secretNames(r))
	}
	for _, prefix := range []string{"arbiter-token-", "arbiter-worker-token-"} {
		if s := secretWithPrefix(r, prefix); s == nil || !strings.HasPrefix(string(s.Data["token"]), "REPLACE-ME") {
			t.Errorf("base: want a generated Secret %s<hash> whose token is a REPLACE-ME placeholder, got %v", prefix, secretNames(r))
		}
	}
	if n := len(workerDeployments(r)); n != 1 {
		t.Errorf("base: %d worker pools, want 1", n)
	}
	checkImage(t, r, "ghcr.io/arbiter-chess/arbiter:latest")
}

func TestKustomizeOverlayExample(t *testing.T) {
	const ns = "arbiter-example"
	r := render(t, "overlays/example")
	checkCluster(t, r, ns)
	if len(r.namespaces) != 1 || r.namespaces[0].Name != ns {
		t.Errorf("overlay: want the Namespace %s", ns)
	} else if r.namespaces[0].Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("overlay namespace does not enforce the restricted pod security standard")
	}
	for i, o := range r.objects {
		if r.kinds[i] != "Namespace" && o.GetNamespace() != ns {
			t.Errorf("%s %s in namespace %q, want %s", r.kinds[i], o.GetName(), o.GetNamespace(), ns)
		}
	}
	// The overlay's generated token Secrets replace the base placeholders
	// (admin and pool a) and add pool b's; their names carry a content
	// hash and every reference follows them.
	base := render(t, "base")
	if len(r.secrets) != 3 {
		t.Errorf("overlay: want 3 generated Secrets (admin, pool a, pool b tokens), got %v", secretNames(r))
	}
	for _, prefix := range []string{"arbiter-token-", "arbiter-worker-token-", "arbiter-worker-token-b-"} {
		s := secretWithPrefix(r, prefix)
		if s == nil || s.Data["token"] == nil {
			t.Errorf("overlay: want a generated Secret %s<hash> with data.token, got %v", prefix, secretNames(r))
		} else if findSecret(base, s.Name) != nil {
			t.Errorf("overlay Secret %s has the base's name: the placeholder token was not replaced", s.Name)
		}
	}
	checkImage(t, r, "ghcr.io/arbiter-chess/arbiter:v0.1.0")
	// Two pools, so that perft units are verified across identities.
	ws := workerDeployments(r)
	if len(ws) != 2 {
		t.Errorf("overlay: %d worker pools, want 2 (verification needs two identities)", len(ws))
	}
	for _, w := range ws {
		c := w.Spec.Template.Spec.Containers[0]
		if v, _ := flagValue(c.Args, "threads"); v != "4" {
			t.Errorf("overlay %s --threads=%s, want 4", w.Name, v)
		}
	}
	for _, h := range r.hpas {
		if h.Spec.MaxReplicas != 32 {
			t.Errorf("overlay HPA %s maxReplicas %d, want 32", h.Name, h.Spec.MaxReplicas)
		}
	}
	if len(r.pvcs) == 1 {
		if q := r.pvcs[0].Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("50Gi")) != 0 {
			t.Errorf("overlay PVC size %s, want 50Gi", q.String())
		}
	}
}

// checkCluster checks the invariants every rendering must keep: one
// coordinator on SQLite.
func checkCluster(t *testing.T, r *rendered, ns string) { checkClusterOf(t, r, ns, false) }

// checkClusterOf checks a rendering with one coordinator on SQLite, or
// (ha) several on one PostgreSQL.
func checkClusterOf(t *testing.T, r *rendered, ns string, ha bool) {
	t.Helper()
	for i, o := range r.objects {
		if errs := validation.IsDNS1123Subdomain(o.GetName()); len(errs) > 0 {
			t.Errorf("%s name %q: %v", r.kinds[i], o.GetName(), errs)
		}
		for k, v := range o.GetLabels() {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				t.Errorf("%s %s label %s=%s: %v", r.kinds[i], o.GetName(), k, v, errs)
			}
		}
	}
	coord := byComponent(t, r.deployments, "coordinator")
	workers := workerDeployments(r)
	if coord == nil || len(workers) == 0 {
		t.Fatalf("want a coordinator and at least one worker Deployment")
	}
	for _, d := range append([]*appsv1.Deployment{coord}, workers...) {
		checkPodTemplate(t, r, d)
	}
	// No Deployment selects another's pods (two pools of workers differ
	// in their pool label).
	for _, a := range r.deployments {
		sel, _ := metav1.LabelSelectorAsSelector(a.Spec.Selector)
		for _, b := range r.deployments {
			if a != b && sel != nil && sel.Matches(labels.Set(b.Spec.Template.Labels)) {
				t.Errorf("Deployment %s selects the pods of %s", a.Name, b.Name)
			}
		}
	}

	t.Run("coordinator", func(t *testing.T) {
		switch n := coord.Spec.Replicas; {
		case ha && (n == nil || *n != 3):
			t.Errorf("coordinator replicas %s, want 3 (one leader, two standing by)", ptrString(n))
		case !ha && (n == nil || *n != 1):
			t.Errorf("coordinator replicas %s, want 1 (one writer of the store)", ptrString(n))
		}
		if !ha && coord.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("coordinator strategy %q, want Recreate (the old pod must release the volume first)", coord.Spec.Strategy.Type)
		}
		if ha {
			// Replaced one at a time: never all standing down at once.
			if s := coord.Spec.Strategy; s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
				s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 1 {
				t.Errorf("coordinator strategy %+v, want RollingUpdate with maxUnavailable 1", s)
			}
		}
		pod := coord.Spec.Template.Spec
		c := pod.Containers[0]
		if len(c.Args) == 0 || c.Args[0] != "coordinator" {
			t.Fatalf("coordinator args %q", c.Args)
		}
		listen, _ := flagValue(c.Args, "listen")
		httpAddr, _ := flagValue(c.Args, "http")
		data, _ := flagValue(c.Args, "data")
		grpcPort, httpPort := namedPort(t, c, "grpc"), namedPort(t, c, "http")
		if portOf(listen) != itoa(grpcPort) || portOf(httpAddr) != itoa(httpPort) {
			t.Errorf("coordinator --listen=%s --http=%s, container ports grpc %d http %d", listen, httpAddr, grpcPort, httpPort)
		}

		// Data on the PVC.
		vol := volumeAt(pod, c, data)
		if vol == nil || vol.PersistentVolumeClaim == nil {
			t.Errorf("coordinator --data=%s is not on a PersistentVolumeClaim", data)
		} else if pvc := findPVC(r, vol.PersistentVolumeClaim.ClaimName); pvc == nil {
			t.Errorf("coordinator claims PVC %q, which is not rendered", vol.PersistentVolumeClaim.ClaimName)
		} else {
			want := corev1.ReadWriteOnce
			if ha {
				// The blobs every coordinator reads and writes.
				want = corev1.ReadWriteMany
			}
			if len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != want {
				t.Errorf("PVC %s access modes %v, want [%s]", pvc.Name, pvc.Spec.AccessModes, want)
			}
			if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.IsZero() {
				t.Errorf("PVC %s requests no storage", pvc.Name)
			}
		}

		// The kubelet's gRPC probe cannot speak TLS, and the gRPC port
		// serves TLS only: readiness and startup are GET /readyz on the
		// HTTP port; liveness is /healthz.
		// With several coordinators a follower is ready only while a
		// leader answers it: it must start without one (startup on
		// /healthz).
		startPath := "/readyz"
		if ha {
			startPath = "/healthz"
		}
		for what, p := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
			want := "/readyz"
			if what == "startupProbe" {
				want = startPath
			}
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want || resolvePort(t, c, p.HTTPGet.Port) != httpPort {
				t.Errorf("coordinator %s %+v: want GET %s on port %d", what, p, want, httpPort)
			}
		}
		if ha {
			checkStoreFromSecret(t, r, c)
			// Followers relay to the leader's pod address over TLS;
			// the shared certificate names the Service, not pods.
			if !hasArgPrefix(c.Args, "--forward-server-name=arbiter-coordinator") {
				t.Errorf("coordinator args %q: want --forward-server-name=arbiter-coordinator (followers check the leader's certificate, made for the Service's name, not its pod address)", c.Args)
			}
		}
		if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || resolvePort(t, c, p.HTTPGet.Port) != httpPort {
			t.Errorf("coordinator livenessProbe %+v: want GET /healthz on port %d", p, httpPort)
		}
		checkScrape(t, coord, httpPort)

		// A Service selecting the coordinator (and only it) with both ports.
		var svc *corev1.Service
		for _, s := range r.services {
			if len(s.Spec.Selector) == 0 {
				continue // selects no pods (the database's ExternalName)
			}
			sel := labels.SelectorFromSet(s.Spec.Selector)
			if sel.Matches(labels.Set(coord.Spec.Template.Labels)) {
				svc = s
				for _, w := range workers {
					if sel.Matches(labels.Set(w.Spec.Template.Labels)) {
						t.Errorf("Service %s selects the pods of %s too", s.Name, w.Name)
					}
				}
			}
		}
		if svc == nil {
			t.Fatalf("no Service selects the coordinator pods")
		}
		for _, want := range []struct {
			name string
			port int32
		}{{"grpc", grpcPort}, {"http", httpPort}} {
			found := false
			for _, sp := range svc.Spec.Ports {
				if sp.Name == want.name && sp.Port == want.port && resolvePort(t, c, sp.TargetPort) == want.port {
					found = true
				}
			}
			if !found {
				t.Errorf("Service %s has no port %s %d -> container %d", svc.Name, want.name, want.port, want.port)
			}
		}
		if errs := validation.IsDNS1035Label(svc.Name); len(errs) > 0 {
			t.Errorf("Service name %q: %v", svc.Name, errs)
		}

		// Workers dial this Service's gRPC port.
		for _, w := range workers {
			wargs := w.Spec.Template.Spec.Containers[0].Args
			if target, _ := flagValue(wargs, "coordinator"); target != svc.Name+":"+itoa(grpcPort) {
				t.Errorf("%s --coordinator=%s, want %s:%d", w.Name, target, svc.Name, grpcPort)
			}
		}
	})

	for _, worker := range workers {
		t.Run(worker.Name, func(t *testing.T) { checkWorkerPool(t, r, worker) })
	}
}

// checkWorkerPool checks one worker Deployment and its autoscaler.
func checkWorkerPool(t *testing.T, r *rendered, worker *appsv1.Deployment) {
	t.Helper()
	pod := worker.Spec.Template.Spec
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "worker" {
		t.Fatalf("worker args %q", c.Args)
	}
	httpAddr, _ := flagValue(c.Args, "http")
	httpPort := namedPort(t, c, "http")
	if portOf(httpAddr) != itoa(httpPort) {
		t.Errorf("worker --http=%s, container port http %d", httpAddr, httpPort)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || resolvePort(t, c, p.HTTPGet.Port) != httpPort {
		t.Errorf("worker livenessProbe %+v: want GET /healthz on port %d", p, httpPort)
	}
	checkScrape(t, worker, httpPort)
	// One unit per core of the CPU limit: game clocks are not starved.
	cpu := c.Resources.Limits[corev1.ResourceCPU]
	if th, _ := flagValue(c.Args, "threads"); th != itoa(int32(cpu.Value())) || cpu.MilliValue()%1000 != 0 {
		t.Errorf("worker --threads=%s with a CPU limit of %s: want equal whole cores", th, cpu.String())
	}
	grace, _ := flagValue(c.Args, "grace")
	if g := parseSeconds(t, grace); pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds <= g {
		t.Errorf("worker terminationGracePeriodSeconds %v must exceed --grace=%s, or running units are killed, not released", pod.TerminationGracePeriodSeconds, grace)
	}

	// An HPA scales the worker Deployment on CPU.
	var h *autoscalingv2.HorizontalPodAutoscaler
	for _, x := range r.hpas {
		if x.Spec.ScaleTargetRef.Name == worker.Name {
			if h != nil {
				t.Errorf("two HPAs scale %s: %s and %s", worker.Name, h.Name, x.Name)
			}
			h = x
		}
	}
	if h == nil {
		t.Fatalf("no HPA scales %s", worker.Name)
	}
	ref := h.Spec.ScaleTargetRef
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != worker.Name {
		t.Errorf("HPA %s targets %+v, want apps/v1 Deployment %s", h.Name, ref, worker.Name)
	}
	if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
		t.Errorf("HPA min %v max %d", h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	if len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Type != autoscalingv2.ResourceMetricSourceType ||
		h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
		h.Spec.Metrics[0].Resource.Target.Type != autoscalingv2.UtilizationMetricType ||
		h.Spec.Metrics[0].Resource.Target.AverageUtilization == nil {
		t.Errorf("HPA metrics %+v: want CPU average utilisation", h.Spec.Metrics)
	}
	// Utilisation is relative to the request: without one the HPA
	// cannot compute it.
	if req := c.Resources.Requests[corev1.ResourceCPU]; req.IsZero() {
		t.Errorf("worker has no CPU request: the HPA cannot scale on utilisation")
	}
	if worker.Spec.Replicas != nil && h.Spec.MinReplicas != nil && *worker.Spec.Replicas < *h.Spec.MinReplicas {
		t.Errorf("worker replicas %d below the HPA minimum %d", *worker.Spec.Replicas, *h.Spec.MinReplicas)
	}
}

// checkPodTemplate: selector matches the template, the arbiter container's
// flags exist in the real binary, the token comes from a rendered Secret,
// and the pod is non-root, read-only, capability-free and has resources.
func checkPodTemplate(t *testing.T, r *rendered, d *appsv1.Deployment) {
	t.Helper()
	where := "Deployment " + d.Name
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("%s: selector %v does not match its pod template labels %v", where, d.Spec.Selector, d.Spec.Template.Labels)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", where, len(pod.Containers))
	}
	c := pod.Containers[0]
	checkArgs(t, where, c.Args)
	if len(c.Command) != 0 {
		t.Errorf("%s: command %q overrides the image's ENTRYPOINT /arbiter", where, c.Command)
	}
	for _, p := range c.Ports {
		if errs := validation.IsValidPortName(p.Name); len(errs) > 0 {
			t.Errorf("%s: port name %q: %v", where, p.Name, errs)
		}
	}

	// Token: env ARBITER_TOKEN from a key of a rendered Secret, never a
	// literal or a flag.
	var tokenRef *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "ARBITER_TOKEN" {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("%s: ARBITER_TOKEN is not from a Secret", where)
			} else {
				tokenRef = e.ValueFrom.SecretKeyRef
			}
		}
	}
	if _, ok := flagValue(c.Args, "token"); ok {
		t.Errorf("%s: --token on the command line", where)
	}
	if tokenRef == nil {
		t.Errorf("%s: no ARBITER_TOKEN env", where)
	} else if s := findSecret(r, tokenRef.Name); s == nil {
		t.Errorf("%s: ARBITER_TOKEN refers to Secret %q, which is not rendered (have %v)", where, tokenRef.Name, secretNames(r))
	} else if _, ok := s.Data[tokenRef.Key]; !ok {
		if _, ok := s.StringData[tokenRef.Key]; !ok {
			t.Errorf("%s: Secret %s has no key %q", where, s.Name, tokenRef.Key)
		}
	}
	if tokenRef != nil && tokenRef.Optional != nil && *tokenRef.Optional {
		t.Errorf("%s: the token Secret is optional: the pod would start without a token", where)
	}

	// Security: the restricted pod security standard.
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("%s: pod securityContext must set runAsNonRoot: true and a non-zero runAsUser", where)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod seccompProfile is not RuntimeDefault", where)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem is not true", where)
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", where)
	}
	if sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 {
		t.Errorf("%s: capabilities must drop ALL and add none", where)
	}
	if sc != nil && sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", where)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken is not false (arbiter uses no Kubernetes API)", where)
	}
	// A read-only root needs a writable /tmp.
	if v := volumeAt(pod, c, "/tmp"); v == nil || v.EmptyDir == nil {
		t.Errorf("%s: no emptyDir on /tmp", where)
	}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			t.Errorf("%s: hostPath volume %s", where, v.Name)
		}
	}

	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q := c.Resources.Requests[res]; q.IsZero() {
			t.Errorf("%s: no %s request", where, res)
		}
	}
	if q := c.Resources.Limits[corev1.ResourceMemory]; q.IsZero() {
		t.Errorf("%s: no memory limit", where)
	}
	if !strings.Contains(c.Image, "/") || !strings.Contains(c.Image, ":") {
		t.Errorf("%s: image %q is not a full reference (the kustomization's images: rewrites \"arbiter\")", where, c.Image)
	}
}

func checkScrape(t *testing.T, d *appsv1.Deployment, port int32) {
	t.Helper()
	a := d.Spec.Template.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != itoa(port) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("%s: prometheus.io annotations %v: want scrape \"true\", port %d, path /metrics", d.Name, a, port)
	}
}

func checkImage(t *testing.T, r *rendered, want string) {
	t.Helper()
	for _, d := range r.deployments {
		if img := d.Spec.Template.Spec.Containers[0].Image; img != want {
			t.Errorf("Deployment %s image %q, want %q", d.Name, img, want)
		}
	}
}

func byComponent(t *testing.T, ds []*appsv1.Deployment, component string) *appsv1.Deployment {
	t.Helper()
	var found *appsv1.Deployment
	for _, d := range ds {
		if d.Spec.Template.Labels[componentLabel] == component {
			if found != nil {
				t.Errorf("two %s Deployments: %s and %s", component, found.Name, d.Name)
			}
			found = d
		}
	}
	if found == nil {
		t.Errorf("no Deployment with pod label %s=%s", componentLabel, component)
	}
	return found
}

func namedPort(t *testing.T, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Errorf("container %s has no port named %s", c.Name, name)
	return -1
}

func resolvePort(t *testing.T, c corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	return namedPort(t, c, p.StrVal)
}

// volumeAt returns the pod volume mounted at path in c.
func volumeAt(pod corev1.PodSpec, c corev1.Container, path string) *corev1.Volume {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			for i := range pod.Volumes {
				if pod.Volumes[i].Name == m.Name {
					return &pod.Volumes[i]
				}
			}
		}
	}
	return nil
}

func findPVC(r *rendered, name string) *corev1.PersistentVolumeClaim {
	for _, p := range r.pvcs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// workerDeployments are the Deployments whose pods have the worker
// component label: one per pool (identity).
func workerDeployments(r *rendered) []*appsv1.Deployment {
	var ws []*appsv1.Deployment
	for _, d := range r.deployments {
		if d.Spec.Template.Labels[componentLabel] == "worker" {
			ws = append(ws, d)
		}
	}
	return ws
}

// secretWithPrefix is the one rendered Secret named prefix<hash> (prefix
// followed by a hash of ten characters), or nil.
func secretWithPrefix(r *rendered, prefix string) *corev1.Secret {
	for _, s := range r.secrets {
		if rest, ok := strings.CutPrefix(s.Name, prefix); ok && len(rest) == 10 && !strings.Contains(rest, "-") {
			return s
		}
	}
	return nil
}

func findSecret(r *rendered, name string) *corev1.Secret {
	for _, s := range r.secrets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func secretNames(r *rendered) []string {
	var names []string
	for _, s := range r.secrets {
		names = append(names, s.Name)
	}
	return names
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// parseSeconds parses a whole-second duration flag like 30s.
func parseSeconds(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "s"), 10, 64)
	if err != nil || !strings.HasSuffix(s, "s") {
		t.Errorf("duration %q: want whole seconds like 30s", s)
	}
	return n
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func TestKustomizeOverlayHA(t *testing.T) {
	const ns = "arbiter-ha"
	r := render(t, "overlays/ha")
	checkClusterOf(t, r, ns, true)
	for i, o := range r.objects {
		if r.kinds[i] != "Namespace" && o.GetNamespace() != ns {
			t.Errorf("%s %s in namespace %q, want %s", r.kinds[i], o.GetName(), o.GetNamespace(), ns)
		}
	}
	checkImage(t, r, "ghcr.io/arbiter-chess/arbiter:v0.1.0")
	// The database by a name of the namespace, on PostgreSQL's port, as
	// the store URL names it.
	var db *corev1.Service
	for _, s := range r.services {
		if s.Name == "arbiter-postgres" {
			db = s
		}
	}
	if db == nil || db.Spec.Type != corev1.ServiceTypeExternalName || db.Spec.ExternalName == "" ||
		len(db.Spec.Ports) != 1 || db.Spec.Ports[0].Port != 5432 {
		t.Fatalf("want the ExternalName Service arbiter-postgres on 5432, got %+v", db)
	}
	url := string(secretWithPrefix(r, "arbiter-store-").Data["url"])
	if !strings.HasPrefix(url, "postgres://") || !strings.Contains(url, "@arbiter-postgres:5432/") {
		t.Errorf("store URL %q does not name the Service arbiter-postgres:5432", url)
	}
	c := byComponent(t, r.deployments, "coordinator").Spec.Template.Spec.Containers[0]
	if v, ok := flagValue(c.Args, "advertise"); !ok || v != "$(POD_IP):7700" {
		t.Errorf("coordinator --advertise=%q, want $(POD_IP):7700", v)
	}
	podIP := false
	for _, e := range c.Env {
		podIP = podIP || e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP"
	}
	if !podIP {
		t.Error("coordinator: no POD_IP from status.podIP for --advertise")
	}
}

// checkStoreFromSecret: the coordinator's PostgreSQL URL (it carries a
// password) comes from a rendered Secret into $ARBITER_STORE, never a flag.
func checkStoreFromSecret(t *testing.T, r *rendered, c corev1.Container) {
	t.Helper()
	if _, ok := flagValue(c.Args, "store"); ok {
		t.Error("coordinator --store on the command line: the URL's password would show in the process list")
	}
	for _, e := range c.Env {
		if e.Name != "ARBITER_STORE" {
			continue
		}
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Fatal("ARBITER_STORE is not from a Secret")
		}
		ref := e.ValueFrom.SecretKeyRef
		s := findSecret(r, ref.Name)
		if s == nil || s.Data[ref.Key] == nil {
			t.Errorf("ARBITER_STORE from Secret %s key %s, which is not rendered", ref.Name, ref.Key)
		}
		return
	}
	t.Error("coordinator: no ARBITER_STORE (the PostgreSQL URL)")
}

// hasArgPrefix reports whether one of args starts with prefix.
func hasArgPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
