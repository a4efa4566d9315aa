#pragma once
// The message layer of Chakra ET files, shared by the trace reader (chakra_reader.cpp) and the
// workload reader (chakra_workload.cpp): the file's bytes, the varint length prefix before each
// message, and integer attributes whatever integer type the producer chose.
#include <cstddef>
#include <cstdint>
#include <string>

#include "proto/et_def.pb.h"

namespace tacos::detail {

// The varint length prefix at `pos` (moved past it), checked against the bytes left; an Error
// starting with `where` otherwise.
std::uint64_t length_prefix(const std::uint8_t* bytes, std::size_t size, std::size_t& pos,
                            const std::string& where);

// Any integer member of the oneof (producers differ: int32, int64, uint64, ...); false for
// other members and for unsigned values beyond int64.
bool integer_value(const ChakraProtoMsg::AttributeProto& a, std::int64_t& out);

}  // namespace tacos::detail
