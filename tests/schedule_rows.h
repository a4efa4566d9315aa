#pragma once
// A schedule's transfers as comparable rows (source, destination, start, end, reduce), for
// tests that check two ways of making a schedule give the same one.
#include <tuple>
#include <vector>

#include "tacos/algorithm/algorithm.h"

namespace tacos_test {

using ScheduleRow = std::tuple<tacos::DeviceId, tacos::DeviceId, tacos::Time, tacos::Time, bool>;

inline std::vector<ScheduleRow> rows_of(const tacos::Algorithm& a) {
  std::vector<ScheduleRow> rows;
  for (const tacos::Transfer& t : a.transfers())
    rows.emplace_back(t.src, t.dst, t.start, t.end, t.reduce);
  return rows;
}

}  // namespace tacos_test
