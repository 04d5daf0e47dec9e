#!/usr/bin/env bash
# Layout-robust perft A/B: the same code placed 32 or 64 bytes further on
# can time a few per cent apart here (docs/perft-records.md), so a change
# to the perft core is compared at several code layouts. Builds git
# revision A and revision B (WORK: the working tree, tracked files) each
# with a padding function of each size in PADS placed before the engine's
# code, and runs scripts/perft-ab.sh on each pair:
#   scripts/perft-ab-layouts.sh main WORK 2
#   PADS="0 1 2 5" scripts/perft-ab-layouts.sh HEAD~1 HEAD
# A change is a gain when it wins at every layout.
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 REV_A REV_B [ROUNDS]  (REV: a git revision, or WORK)" >&2
	exit 2
fi
A=$1 B=$2 ROUNDS=${3:-2}
PADS=${PADS:-"0 1 5"}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# build REV PAD OUT: REV's arbiter with about 32*PAD bytes of padding
# before the engine package's functions (its first file by name).
build() {
	local rev=$1 pad=$2 out=$3 src=$work/src
	rm -rf "$src" && mkdir -p "$src"
	if [ "$rev" = WORK ]; then
		(cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$src")
	else
		(cd "$repo" && git archive "$rev") | tar -x -C "$src"
	fi
	{
		echo "package engine"
		echo
		echo "var padSink uint64"
		echo
		echo "func init() {"
		echo "	if padSink == 12345 {"
		echo "		padSink = padLayout(padSink)"
		echo "	}"
		echo "}"
		echo
		echo "//go:noinline"
		echo "func padLayout(x uint64) uint64 {"
		for i in $(seq $((pad * 2))); do
			echo "	x = (x ^ (x >> $((i % 50 + 3)))) * 0x9E3779B97F4A7C15"
		done
		echo "	return x"
		echo "}"
	} > "$src/engine/aaa_layout_pad.go"
	(cd "$src" && GOAMD64=$("$repo/scripts/goamd64.sh") go build -o "$out" ./cmd/arbiter)
}
for pad in $PADS; do
	build "$A" "$pad" "$work/A$pad"
	build "$B" "$pad" "$work/B$pad"
done
for pad in $PADS; do
	echo "== padding $pad"
	"$repo/scripts/perft-ab.sh" "$work/A$pad" "$work/B$pad" "$ROUNDS"
done
