#!/bin/sh
# Prints the GOAMD64 level of this machine for make build: v3 when the CPU
# has every feature of x86-64-v3 that /proc/cpuinfo lists (AVX2, BMI1,
# BMI2, FMA, F16C, MOVBE, LZCNT as "abm"), else v2 (POPCNT, any x86-64 CPU
# since 2009). Without /proc/cpuinfo (macOS, other architectures): v2.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
[ -n "$flags" ] || { echo v2; exit 0; }
for f in avx avx2 bmi1 bmi2 fma f16c movbe abm; do
	case " $flags " in
	*" $f "*) ;;
	*) echo v2; exit 0 ;;
	esac
done
echo v3
