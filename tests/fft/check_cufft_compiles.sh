#!/bin/sh
# Compiles the cuFFT backend on its own with nvcc (nothing CUDA runs). Exit 77 (ctest: skipped)
# when there is no CUDA toolkit, so that the step is reported as skipped, never as passed.
# usage: check_cufft_compiles.sh SOURCE_DIR OUTPUT_DIR
src=$1
out=$2
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc" ]; then
  echo "SKIPPED: no nvcc (CUDA toolkit) on this machine; the cuFFT backend was not compiled"
  exit 77
fi
mkdir -p "$out"
echo "$nvcc -std=c++17 -c $src/fft/src/cufft_backend.cpp"
exec "$nvcc" -x cu -std=c++17 -Werror all-warnings -I"$src/fft/include" -c "$src/fft/src/cufft_backend.cpp" \
  -o "$out/cufft_backend.o"
