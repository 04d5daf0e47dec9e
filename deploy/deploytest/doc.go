// Package deploytest validates the deployment files in deploy/ offline: no
// Docker engine, Kubernetes cluster or Prometheus server is needed.
//
//   - dockerfile_test.go: deploy/Dockerfile parsed with BuildKit's own
//     parser and instruction set, plus .dockerignore.
//   - compose_test.go: deploy/compose.yaml loaded by compose-go (the loader
//     of `docker compose`) with schema validation.
//   - kustomize_test.go: deploy/kubernetes rendered with kustomize's krusty
//     (what `kubectl kustomize` runs) and every object decoded strictly into
//     its k8s.io/api type.
//   - tls_test.go: the security invariants of both (TLS on every
//     coordinator and connection, server names the certificate covers,
//     one identity per worker, keys only where they belong, no token on a
//     command line, every file a flag names in a mounted volume), checked
//     against certificates the real `arbiter certs init` makes.
//   - promtool_test.go: the Prometheus config and alert rules checked and
//     unit-tested with promtool.
//
// It lives in its own module (deploy/go.mod) so that kustomize, the
// Kubernetes API types, compose-go and BuildKit stay out of the root
// module's dependency graph and out of the arbiter binary. Run it with
// `make deploy-check` or `cd deploy && go test ./...`.
package deploytest
