#pragma once
// Chakra ET bytes written by hand from the protobuf wire format and the schema's field numbers
// (no generated code), for tests that need files no writer of tacos makes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tacos {

inline std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
inline std::string field_varint(int number, std::uint64_t v) {
  return varint(static_cast<std::uint64_t>(number) << 3) + varint(v);
}
inline std::string field_bytes(int number, std::string_view bytes) {
  return varint((static_cast<std::uint64_t>(number) << 3) | 2) + varint(bytes.size()) +
         std::string(bytes);
}
inline std::string delimited(const std::string& message) {
  return varint(message.size()) + message;
}

// AttributeProto: name = 1, int32_val = 7, int64_val = 9.
inline std::string attr_int32(std::string_view name, std::int64_t v) {
  return field_bytes(10, field_bytes(1, name) + field_varint(7, static_cast<std::uint64_t>(v)));
}
inline std::string attr_int64(std::string_view name, std::int64_t v) {
  return field_bytes(10, field_bytes(1, name) + field_varint(9, static_cast<std::uint64_t>(v)));
}
// Node: id 1, name 2, type 3, ctrl_deps 4, data_deps 5 (packed), duration_micros 7, attr 10.
inline std::string et_node(std::uint64_t id, std::string_view name, int type,
                           const std::vector<std::uint64_t>& data_deps, const std::string& attrs,
                           std::uint64_t duration_micros = 0) {
  std::string deps;
  for (std::uint64_t d : data_deps) deps += varint(d);
  std::string node = field_varint(1, id) + field_bytes(2, name) + field_varint(3, type);
  if (!deps.empty()) node += field_bytes(5, deps);
  if (duration_micros) node += field_varint(7, duration_micros);
  return delimited(node + attrs);
}
inline std::string et_metadata(std::string_view version) {
  return delimited(field_bytes(1, version));
}
inline std::string send_attrs(int src, int dst, int tag, std::int64_t size) {
  return attr_int32("comm_src", src) + attr_int32("comm_dst", dst) + attr_int32("comm_tag", tag) +
         (size > 0 ? attr_int64("comm_size", size) : std::string());
}
// AttributeProto: uint64_val = 13, string_val = 29.
inline std::string attr_uint64(std::string_view name, std::uint64_t v) {
  return field_bytes(10, field_bytes(1, name) + field_varint(13, v));
}
inline std::string attr_string(std::string_view name, std::string_view v) {
  return field_bytes(10, field_bytes(1, name) + field_bytes(29, v));
}

}  // namespace tacos
