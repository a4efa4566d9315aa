#pragma once
// The cases of tests/data/request_cases.txt (one request, every entry point, every file format),
// shared by request_test.cpp and file_replay_test.cpp.
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace tacos_test {

struct RequestCase {
  std::string topology, collective, size, chunks, model;
};

inline void PrintTo(const RequestCase& c, std::ostream* os) {
  *os << c.topology << " " << c.collective << " " << c.size << " K=" << c.chunks << " " << c.model;
}

inline std::vector<RequestCase> request_cases() {
  std::ifstream in(std::string(TACOS_SOURCE_DIR) + "/tests/data/request_cases.txt");
  std::vector<RequestCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    RequestCase c;
    fields >> c.topology >> c.collective >> c.size >> c.chunks >> c.model;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace tacos_test
