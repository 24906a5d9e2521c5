#!/usr/bin/env bash
# Instruction counts of chosen benchmark rows, Trove against SQLite, under
# valgrind's callgrind: repeatable to the instruction whatever else the
# machine does, where timed ratios swing with load. Only the measured part of
# each row is counted (trove-bench's measuredSection); data generation and
# setup are not. Sizes are the default ones divided by DIVIDE (callgrind runs
# code about 50 times slower). Usage: scripts/bench-instructions.sh [DIVIDE]
set -euo pipefail
cd "$(dirname "$0")/.."
divide="${1:-10}"
bench=.build/release/trove-bench
out=.build/bench-instructions
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "valgrind is missing (apt-get install valgrind)"; exit 1; }

rows=(
  "W1|bulk insert, shape B"
  "W2|one object per transaction: update"
  "W3|full scan, shape B"
  "W4|primary-key lookups, random"
  "W5|update one property on all objects"
  "W5|object by object: update one property on all objects"
  "W5|update a random 1% in transactions of 10"
  "W6|delete a random 10%"
  "W7|equality on an indexed Int"
  "W7|unindexed range: count and sum"
  "W7|unindexed range: sort, fetch first 100 objects"
  "W8|point reads between another handle's commits, one thread"
  "W9|follow to-many links"
  "W10|range on an indexed String, both bounds: count"
  "W10|sort by two properties, first 10"
)

count() {  # workload, title, engine -> instructions
  local file="$out/$1-$3.$(echo "$2" | tr -c 'a-zA-Z0-9' '_').callgrind"
  valgrind --tool=callgrind --toggle-collect='*measuredSection*' --callgrind-out-file="$file" \
    "$bench" --only "$1" --title "$2" --engines "$3" --divide "$divide" --repeat 1 \
    >"$file.log" 2>&1 || { echo "valgrind run failed: $1 $2 $3 (see $file.log)" >&2; exit 1; }
  awk '/^totals:/ { print $2 }' "$file"
}

echo "Instructions in the measured part (callgrind, sizes / $divide, warm-up + 1 round); ratio above 1: Trove runs fewer."
echo
echo "| row | Trove | SQLite | SQLite/Trove |"
echo "|---|---:|---:|---:|"
for row in "${rows[@]}"; do
  workload="${row%%|*}"
  title="${row#*|}"
  trove=$(count "$workload" "$title" Trove)
  sqlite=$(count "$workload" "$title" SQLite)
  ratio=$(awk -v a="$sqlite" -v b="$trove" 'BEGIN { printf "%.2f", a / b }')
  printf '| %s %s | %s | %s | %s× |\n' "$workload" "$title" "$trove" "$sqlite" "$ratio"
done
