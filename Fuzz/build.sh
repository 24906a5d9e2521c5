#!/usr/bin/env bash
# Builds the libFuzzer targets with swiftc directly (SwiftPM cannot link
# libFuzzer's main into an executable target): TroveStorage and Trove as
# instrumented static libraries, then one executable per target.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.build/fuzz
mkdir -p "$OUT"
FLAGS=(-sanitize=fuzzer,address -parse-as-library -package-name trove -enable-testing -Onone -g -I Sources/CLMDB -I Sources/CCrypto -I "$OUT")

# The C part of Trove (class enumeration), with the module map SwiftPM would generate.
mkdir -p "$OUT/CTroveRuntime"
printf 'module CTroveRuntime {\n    header "%s"\n    export *\n}\n' "$PWD/Sources/CTroveRuntime/include/CTroveRuntime.h" \
    > "$OUT/CTroveRuntime/module.modulemap"
clang -c -g -fsanitize=address -I Sources/CTroveRuntime/include Sources/CTroveRuntime/ClassEnumeration.c -o "$OUT/ClassEnumeration.o"
rm -f "$OUT/libCTroveRuntime.a" && ar rcs "$OUT/libCTroveRuntime.a" "$OUT/ClassEnumeration.o"
FLAGS+=(-I "$OUT/CTroveRuntime")
rm -f "$OUT/libTrove.a"

swiftc "${FLAGS[@]}" -emit-library -static -module-name TroveStorage -emit-module -emit-module-path "$OUT/TroveStorage.swiftmodule" \
    $(find Sources/TroveStorage -name '*.swift') -o "$OUT/libTroveStorage.a" 2>&1 | grep -v "Cannot export local symbol" || true
swiftc "${FLAGS[@]}" -emit-library -static -module-name Trove -emit-module -emit-module-path "$OUT/Trove.swiftmodule" \
    $(find Sources/Trove -name '*.swift') -o "$OUT/libTrove.a" 2>&1 | grep -v "Cannot export local symbol" || true
for target in predicate record column operations file; do
    rm -f "$OUT/fuzz-$target"
    swiftc "${FLAGS[@]}" -module-name "Fuzz_$target" "Fuzz/Targets/$target.swift" -L "$OUT" -lTrove -lTroveStorage -lCTroveRuntime -llmdb -lcrypto \
        -o "$OUT/fuzz-$target" 2>&1 | grep -v "Cannot export local symbol" || true
    test -x "$OUT/fuzz-$target"
done
echo "built $(ls $OUT/fuzz-* | xargs -n1 basename | tr '\n' ' ')"
