#pragma once
// One bit per (row, column), rows stored contiguously: the matcher's "has NPU v got chunk c"
// and similar questions, answered in O(1) with one cache line per row segment.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tacos::detail {

class BitMatrix {
 public:
  void resize(int rows, int columns) {
    words_per_row_ = (static_cast<std::size_t>(columns) + 63) / 64;
    bits_.assign(static_cast<std::size_t>(rows) * words_per_row_, 0);
  }
  bool test(int row, int column) const { return (bits_[index(row, column)] >> (column & 63)) & 1U; }
  void set(int row, int column) { bits_[index(row, column)] |= std::uint64_t{1} << (column & 63); }
  void reset(int row, int column) {
    bits_[index(row, column)] &= ~(std::uint64_t{1} << (column & 63));
  }
  void prefetch(int row, int column) const { __builtin_prefetch(&bits_[index(row, column)]); }
  // True when rows `a` of this and `b` of `other` share a set bit (same column count).
  bool intersects(int a, const BitMatrix& other, int b) const {
    const std::uint64_t* x = &bits_[static_cast<std::size_t>(a) * words_per_row_];
    const std::uint64_t* y = &other.bits_[static_cast<std::size_t>(b) * words_per_row_];
    for (std::size_t i = 0; i < words_per_row_; ++i)
      if (x[i] & y[i]) return true;
    return false;
  }

 private:
  std::size_t index(int row, int column) const {
    return static_cast<std::size_t>(row) * words_per_row_ + (static_cast<std::size_t>(column) >> 6);
  }
  std::size_t words_per_row_ = 0;
  std::vector<std::uint64_t> bits_;
};

}  // namespace tacos::detail
