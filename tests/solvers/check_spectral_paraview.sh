#!/bin/sh
# ParaView opens the XDMF series of a spectral run (exit 77, ctest: skipped, without pvpython).
# usage: check_spectral_paraview.sh STRATUS WORK_DIR
set -e
here=$(cd "$(dirname "$0")" && pwd)
command -v pvpython >/dev/null || { echo "SKIPPED: no pvpython (apt-get install python3-paraview)"; exit 77; }
rm -rf "$2" && mkdir -p "$2"
"$1" run "$here/spectral_tgv_small.toml" --output-dir "$2/out" --restart none >"$2/run.log" 2>&1 ||
  { tail -20 "$2/run.log"; exit 1; }
pvpython --force-offscreen-rendering "$here/check_spectral_paraview.py" "$2/out/tgv.xmf" 2>&1 |
  grep -E "ParaView|FAILED|Error|rror:" > "$2/check.txt" || true
cat "$2/check.txt"
grep -q "^ParaView" "$2/check.txt"
