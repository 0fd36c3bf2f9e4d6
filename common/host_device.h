// MXGATE_HD marks a function callable from host code and from HIP / CUDA device code; it is empty
// for a plain C++ compiler (the host models, the reference, the tools).
#pragma once

#if defined(__CUDACC__) || defined(__HIP__)
#define MXGATE_HD __host__ __device__
#else
#define MXGATE_HD
#endif
