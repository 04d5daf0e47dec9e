#!/bin/bash
# 200-game strength matches at 5+0.05, concurrency 2, 8-move book, own books off.
cd /work/main
A=/tmp/strength/arbiter
common="--each tc=5+0.05 --openings file=books/8moves-200.pgn,order=random,seed=2026 --games 200 --concurrency 2 --ratinginterval 50"
run() { name=$1; shift; echo "== $name $(date +%T)"; $A match --engine name=arbiter,builtin "$@" $common --pgnout /tmp/strength/$name.pgn > /tmp/strength/$name.txt 2>&1; echo "== $name done $(date +%T) exit $?"; }
run gnuchess --engine "name=gnuchess,cmd=/usr/games/gnuchess,args=-u,option.OwnBook=false"
run toga2 --engine "name=toga2,cmd=/usr/games/toga2,option.OwnBook=false"
run phalanx --engine "name=phalanx,cmd=/usr/games/phalanx,args=-b- -l-,proto=xboard"
run fairymax --engine "name=fairymax,cmd=/usr/games/fairymax,proto=xboard"
