#pragma once
// Parsing and printing of sizes, bandwidths, latencies and times.
#include <string>
#include <string_view>
#include <vector>

#include "tacos/common/types.h"

namespace tacos {

// "64MiB", "1GiB", "512KB", "1048576" -> bytes. KB/MB/GB are powers of 1000, KiB/MiB/GiB of
// 1024; a bare number (or "B") is bytes. Throws Error on malformed, zero or overflowing sizes.
Bytes parse_size(std::string_view text, std::string_view what = "--size");

// "0.5us", "500ns", "1ms" -> picoseconds; a bare number is in `bare_unit_ps` (us on the command
// line, ns in ASTRA-sim files). Negative or malformed values throw Error.
Time parse_latency(std::string_view text, Time bare_unit_ps, std::string_view what = "--latency");

// A positive bandwidth in GB/s (2^30 B/s). Throws Error when <= 0 or malformed.
double parse_bandwidth(std::string_view text, std::string_view what = "--bandwidth");

// Splits "a,b,c" (no empty items allowed).
std::vector<std::string> split_list(std::string_view text, char separator = ',');

// Time for `bytes` at `gbps` GB/s, rounded up to a whole picosecond.
Time serialization_time(Bytes bytes, double gbps);

double to_micros(Time ps);
// A time in microseconds with up to 6 decimals, trailing zeros trimmed ("16.148438").
std::string format_micros(Time ps);
// "64 MiB", "1.5 KiB", "1000 B".
std::string format_bytes(Bytes bytes);
// 'text' in single quotes, as error messages show a value they reject.
std::string single_quoted(std::string_view text);

}  // namespace tacos
