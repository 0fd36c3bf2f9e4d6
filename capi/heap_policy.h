// The allocation policy of libmxgate.so's long runs in a caller's process (mxgate_api_check,
// the host cast survey): glibc's defaults hand the heap's free top back to the kernel after each
// case or chunk, and the next one faults the pages in again (page faults and zeroing: about 12 %
// of a mxgate.check case at M, N, K <= 256, docs/python.md §12). Allocation policy only: no
// result depends on it.
#pragma once

namespace mxgate::capi {

// Once per process, unless the caller tunes glibc's malloc itself (GLIBC_TUNABLES naming malloc):
// blocks below 32 MiB come from the heap and up to 256 MiB of freed heap stay mapped.
void keep_freed_heap();

}  // namespace mxgate::capi
