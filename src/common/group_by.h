#pragma once
// Group by key in CSR form: count per key, prefix sum, fill. One definition of the index the
// synthesizers and writers build over transfers, chunks, links and messages, so that each site
// says what it groups and by which key rather than re-deriving offsets by hand.
//
// Every grouping is stable: within a key, values keep the order in which they were emitted
// (item order, then emit order within an item). Results therefore never depend on anything but
// the input, as the design's determinism rule asks.
#include <cstddef>
#include <span>
#include <vector>

namespace tacos::detail {

// Values grouped by key: key k's values are values[offsets[k] .. offsets[k + 1]).
template <class Offset, class Value>
struct Groups {
  std::vector<Offset> offsets;  // keys + 1 entries, offsets[0] == 0
  std::vector<Value> values;

  std::size_t keys() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::size_t size(std::size_t key) const {
    return static_cast<std::size_t>(offsets[key + 1] - offsets[key]);
  }
  std::span<const Value> operator[](std::size_t key) const {
    return {values.data() + offsets[key], size(key)};
  }
  // Mutable, so that a caller can order each group in place.
  std::span<Value> operator[](std::size_t key) { return {values.data() + offsets[key], size(key)}; }
};

// Offsets of items already sorted by key: key k's items are [offsets[k], offsets[k + 1]).
// key_of(i) is item i's key, in 0..keys-1.
template <class Offset, class KeyOf>
void key_offsets(std::vector<Offset>& offsets, std::size_t keys, std::size_t items,
                 KeyOf&& key_of) {
  offsets.assign(keys + 1, Offset{0});
  for (std::size_t i = 0; i < items; ++i) ++offsets[static_cast<std::size_t>(key_of(i)) + 1];
  for (std::size_t k = 0; k < keys; ++k) offsets[k + 1] += offsets[k];
}

// Rebuilds `groups` (keeping its storage, for callers that group again and again) from items
// 0..items-1. visit(i, emit) calls emit(key, value) for each value item i files under a key, in
// the order the values should keep; it is called twice per item (count, then fill), so it must
// emit the same pairs both times.
template <class Offset, class Value, class Visit>
void group_into(Groups<Offset, Value>& groups, std::size_t keys, std::size_t items, Visit&& visit) {
  auto& offsets = groups.offsets;
  offsets.assign(keys + 1, Offset{0});
  for (std::size_t i = 0; i < items; ++i)
    visit(i, [&](auto key, const Value&) { ++offsets[static_cast<std::size_t>(key) + 1]; });
  for (std::size_t k = 0; k < keys; ++k) offsets[k + 1] += offsets[k];
  groups.values.resize(static_cast<std::size_t>(offsets[keys]));
  std::vector<Offset> next(offsets.begin(), offsets.end() - 1);
  for (std::size_t i = 0; i < items; ++i)
    visit(i, [&](auto key, const Value& value) {
      groups.values[static_cast<std::size_t>(next[static_cast<std::size_t>(key)]++)] = value;
    });
}

template <class Offset, class Value, class Visit>
Groups<Offset, Value> group_by(std::size_t keys, std::size_t items, Visit&& visit) {
  Groups<Offset, Value> groups;
  group_into(groups, keys, items, visit);
  return groups;
}

// The common case: each item has one key, key_of(i), and is filed as its index i.
template <class Offset, class Index, class KeyOf>
Groups<Offset, Index> group_indices_by(std::size_t keys, std::size_t items, KeyOf&& key_of) {
  return group_by<Offset, Index>(
      keys, items, [&](std::size_t i, auto&& emit) { emit(key_of(i), static_cast<Index>(i)); });
}

}  // namespace tacos::detail
