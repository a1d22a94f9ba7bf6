#!/usr/bin/env bash
# Regenerates docs/input-reference.md from the parameter schema (needs a built stratus).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-${STRATUS_BUILD_DIR:-$here/build}/apps/stratus}"
"$stratus" schema >"$here/docs/input-reference.md"
echo "wrote docs/input-reference.md"
