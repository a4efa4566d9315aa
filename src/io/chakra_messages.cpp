#include "chakra_messages.h"

#include <fstream>
#include <iterator>
#include <limits>

#include "tacos/common/error.h"

namespace tacos::detail {

namespace pb = ChakraProtoMsg;

std::uint64_t length_prefix(const std::uint8_t* bytes, std::size_t size, std::size_t& pos,
                            const std::string& where) {
  std::uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (pos >= size) throw Error(where + ": truncated length prefix (the file is cut off)");
    if (shift >= 35) throw Error(where + ": malformed length prefix (not a Chakra ET file?)");
    const std::uint8_t b = bytes[pos++];
    length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (length > size - pos)
    throw Error(where + ": declares " + std::to_string(length) + " bytes but only " +
                std::to_string(size - pos) + " remain (truncated file, or not a Chakra ET)");
  return length;
}

bool integer_value(const pb::AttributeProto& a, std::int64_t& out) {
  using V = pb::AttributeProto::ValueCase;
  switch (a.value_case()) {
    case V::kInt32Val:
      out = a.int32_val();
      return true;
    case V::kInt64Val:
      out = a.int64_val();
      return true;
    case V::kUint32Val:
      out = a.uint32_val();
      return true;
    case V::kUint64Val:
      if (a.uint64_val() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return false;
      out = static_cast<std::int64_t>(a.uint64_val());
      return true;
    case V::kSint32Val:
      out = a.sint32_val();
      return true;
    case V::kSint64Val:
      out = a.sint64_val();
      return true;
    case V::kFixed32Val:
      out = a.fixed32_val();
      return true;
    case V::kFixed64Val:
      if (a.fixed64_val() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return false;
      out = static_cast<std::int64_t>(a.fixed64_val());
      return true;
    case V::kSfixed32Val:
      out = a.sfixed32_val();
      return true;
    case V::kSfixed64Val:
      out = a.sfixed64_val();
      return true;
    default:
      return false;
  }
}

}  // namespace tacos::detail
