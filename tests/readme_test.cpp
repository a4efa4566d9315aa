// The README's examples, run: every code block marked `<!-- readme-test ... -->` holds commands
// (lines starting with "$ ") each followed by the output it prints. The test runs each command
// with the built `tacos` in a fresh folder that looks like a clone (examples/ of this checkout,
// and ../shared when it exists beside it) and compares the output line by line. What depends
// on the machine is masked explicitly in the marker ("mask: NAME, NAME"), with the masks below;
// "requires: PATH" skips the block when PATH (relative to the checkout) is absent. A command
// followed by no output must only succeed. `./run.sh` stands for the default job it runs.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.h"

namespace {

using namespace tacos_test;

// Masks: a regex per name; on both sides every match's group 1 is kept and the rest of the
// match becomes "<masked>".
const std::map<std::string, std::regex>& masks() {
  static const std::map<std::string, std::regex> table = {
      {"synthesis_seconds", std::regex(R"(("synthesis_seconds": )[-0-9.e+]+)")},
      {"peak_memory_mib", std::regex(R"(("peak_memory_mib": )[-0-9.e+]+)")},
      {"synthesis_time", std::regex(R"((synthesis time +)[0-9.]+ s)")},
      {"peak_memory", std::regex(R"((peak memory +)[0-9.]+ MiB)")},
      // compare's "synthesis (s)" column: the number before the verified column, with the
      // padding that right-aligns it (its width changes with the time).
      {"synthesis_column", std::regex(R"(( ) *[0-9]+\.[0-9]{3}(?=  (yes|no)$))")},
  };
  return table;
}

struct Command {
  std::string line;                 // as shown, without "$ "
  std::vector<std::string> output;  // as shown
};

struct Block {
  int line = 0;  // of the marker in README.md
  std::vector<std::string> masks;
  std::string requires_path;
  std::vector<Command> commands;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void trim_trailing_blank(std::vector<std::string>& lines) {
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string::npos)
    lines.pop_back();
}

std::vector<std::string> list_after(const std::string& marker, const std::string& key) {
  std::vector<std::string> items;
  const auto at = marker.find(key);
  if (at == std::string::npos) return items;
  std::string rest = marker.substr(at + key.size());
  rest = rest.substr(0, rest.find("-->"));
  rest = rest.substr(0, rest.find(';'));
  std::istringstream in(rest);
  for (std::string item; std::getline(in, item, ',');) {
    const auto begin = item.find_first_not_of(' ');
    const auto end = item.find_last_not_of(' ');
    if (begin != std::string::npos) items.push_back(item.substr(begin, end - begin + 1));
  }
  return items;
}

std::vector<Block> readme_blocks() {
  const std::vector<std::string> lines =
      split_lines(read_file(fs::path(TACOS_SOURCE_DIR) / "README.md"));
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("<!-- readme-test", 0) != 0) continue;
    Block block;
    block.line = static_cast<int>(i) + 1;
    block.masks = list_after(lines[i], "mask:");
    const auto required = list_after(lines[i], "requires:");
    if (!required.empty()) block.requires_path = required[0];
    std::size_t j = i + 1;
    EXPECT_TRUE(j < lines.size() && lines[j].rfind("```", 0) == 0)
        << "README.md:" << block.line << ": a readme-test marker must precede a code block";
    for (++j; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) {
      if (lines[j].rfind("$ ", 0) == 0)
        block.commands.push_back({lines[j].substr(2), {}});
      else if (!block.commands.empty())
        block.commands.back().output.push_back(lines[j]);
    }
    for (Command& c : block.commands) trim_trailing_blank(c.output);
    blocks.push_back(std::move(block));
    i = j;
  }
  return blocks;
}

// The arguments run.sh passes to tacos when it is given none (its last line).
std::string run_sh_default_args() {
  const std::string text = read_file(fs::path(TACOS_SOURCE_DIR) / "run.sh");
  const std::string key = "exec \"$build/tacos\" ";
  const auto at = text.rfind(key);
  EXPECT_NE(at, std::string::npos) << "run.sh no longer ends with its default job";
  if (at == std::string::npos) return "";
  const auto end = text.find('\n', at);
  return text.substr(at + key.size(), end - at - key.size());
}

std::string apply_masks(std::string line, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    line = std::regex_replace(line, masks().at(name), "$1<masked>");
  return line;
}

// A folder laid out like a clone: DIR/clone/examples, a copy of docs/ (the README's pictures
// are written there and compared with the committed ones) and, when this checkout has one
// beside it, DIR/shared, so that "examples/..." and "../shared/..." resolve as in the README.
fs::path clone_like_folder() {
  const fs::path root = scratch_dir("readme");
  const fs::path clone = root / "clone";
  fs::create_directories(clone);
  fs::create_directory_symlink(fs::path(TACOS_SOURCE_DIR) / "examples", clone / "examples");
  fs::copy(fs::path(TACOS_SOURCE_DIR) / "docs", clone / "docs", fs::copy_options::recursive);
  const fs::path shared = fs::path(TACOS_SOURCE_DIR).parent_path() / "shared";
  if (fs::exists(shared)) fs::create_directory_symlink(shared, root / "shared");
  return clone;
}

TEST(Readme, HasMarkedExamples) {
  const std::vector<Block> blocks = readme_blocks();
  EXPECT_GE(blocks.size(), 8u);
  for (const Block& block : blocks) {
    EXPECT_FALSE(block.commands.empty()) << "README.md:" << block.line;
    for (const std::string& name : block.masks)
      EXPECT_TRUE(masks().count(name)) << "README.md:" << block.line << ": unknown mask " << name;
  }
}

TEST(Readme, EveryShownOutputIsWhatTheCommandPrints) {
  const fs::path clone = clone_like_folder();
  for (const Block& block : readme_blocks()) {
    if (!block.requires_path.empty() &&
        !fs::exists(fs::path(TACOS_SOURCE_DIR) / block.requires_path)) {
      std::printf("README.md:%d skipped: %s is absent\n", block.line, block.requires_path.c_str());
      continue;
    }
    for (const Command& command : block.commands) {
      std::string args;
      if (command.line == "./run.sh")
        args = run_sh_default_args();
      else if (command.line.rfind("tacos ", 0) == 0)
        args = command.line.substr(6);
      else
        ADD_FAILURE() << "README.md:" << block.line << ": not a tacos command: " << command.line;
      const RunResult r = run_tacos_in(clone, args);
      ASSERT_EQ(r.exit_code, 0) << "README.md:" << block.line << ": $ " << command.line << "\n"
                                << r.err;
      if (command.output.empty()) continue;
      std::vector<std::string> actual = split_lines(r.out);
      trim_trailing_blank(actual);
      std::string expected_text, actual_text;
      for (const std::string& l : command.output)
        expected_text += apply_masks(l, block.masks) + "\n";
      for (const std::string& l : actual) actual_text += apply_masks(l, block.masks) + "\n";
      EXPECT_EQ(expected_text, actual_text) << "README.md:" << block.line << ": $ " << command.line;
    }
  }
  // The pictures the README shows are what its commands draw, byte for byte.
  for (const auto& entry : fs::directory_iterator(clone / "docs" / "images")) {
    const fs::path committed =
        fs::path(TACOS_SOURCE_DIR) / "docs" / "images" / entry.path().filename();
    EXPECT_TRUE(fs::exists(committed)) << committed << " is drawn by the README but not committed";
    EXPECT_TRUE(read_file(entry.path()) == read_file(committed))
        << committed << " differs from what the README's command draws (regenerate it)";
  }
  fs::remove_all(clone.parent_path());
}

// Every ```yaml block of the README is a topology tacos loads, and a connected one.
TEST(Readme, YamlSnippetsAreValidConnectedTopologies) {
  const std::vector<std::string> lines =
      split_lines(read_file(fs::path(TACOS_SOURCE_DIR) / "README.md"));
  const fs::path dir = scratch_dir("readme_yaml");
  int snippets = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "```yaml") continue;
    std::string text;
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) text += lines[i] + "\n";
    const fs::path file = dir / ("snippet" + std::to_string(++snippets) + ".yaml");
    std::ofstream(file) << text;
    const RunResult r = run_tacos("topology describe --topology " + file.string());
    EXPECT_EQ(r.exit_code, 0) << text << r.err;
    EXPECT_NE(r.out.find("connected         yes"), std::string::npos) << text << r.out;
  }
  EXPECT_GE(snippets, 2);
  fs::remove_all(dir);
}

}  // namespace
