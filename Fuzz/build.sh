#!/usr/bin/env bash
# Builds the libFuzzer targets with swiftc directly (SwiftPM cannot link
# libFuzzer's main into an executable target): TroveStorage and Trove as
# instrumented static libraries, then one executable per target.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.build/fuzz
mkdir -p "$OUT"
FLAGS=(-sanitize=fuzzer,address -parse-as-library -package-name trove -enable-testing -Onone -g -I Sources/CLMDB -I Sources/CCrypto -I "$OUT")

swiftc "${FLAGS[@]}" -emit-library -static -module-name TroveStorage -emit-module -emit-module-path "$OUT/TroveStorage.swiftmodule" \
    $(find Sources/TroveStorage -name '*.swift') -o "$OUT/libTroveStorage.a" 2>&1 | grep -v "Cannot export local symbol" || true
swiftc "${FLAGS[@]}" -emit-library -static -module-name Trove -emit-module -emit-module-path "$OUT/Trove.swiftmodule" \
    $(find Sources/Trove -name '*.swift') -o "$OUT/libTrove.a" 2>&1 | grep -v "Cannot export local symbol" || true
for target in predicate record column operations file; do
    rm -f "$OUT/fuzz-$target"
    swiftc "${FLAGS[@]}" -module-name "Fuzz_$target" "Fuzz/Targets/$target.swift" -L "$OUT" -lTrove -lTroveStorage -llmdb -lcrypto \
        -o "$OUT/fuzz-$target" 2>&1 | grep -v "Cannot export local symbol" || true
    test -x "$OUT/fuzz-$target"
done
echo "built $(ls $OUT/fuzz-* | xargs -n1 basename | tr '\n' ' ')"
