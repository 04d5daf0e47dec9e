#!/usr/bin/env bash
# proto-check: buf lint, buf breaking against the previous commit, and a check
# that the committed generated Go matches what buf generate produces now.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BUF=("$GO" tool -modfile=tools/go.mod buf)

echo "proto-check: buf lint"
"${BUF[@]}" lint

# Breaking-change check against HEAD~1, when HEAD~1 exists and has the proto
# sources (the commit that introduced them has nothing to compare to).
AGAINST=${PROTO_AGAINST:-HEAD~1}
if git rev-parse --verify --quiet "$AGAINST^{commit}" >/dev/null &&
   [ -n "$(git ls-tree -r --name-only "$AGAINST" -- proto | grep '\.proto$' || true)" ]; then
  echo "proto-check: buf breaking against $AGAINST"
  "${BUF[@]}" breaking --against ".git#ref=$AGAINST"
else
  echo "proto-check: $AGAINST has no proto sources (or no such commit); skipping buf breaking"
fi

echo "proto-check: regenerate and compare"
"${BUF[@]}" generate
if ! git diff --exit-code -- proto; then
  echo "proto-check: generated code is stale; run 'make generate' and commit" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- proto)
if [ -n "$untracked" ]; then
  echo "proto-check: generated files not committed:" >&2
  echo "$untracked" >&2
  exit 1
fi
echo "proto-check: ok"
