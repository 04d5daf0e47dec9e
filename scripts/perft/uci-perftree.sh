#!/bin/sh
# uci-perftree.sh: a UCI engine that answers `go perft N` (Stockfish and
# most others) as a perftree script, the protocol arbiter verify speaks
# with proto=perftree (https://github.com/agausmann/perftree):
#
#   uci-perftree.sh [ENGINE] DEPTH "FEN" ["MOVES"]
#
# prints one "move count" line per root move, a blank line and the total.
# ENGINE defaults to $PERFT_ENGINE, else stockfish on the PATH.
#
#   arbiter verify --engine "cmd=scripts/perft/uci-perftree.sh,args=/usr/games/stockfish,proto=perftree" --random 100 --depth 3
#
# A UCI engine needs no script (arbiter verify --engine cmd=ENGINE runs its
# go perft itself); this one is the template for engines whose perft is
# reached some other way: change the line that runs the engine.
set -eu
if [ $# -eq 4 ] || { [ $# -eq 3 ] && ! [ "$1" -eq "$1" ] 2>/dev/null; }; then
	engine=$1
	shift
else
	engine=${PERFT_ENGINE:-stockfish}
fi
if [ $# -lt 2 ]; then
	echo "usage: $0 [ENGINE] DEPTH FEN [MOVES]" >&2
	exit 2
fi
depth=$1 fen=$2 moves=${3:-}
position="position fen $fen"
if [ -n "$moves" ]; then
	position="$position moves $moves"
fi
# Shredder-FEN or X-FEN castling letters (not KQkq) are Chess960.
options=""
case $(echo "$fen" | awk '{ print $3 }') in
*[A-Ha-h]*) options="setoption name UCI_Chess960 value true" ;;
esac
# go perft runs to its end before the engine reads the next line;
# isready makes sure of it for engines that search in a thread.
printf 'uci\n%s\n%s\ngo perft %s\nisready\nquit\n' "$options" "$position" "$depth" | "$engine" | awk '
	/^[a-h][1-8][a-h][1-8][qrbn]?: [0-9]+$/ { sub(":", ""); print; next }
	/^Nodes searched: [0-9]+$/ { total = $3 }
	END {
		if (total == "") { print "uci-perftree.sh: no \"Nodes searched\" total from the engine" > "/dev/stderr"; exit 1 }
		print ""; print total
	}'
