#include "tacos/common/units.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "tacos/common/error.h"

namespace tacos {
namespace {

// Splits "12.5us" into number and suffix; returns false when there is no leading number.
bool split_number(std::string_view text, double& value, std::string_view& suffix) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
          text[end] == '-' || text[end] == '+' || text[end] == 'e' || text[end] == 'E')) {
    // 'e' only counts as an exponent when followed by a digit or sign.
    if ((text[end] == 'e' || text[end] == 'E') &&
        (end + 1 >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[end + 1])) ||
                                     text[end + 1] == '-' || text[end + 1] == '+')))
      break;
    ++end;
  }
  if (end == 0) return false;
  const std::string number(text.substr(0, end));
  char* parsed_end = nullptr;
  value = std::strtod(number.c_str(), &parsed_end);
  if (parsed_end != number.c_str() + number.size() || !std::isfinite(value)) return false;
  suffix = text.substr(end);
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  return true;
}

}  // namespace

Bytes parse_size(std::string_view text, std::string_view what) {
  std::string_view body = text;
  while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
  while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
  std::size_t digits = 0;
  while (digits < body.size() && std::isdigit(static_cast<unsigned char>(body[digits]))) ++digits;
  const std::string expected = std::string(what) +
                               ": expected a positive whole number of bytes with an optional unit "
                               "(B, KB, MB, GB, KiB, MiB, GiB, TiB), got " +
                               single_quoted(text);
  if (digits == 0) throw Error(expected);
  std::uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + digits, number);
  if (ec == std::errc::result_out_of_range)
    throw Error(std::string(what) + ": " + single_quoted(text) + " is too large");
  if (ec != std::errc() || ptr != body.data() + digits) throw Error(expected);
  const std::string_view unit = body.substr(digits);
  std::uint64_t multiplier = 0;
  struct Unit {
    std::string_view name;
    std::uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1000ULL},
      {"MB", 1000ULL * 1000},
      {"GB", 1000ULL * 1000 * 1000},
      {"TB", 1000ULL * 1000 * 1000 * 1000},
      {"KiB", 1ULL << 10},
      {"MiB", 1ULL << 20},
      {"GiB", 1ULL << 30},
      {"TiB", 1ULL << 40},
  };
  for (const auto& u : kUnits)
    if (unit == u.name) multiplier = u.factor;
  if (multiplier == 0) throw Error(expected);
  if (number == 0)
    throw Error(std::string(what) + ": size must be greater than zero, got " + single_quoted(text));
  const auto limit = static_cast<std::uint64_t>(std::numeric_limits<Bytes>::max());
  if (number > limit / multiplier)
    throw Error(std::string(what) + ": " + single_quoted(text) + " is too large");
  return static_cast<Bytes>(number * multiplier);
}

Time parse_latency(std::string_view text, Time bare_unit_ps, std::string_view what) {
  double value = 0;
  std::string_view suffix;
  if (!split_number(text, value, suffix))
    throw Error(std::string(what) + ": expected a latency such as 0.5us, 500ns or 1ms, got " +
                single_quoted(text));
  double unit_ps = 0;
  if (suffix.empty())
    unit_ps = static_cast<double>(bare_unit_ps);
  else if (suffix == "ps")
    unit_ps = 1;
  else if (suffix == "ns")
    unit_ps = 1e3;
  else if (suffix == "us")
    unit_ps = 1e6;
  else if (suffix == "ms")
    unit_ps = 1e9;
  else if (suffix == "s")
    unit_ps = 1e12;
  else
    throw Error(std::string(what) + ": unknown latency unit " + single_quoted(suffix) +
                " (expected ns, us or ms)");
  if (value < 0)
    throw Error(std::string(what) + ": latency must not be negative, got " + single_quoted(text));
  const double ps = value * unit_ps;
  // Times are 64-bit picoseconds summed over a schedule's hops: one latency stays well below.
  if (ps > 1e15)
    throw Error(std::string(what) + ": " + single_quoted(text) + " is too large (at most 1000 s)");
  return static_cast<Time>(std::llround(ps));
}

double parse_bandwidth(std::string_view text, std::string_view what) {
  double value = 0;
  std::string_view suffix;
  if (!split_number(text, value, suffix) ||
      !(suffix.empty() || suffix == "GB/s" || suffix == "GBps"))
    throw Error(std::string(what) + ": expected a bandwidth in GB/s such as 50, got " +
                single_quoted(text));
  if (!(value > 0))
    throw Error(std::string(what) + ": bandwidth must be greater than zero, got " +
                single_quoted(text));
  return value;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(separator, begin);
    items.emplace_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return items;
}

namespace {

// serialization_time in integer arithmetic where that is exact: `gbps` a multiple of 2^-20
// below 2^40, the result below 2^36 ps (69 ms). It runs once per message in the simulator and
// the planners, where the long double division and rounding took a tenth of a fattree
// All-Reduce's synthesis. exact = bytes 10^12 / (gbps 2^30) = q + r / den; the long double
// rule gives q when r / den < 10^-6 and q + 1 otherwise, and its rounding error (below
// 10^-8 ps at these sizes) can only matter where r / den is that close to 10^-6: there, and
// wherever the conditions fail, nullopt sends the caller to the long double rule.
std::optional<Time> exact_serialization_time(Bytes bytes, double gbps) {
  if (bytes <= 0 || !(gbps > 0) || gbps >= 1099511627776.0) return std::nullopt;
  int shift = 0;
  double scaled = gbps;
  while (scaled != std::floor(scaled)) {
    if (++shift > 20) return std::nullopt;
    scaled *= 2;  // exact: a power of two
  }
  using Wide = __int128;
  const Wide numerator = static_cast<Wide>(bytes) * 1'000'000'000'000;
  // gbps 2^30 = scaled 2^(30 - shift), shift <= 20.
  const Wide denominator = static_cast<Wide>(static_cast<std::int64_t>(scaled)) << (30 - shift);
  const Wide q = numerator / denominator;
  const Wide r = numerator % denominator;
  if (q >= (Wide{1} << 36)) return std::nullopt;
  const Wide off = r * 100'000'000 - denominator * 100;  // (r / den - 10^-6) 10^8 den
  if (off <= denominator && off >= -denominator) return std::nullopt;
  const Time whole = static_cast<Time>(q) + (off < 0 ? 0 : 1);
  return std::max<Time>(1, whole);
}

}  // namespace

Time serialization_time(Bytes bytes, double gbps) {
  if (const std::optional<Time> fast = exact_serialization_time(bytes, gbps)) return *fast;
  const long double exact =
      static_cast<long double>(bytes) * 1e12L / (static_cast<long double>(gbps) * kBytesPerGB);
  const long double nearest = std::nearbyint(exact);
  // Values within rounding noise of a whole picosecond are that picosecond, so that
  // 4.8828125 us stays exact and the same inputs always give the same integer. Bytes always
  // take at least a picosecond: a zero-time message would make "sent before it arrived" and
  // "arrived before it was sent" the same instant.
  const Time minimum = bytes > 0 ? 1 : 0;
  // One message may take up to 2^50 ps (about 19 minutes): a schedule's sum of such times stays
  // far inside 64-bit picoseconds. Beyond, say so rather than wrap around.
  constexpr long double kMaxMessagePs = 1125899906842624.0L;  // 2^50
  if (exact > kMaxMessagePs) {
    char seconds[32], bandwidth[32];
    std::snprintf(seconds, sizeof seconds, "%.3Lg", exact / 1e12L);
    std::snprintf(bandwidth, sizeof bandwidth, "%g", gbps);
    throw Error("a message of " + std::to_string(bytes) + " bytes at " + bandwidth +
                " GB/s takes " + seconds +
                " s, more than the 1125 s one message may take (tacos times are 64-bit "
                "picoseconds): use a smaller --size or a larger --bandwidth");
  }
  if (std::fabs(exact - nearest) < 1e-6L) return std::max(minimum, static_cast<Time>(nearest));
  return std::max(minimum, static_cast<Time>(std::ceil(exact)));
}

double to_micros(Time ps) { return static_cast<double>(ps) / static_cast<double>(kPicosPerMicro); }

std::string format_micros(Time ps) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6f", to_micros(ps));
  std::string text(buffer);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string format_bytes(Bytes bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[64];
  if (unit == 0 || value == std::floor(value))
    std::snprintf(buffer, sizeof(buffer), "%.0f %s", value, kNames[unit]);
  else
    std::snprintf(buffer, sizeof(buffer), "%.2f %s", value, kNames[unit]);
  return buffer;
}

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
std::string single_quoted(std::string_view text) {
  std::string result(1, '\'');
  result.append(text);
  result.push_back('\'');
  return result;
}

}  // namespace tacos
