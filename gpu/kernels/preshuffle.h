// AITER shuffle_weight(x, layout=(16,16)) for 1-byte elements, written from the closed form of
// docs/layouts.md §1.1: within each stripe of 16 rows the 16 x (K/16) matrix of 16-byte
// chunks is stored chunk-major:  off(n, k) = 16*K*(n/16) + 256*(k/16) + 16*(n%16) + k%16.
#pragma once

#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

MXGATE_HD inline uint64_t preshuffled_offset(uint64_t k_dim, uint64_t n, uint64_t k) {
  return 16 * k_dim * (n / 16) + 256 * (k / 16) + 16 * (n % 16) + k % 16;
}

// One source element (row-major index i) to its shuffled place; needs n % 16 == 0, k % 32 == 0.
MXGATE_HD inline void preshuffle_element(const PreshuffleParams& p, const uint8_t* in, uint8_t* out,
                                         uint64_t i) {
  out[preshuffled_offset(p.k, i / p.k, i % p.k)] = in[i];
}

}  // namespace mxgate::gpu
