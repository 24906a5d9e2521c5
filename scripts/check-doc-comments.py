#!/usr/bin/env python3
"""Lists the public declarations of the Trove, TroveStorage and TroveRealm modules that
have no `///` doc comment, and exits 1 when there is one. Names starting with
an underscore are implementation details DocC hides, and are not counted.

    python3 scripts/check-doc-comments.py        # make test and make docs run it
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECLARATION = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:public|open)\s+"
    r"(?:(?:final|static|class|override|convenience|required|mutating|nonisolated|indirect|lazy|dynamic)\s+)*"
    r"(func|var|let|init|subscript|class|struct|enum|protocol|typealias|case|actor|extension)\b\s*([\w`]*)"
)


def main() -> int:
    files = sorted(
        glob.glob(os.path.join(ROOT, "Sources/Trove/**/*.swift"), recursive=True)
        + glob.glob(os.path.join(ROOT, "Sources/TroveStorage/**/*.swift"), recursive=True)
        + glob.glob(os.path.join(ROOT, "Sources/TroveRealm/**/*.swift"), recursive=True)
    )
    total = 0
    missing = []
    for path in files:
        lines = open(path, encoding="utf-8").read().split("\n")
        for index, line in enumerate(lines):
            match = DECLARATION.match(line)
            if not match or match.group(1) == "extension":
                continue
            name = match.group(2)
            if name.startswith("_") or "static var _" in line or "func _" in line or "init(_trove" in line:
                continue
            total += 1
            previous = index - 1
            while previous >= 0 and lines[previous].strip().startswith("@"):
                previous -= 1
            above = lines[previous].strip() if previous >= 0 else ""
            if not (above.startswith("///") or above.endswith("*/")):
                missing.append(f"{os.path.relpath(path, ROOT)}:{index + 1}: {line.strip()[:100]}")
    for entry in missing:
        print(f"no doc comment: {entry}")
    print(f"public declarations with a doc comment: {total - len(missing)} of {total}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
