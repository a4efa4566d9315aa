#include "../src/common/group_by.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tacos::detail {
namespace {

template <class Value>
std::vector<Value> as_vector(std::span<const Value> values) {
  return {values.begin(), values.end()};
}

TEST(GroupBy, IndicesByKeyKeepItemOrder) {
  const std::vector<int> key = {2, 0, 2, 1, 0, 2};
  const auto groups = group_indices_by<std::int64_t, std::uint32_t>(
      4, key.size(), [&](std::size_t i) { return key[i]; });
  EXPECT_EQ(groups.keys(), 4u);
  EXPECT_EQ(groups.offsets, (std::vector<std::int64_t>{0, 2, 3, 6, 6}));
  EXPECT_EQ(as_vector(groups[0]), (std::vector<std::uint32_t>{1, 4}));
  EXPECT_EQ(as_vector(groups[1]), (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(as_vector(groups[2]), (std::vector<std::uint32_t>{0, 2, 5}));
  EXPECT_TRUE(groups[3].empty());  // a key without items is an empty group
}

TEST(GroupBy, NoItemsGiveEmptyGroups) {
  const auto groups =
      group_indices_by<int, int>(3, 0, [](std::size_t) -> int { throw "never called"; });
  EXPECT_EQ(groups.offsets, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_TRUE(groups.values.empty());
  const auto none = group_indices_by<int, int>(0, 0, [](std::size_t) { return 0; });
  EXPECT_EQ(none.keys(), 0u);
}

TEST(GroupBy, AnItemMayFileSeveralValuesUnderSeveralKeys) {
  // Item i carries the chunks lists[i]; group (item, position) entries by chunk.
  const std::vector<std::vector<int>> lists = {{1, 0}, {}, {0, 0, 2}};
  const auto groups =
      group_by<std::int64_t, std::pair<int, int>>(3, lists.size(), [&](std::size_t i, auto&& emit) {
        for (std::size_t k = 0; k < lists[i].size(); ++k)
          emit(lists[i][k], std::pair<int, int>(static_cast<int>(i), static_cast<int>(k)));
      });
  using P = std::pair<int, int>;
  EXPECT_EQ(as_vector(groups[0]), (std::vector<P>{{0, 1}, {2, 0}, {2, 1}}));
  EXPECT_EQ(as_vector(groups[1]), (std::vector<P>{{0, 0}}));
  EXPECT_EQ(as_vector(groups[2]), (std::vector<P>{{2, 2}}));
}

TEST(GroupBy, GroupIntoReusesAndFullyReplacesTheOldIndex) {
  Groups<std::uint32_t, char> groups;
  const std::string first = "abcabc";
  group_into(groups, 3, first.size(),
             [&](std::size_t i, auto&& emit) { emit(first[i] - 'a', first[i]); });
  EXPECT_EQ(groups.offsets, (std::vector<std::uint32_t>{0, 2, 4, 6}));
  const std::string second = "cc";
  group_into(groups, 3, second.size(),
             [&](std::size_t i, auto&& emit) { emit(second[i] - 'a', second[i]); });
  EXPECT_EQ(groups.offsets, (std::vector<std::uint32_t>{0, 0, 0, 2}));
  EXPECT_EQ(groups.values, (std::vector<char>{'c', 'c'}));
}

TEST(GroupBy, GroupsCanBeOrderedInPlace) {
  const std::vector<int> value = {5, 3, 9, 1};
  auto groups =
      group_by<int, int>(1, value.size(), [&](std::size_t i, auto&& emit) { emit(0, value[i]); });
  const auto group = groups[0];
  std::sort(group.begin(), group.end());
  EXPECT_EQ(groups.values, (std::vector<int>{1, 3, 5, 9}));
}

TEST(GroupBy, KeyOffsetsOfSortedItems) {
  const std::vector<int> sorted_keys = {0, 0, 2, 2, 2};
  std::vector<int> offsets;
  key_offsets(offsets, 4, sorted_keys.size(), [&](std::size_t i) { return sorted_keys[i]; });
  EXPECT_EQ(offsets, (std::vector<int>{0, 2, 2, 5, 5}));
}

}  // namespace
}  // namespace tacos::detail
