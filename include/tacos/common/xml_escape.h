#pragma once
#include <string>

namespace tacos {

// Text made safe for XML element content and attribute values: & < > " ' become entities,
// newline, tab and carriage return numeric references, other control characters (not allowed
// in XML 1.0) are dropped.
std::string xml_escape(const std::string& text);

}  // namespace tacos
