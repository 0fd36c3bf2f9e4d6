// The lookups behind a small enum's to_string / parse_X / all_X: a table of (value, name) rows,
// or names indexed by an enum numbered 0..N-1.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace mxgate {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

// The name of `e`; "?" for a value the table lacks.
template <class E, std::size_t N>
constexpr std::string_view name_in(const NameTable<E, N>& table, E e) {
  for (const auto& [value, name] : table) {
    if (value == e) return name;
  }
  return "?";
}

template <class E, std::size_t N>
constexpr std::optional<E> parse_in(const NameTable<E, N>& table, std::string_view s) {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

// The table's values in its order.
template <class E, std::size_t N>
constexpr std::array<E, N> values_in(const NameTable<E, N>& table) {
  std::array<E, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = table[i].first;
  return out;
}

// An enum numbered 0..N-1: its values in order, and the one `names[i]` names.
template <class E, std::size_t N>
constexpr std::array<E, N> enum_values() {
  std::array<E, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<E>(i);
  return out;
}

template <class E, std::size_t N>
constexpr std::optional<E> parse_index(const std::array<std::string_view, N>& names,
                                       std::string_view s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace mxgate
