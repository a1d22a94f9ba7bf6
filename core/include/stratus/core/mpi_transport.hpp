// How the exchanges (grid halos, atom ghosts and migration, FFT transposes) hand their device
// buffers to MPI. Chosen once per run by the device runtime (stratus::device::choice) and passed
// to every exchange when it is planned.
#pragma once

namespace stratus {

enum class MpiTransport {
  direct,  ///< MPI reads and writes the buffers where they are (host memory, or CUDA-aware MPI)
  staged,  ///< through separate host copies of the buffers (an MPI that cannot read the device)
};

}  // namespace stratus
