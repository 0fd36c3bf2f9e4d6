// fuzz_dispatch's memo of the reference quantizers dispatch/ calls, compiled into its own copy of
// dispatch/ only (MXGATE_FUZZ_QUANTIZE_MEMO, fuzz/CMakeLists.txt): never in the libraries tools
// and tests link. LinearLayer::load_float_weights (quantize_mx, quantize_block, bf16_of),
// quantize_activation_1x128 (quantize_block, 1 x 128) and make_activation (bf16_of) are pure
// functions of their shape and input values, and took 9 %, 5 % and 2.5 % of the fuzzer's time
// while most inputs repeat a weight or an activation seen before in the process (84 % of first
// loads). A hit compares every key byte
// (the shape words and every input byte), never a hash alone, and only results computed without
// error are kept: a hit returns exactly the bytes recomputing would, so an input run alone in a
// fresh process behaves the same. The arena is mapped once, outside the heap: an input that added
// an entry with malloc would look like a leak to libFuzzer (which then runs it again under
// LeakSanitizer), and LeakSanitizer does not scan it for pointers (it holds none). No edge
// coverage (fuzz/coverage_ignorelist.txt): the fuzzer must not chase hits and misses.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <span>

namespace mxgate::fuzz {

namespace quantize_memo_detail {
struct Slot {
  bool used = false;
  uint64_t hash = 0;
  uint64_t words[5] = {};
  std::size_t offset = 0, key_bytes = 0, data_bytes = 0, scale_bytes = 0;
};
}  // namespace quantize_memo_detail

class QuantizeMemo {
  using Slot = quantize_memo_detail::Slot;

 public:
  // What is quantized: shape words (which quantizer, its parameters) and the input's bytes.
  struct Key {
    uint64_t words[5];
    const void* bytes;
    std::size_t size;
  };
  struct Value {
    std::span<const uint8_t> data, scales;
  };

  std::optional<Value> get(const Key& key) {
    if (!map()) return std::nullopt;
    const uint64_t h = hash(key);
    for (std::size_t i = h & (kSlots - 1); slots_[i].used; i = (i + 1) & (kSlots - 1)) {
      const Slot& e = slots_[i];
      if (e.hash != h || e.key_bytes != key.size ||
          std::memcmp(e.words, key.words, sizeof key.words) != 0 ||
          std::memcmp(arena_ + e.offset, key.bytes, key.size) != 0) {
        continue;
      }
      const uint8_t* v = arena_ + e.offset + e.key_bytes;
      return Value{{v, e.data_bytes}, {v + e.data_bytes, e.scale_bytes}};
    }
    return std::nullopt;
  }

  void put(const Key& key, std::span<const uint8_t> data, std::span<const uint8_t> scales) {
    const std::size_t bytes = key.size + data.size() + scales.size();
    if (!map() || bytes > kArenaBytes) return;
    if (used_ + bytes > kArenaBytes || 2 * (entries_ + 1) > kSlots) {  // full: start over
      for (std::size_t i = 0; i < kSlots; ++i) slots_[i] = Slot{};
      used_ = entries_ = 0;
    }
    const uint64_t h = hash(key);
    std::size_t i = h & (kSlots - 1);
    while (slots_[i].used) i = (i + 1) & (kSlots - 1);
    uint8_t* v = arena_ + used_;
    if (key.size != 0) std::memcpy(v, key.bytes, key.size);
    if (!data.empty()) std::memcpy(v + key.size, data.data(), data.size());
    if (!scales.empty()) std::memcpy(v + key.size + data.size(), scales.data(), scales.size());
    Slot& e = slots_[i];
    e = Slot{true, h, {}, used_, key.size, data.size(), scales.size()};
    std::memcpy(e.words, key.words, sizeof key.words);
    used_ += bytes;
    ++entries_;
  }

 private:
  static constexpr std::size_t kArenaBytes = std::size_t{128} << 20;
  static constexpr std::size_t kSlots = std::size_t{1} << 16;  // a power of two, at most half full

  // Maps the arena and the slots once (pages are touched as entries fill them); false if the
  // mapping failed, and then nothing is memoized.
  bool map() {
    if (arena_ != nullptr) return true;
    if (failed_) return false;
    const std::size_t total = kArenaBytes + kSlots * sizeof(Slot);
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      failed_ = true;
      return false;
    }
    arena_ = static_cast<uint8_t*>(p);
    slots_ = new (arena_ + kArenaBytes) Slot[kSlots];  // zero pages: every slot unused
    return true;
  }

  // ASan checks nothing here worth its cost: the key's bytes are the caller's valid span.
  __attribute__((no_sanitize("address"))) static uint64_t hash(const Key& key) {
    uint64_t h = key.size;
    for (uint64_t w : key.words) h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    const auto* b = static_cast<const uint8_t*>(key.bytes);
    std::size_t i = 0;
    uint64_t word = 0;
    for (; i + 8 <= key.size; i += 8) {
      std::memcpy(&word, b + i, 8);
      h = (h ^ word) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
    }
    for (; i < key.size; ++i) h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
  }

  uint8_t* arena_ = nullptr;
  Slot* slots_ = nullptr;
  bool failed_ = false;
  std::size_t used_ = 0, entries_ = 0;
};

// The one memo of the process (function-local static: constructed on first use, no heap).
inline QuantizeMemo& quantize_memo() {
  static QuantizeMemo memo;
  return memo;
}

}  // namespace mxgate::fuzz
