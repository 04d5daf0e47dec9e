#!/bin/sh
# brokenperft.sh: builds the repository's test engine with move generator
# bugs put in on purpose (testing/testengines/brokenperft, used by
# docs/verify.md) and runs it, as a perftree script or a UCI engine:
#
#   arbiter verify --engine "cmd=scripts/perft/brokenperft.sh,args=-bug ep -perftree,proto=perftree" --random 200 --depth 3
#   arbiter verify --engine "cmd=scripts/perft/brokenperft.sh,args=-bug castle-through-check" --depth 4
#
# The build is `go build -o bin/brokenperft ./testing/testengines/brokenperft`
# from the repository's root, done once (again when the source is newer).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin/brokenperft
if [ ! -x "$bin" ] || [ -n "$(find "$root/testing/testengines/brokenperft" -newer "$bin" -name '*.go' 2>/dev/null)" ]; then
	(cd "$root" && go build -o "$bin" ./testing/testengines/brokenperft) >&2
fi
exec "$bin" "$@"
