#!/usr/bin/env bash
# Formats every C++ file of the tree with the checked-in .clang-format.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
git ls-files -co --exclude-standard -- '*.cpp' '*.hpp' | xargs clang-format -i
echo "formatted"
