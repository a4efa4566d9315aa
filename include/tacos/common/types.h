#pragma once
// Basic units shared by every part of tacos (see docs/design.md, "Units and numbers").
#include <cstdint>

namespace tacos {

using Time = std::int64_t;   // picoseconds
using Bytes = std::int64_t;  // bytes
using DeviceId = std::int32_t;
using NpuId = std::int32_t;
using LinkId = std::int32_t;
using ChunkId = std::int32_t;

inline constexpr Time kPicosPerMicro = 1'000'000;
inline constexpr Time kPicosPerNano = 1'000;
// "GB/s" in this field means 2^30 bytes per second.
inline constexpr double kBytesPerGB = 1073741824.0;

}  // namespace tacos
