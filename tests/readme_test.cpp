// The examples of README.md and of every docs/*.md page, run: every code block marked
// `<!-- readme-test ... -->` holds commands (lines starting with "$ ") each followed by the
// output it prints. The test runs each command with the built `tacos` in a fresh folder that
// looks like a clone (examples/ of this checkout, a copy of docs/, and ../shared when it exists
// beside it), one folder per page, so a page's blocks may use the files its earlier blocks wrote
// but never another page's. It compares the output line by line; failures name FILE:LINE of the
// marker. What depends on the machine is masked explicitly in the marker ("mask: NAME, NAME"),
// with the masks below; "requires: PATH" skips the block when PATH (relative to the checkout) is
// absent. A command followed by no output must only succeed. `./run.sh` stands for the default
// job it runs. scripts/update_readme_outputs.py re-runs the same blocks and rewrites the outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.h"
#include "test_printers.h"

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
  std::string file;  // relative to the checkout: README.md or docs/NAME.md
  int line = 0;      // of the marker in that file
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

// README.md, then every docs/*.md in name order: the pages whose examples are run.
std::vector<std::string> doc_files() {
  std::vector<std::string> files = {"README.md"};
  std::vector<std::string> pages;
  for (const auto& entry : fs::directory_iterator(fs::path(TACOS_SOURCE_DIR) / "docs"))
    if (entry.is_regular_file() && entry.path().extension() == ".md")
      pages.push_back("docs/" + entry.path().filename().string());
  std::sort(pages.begin(), pages.end());
  files.insert(files.end(), pages.begin(), pages.end());
  return files;
}

std::vector<std::string> file_lines(const std::string& file) {
  return split_lines(read_file(fs::path(TACOS_SOURCE_DIR) / file));
}

std::vector<Block> blocks_of(const std::string& file) {
  const std::vector<std::string> lines = file_lines(file);
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("<!-- readme-test", 0) != 0) continue;
    Block block;
    block.file = file;
    block.line = static_cast<int>(i) + 1;
    block.masks = list_after(lines[i], "mask:");
    const auto required = list_after(lines[i], "requires:");
    if (!required.empty()) block.requires_path = required[0];
    std::size_t j = i + 1;
    EXPECT_TRUE(j < lines.size() && lines[j].rfind("```", 0) == 0)
        << file << ":" << block.line << ": a readme-test marker must precede a code block";
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

// The pages with at least one marked block: each is one case of DocExamples.
std::vector<std::string> pages_with_examples() {
  std::vector<std::string> pages;
  for (const std::string& file : doc_files()) {
    const std::vector<std::string> lines = file_lines(file);
    if (std::any_of(lines.begin(), lines.end(),
                    [](const std::string& line) { return line.rfind("<!-- readme-test", 0) == 0; }))
      pages.push_back(file);
  }
  return pages;
}

// A folder laid out like a clone: DIR/clone/examples, a copy of docs/ (the pictures the pages'
// commands draw are written there and compared with the committed ones) and, when this checkout
// has one beside it, DIR/shared, so that "examples/..." and "../shared/..." resolve as in the
// pages (whose commands run from the checkout's root).
fs::path clone_like_folder(const std::string& name) {
  const fs::path root = scratch_dir(name);
  const fs::path clone = root / "clone";
  fs::create_directories(clone);
  fs::create_directory_symlink(fs::path(TACOS_SOURCE_DIR) / "examples", clone / "examples");
  fs::copy(fs::path(TACOS_SOURCE_DIR) / "docs", clone / "docs", fs::copy_options::recursive);
  const fs::path shared = fs::path(TACOS_SOURCE_DIR).parent_path() / "shared";
  if (fs::exists(shared)) fs::create_directory_symlink(shared, root / "shared");
  return clone;
}

TEST(Readme, HasMarkedExamples) {
  std::size_t total = 0;
  for (const std::string& file : doc_files()) {
    const std::vector<Block> blocks = blocks_of(file);
    total += blocks.size();
    for (const Block& block : blocks) {
      EXPECT_FALSE(block.commands.empty()) << file << ":" << block.line;
      for (const std::string& name : block.masks)
        EXPECT_TRUE(masks().count(name)) << file << ":" << block.line << ": unknown mask " << name;
    }
  }
  EXPECT_GE(blocks_of("README.md").size(), 4u);
  EXPECT_GE(total, 12u);
}

class DocExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(DocExamples, EveryShownOutputIsWhatTheCommandPrints) {
  const std::string file = GetParam();
  const fs::path clone = clone_like_folder("readme_" + test_name(file));
  for (const Block& block : blocks_of(file)) {
    if (!block.requires_path.empty() &&
        !fs::exists(fs::path(TACOS_SOURCE_DIR) / block.requires_path)) {
      std::printf("%s:%d skipped: %s is absent\n", file.c_str(), block.line,
                  block.requires_path.c_str());
      continue;
    }
    for (const Command& command : block.commands) {
      std::string args;
      if (command.line == "./run.sh")
        args = run_sh_default_args();
      else if (command.line.rfind("tacos ", 0) == 0)
        args = command.line.substr(6);
      else
        ADD_FAILURE() << file << ":" << block.line << ": not a tacos command: " << command.line;
      const RunResult r = run_tacos_in(clone, args);
      ASSERT_EQ(r.exit_code, 0) << file << ":" << block.line << ": $ " << command.line << "\n"
                                << r.err;
      if (command.output.empty()) continue;
      std::vector<std::string> actual = split_lines(r.out);
      trim_trailing_blank(actual);
      std::string expected_text, actual_text;
      for (const std::string& l : command.output)
        expected_text += apply_masks(l, block.masks) + "\n";
      for (const std::string& l : actual) actual_text += apply_masks(l, block.masks) + "\n";
      EXPECT_EQ(expected_text, actual_text) << file << ":" << block.line << ": $ " << command.line;
    }
  }
  // The pictures the pages show are what their commands draw, byte for byte.
  for (const auto& entry : fs::directory_iterator(clone / "docs" / "images")) {
    const fs::path committed =
        fs::path(TACOS_SOURCE_DIR) / "docs" / "images" / entry.path().filename();
    EXPECT_TRUE(fs::exists(committed))
        << committed << " is drawn by " << file << " but not committed";
    EXPECT_TRUE(read_file(entry.path()) == read_file(committed))
        << committed << " differs from what " << file << "'s command draws (regenerate it)";
  }
  fs::remove_all(clone.parent_path());
}

INSTANTIATE_TEST_SUITE_P(Readme, DocExamples, ::testing::ValuesIn(pages_with_examples()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return test_name(info.param);
                         });

// Every ```yaml block of README.md and docs/*.md is a topology tacos loads, and a connected one.
TEST(Readme, YamlSnippetsAreValidConnectedTopologies) {
  const fs::path dir = scratch_dir("readme_yaml");
  int snippets = 0;
  for (const std::string& page : doc_files()) {
    const std::vector<std::string> lines = file_lines(page);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] != "```yaml") continue;
      const int line = static_cast<int>(i) + 1;
      std::string text;
      for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) text += lines[i] + "\n";
      const fs::path file = dir / ("snippet" + std::to_string(++snippets) + ".yaml");
      std::ofstream(file) << text;
      const RunResult r = run_tacos("topology describe --topology " + file.string());
      EXPECT_EQ(r.exit_code, 0) << page << ":" << line << "\n" << text << r.err;
      EXPECT_NE(r.out.find("connected         yes"), std::string::npos)
          << page << ":" << line << "\n"
          << text << r.out;
    }
  }
  EXPECT_GE(snippets, 2);
  fs::remove_all(dir);
}

}  // namespace
