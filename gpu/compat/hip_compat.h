// The hip* runtime names mxgate uses, mapped to CUDA when the HIP sources are built by nvcc (or
// the backend by the host compiler of a CUDA build). Debian's HIP 5.2 headers do not build with
// CUDA 13, so NVIDIA builds use this header instead of hip/hip_runtime.h.
#pragma once

#if defined(MXGATE_USE_CUDA)
#include <cuda_runtime.h>

using hipError_t = cudaError_t;
using hipDeviceProp_t = cudaDeviceProp;
using hipStream_t = cudaStream_t;
#define hipSuccess cudaSuccess
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemset cudaMemset
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipGetLastError cudaGetLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipGetDevice cudaGetDevice
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
  kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#else
#include <hip/hip_runtime.h>
#endif
