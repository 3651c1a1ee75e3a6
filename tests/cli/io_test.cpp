// The commands' I/O (cli/io.hpp, cli/json_writer.hpp): lines split in place across block
// boundaries, cut at the limit without stopping the input, the buffered writer, and JSON written
// byte for byte as nlohmann's dump.
#include "io.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "json_writer.hpp"
#include "util/json_escape.hpp"

namespace {

namespace io = chatwire::cli::io;
namespace fs = std::filesystem;

// A file holding `bytes`, opened for reading; closed and removed by the destructor.
class InputFile {
 public:
  explicit InputFile(const std::string& bytes) {
    path_ = fs::temp_directory_path() /
            ("chatwire-io-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::ofstream(path_, std::ios::binary) << bytes;
    fd_ = ::open(path_.c_str(), O_RDONLY);
  }
  ~InputFile() {
    ::close(fd_);
    fs::remove(path_);
  }
  int fd() const { return fd_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
  int fd_ = -1;
};

struct ReadLine {
  std::string text;
  bool too_long;
};

// block == 0: the reader's default block size.
std::vector<ReadLine> read_lines(const std::string& bytes, std::size_t max_line,
                                 std::size_t block) {
  InputFile file(bytes);
  io::LineReader reader(file.fd(), max_line, nullptr, block == 0 ? std::size_t{1} << 20 : block);
  std::vector<ReadLine> lines;
  std::size_t number = 0;
  while (auto line = reader.next()) {
    EXPECT_EQ(line->number, ++number);
    lines.push_back({std::string(line->text), line->too_long});
  }
  EXPECT_EQ(reader.error(), "");
  return lines;
}

TEST(LineReader, SplitsLinesAcrossBlocks) {
  // Every block size from tiny to larger than the input: lines straddle the block ends.
  std::string input;
  std::vector<std::string> want;
  for (int i = 0; i < 200; ++i) {
    want.push_back(std::string(static_cast<std::size_t>(i % 37), static_cast<char>('a' + i % 26)));
    input += want.back() + (i % 5 == 0 ? "\r\n" : "\n");
    if (i % 5 == 0) want.back() += '\r';  // the reader keeps a '\r'; the commands drop it
  }
  input += "last line without newline";
  want.push_back("last line without newline");
  for (std::size_t block : {64, 100, 4096, 0}) {
    auto lines = read_lines(input, 1 << 20, block);
    ASSERT_EQ(lines.size(), want.size()) << block;
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(lines[i].text, want[i]) << block << " line " << i;
      EXPECT_FALSE(lines[i].too_long);
    }
  }
}

TEST(LineReader, GrowsForLongLinesUpToTheLimit) {
  std::string long_line(10000, 'x');
  for (std::size_t block : {64, 0}) {
    auto lines = read_lines("a\n" + long_line + "\nb\n", 10000, block);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[1].text, long_line);
    EXPECT_FALSE(lines[1].too_long);
    EXPECT_EQ(lines[2].text, "b");
  }
}

TEST(LineReader, CutsALineOverTheLimitAndGoesOn) {
  std::string huge(5000, 'y');
  for (std::size_t block : {64, 0}) {
    // Over the limit in the middle (rest skipped across blocks) and as the last line.
    auto lines = read_lines("ok\n" + huge + "\nnext\n" + huge, 100, block);
    ASSERT_EQ(lines.size(), 4u) << block;
    EXPECT_EQ(lines[0].text, "ok");
    EXPECT_TRUE(lines[1].too_long);
    EXPECT_EQ(lines[1].text.size(), 101u);  // one byte over: a size check reports it
    EXPECT_EQ(lines[2].text, "next");
    EXPECT_FALSE(lines[2].too_long);
    EXPECT_TRUE(lines[3].too_long);
  }
}

TEST(LineReader, EmptyInputHasNoLines) {
  for (std::size_t block : {64, 0}) {
    EXPECT_TRUE(read_lines("", 100, block).empty());
    auto lines = read_lines("\n\n", 100, block);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].text, "");
  }
}

TEST(LineReader, FileStartsAtTheCurrentOffset) {
  // `{ read -r first; chatwire render --batch; } < file`: the reader starts where the shell
  // left the descriptor.
  InputFile file("skipped\nfirst\nsecond");
  ASSERT_EQ(::lseek(file.fd(), 8, SEEK_SET), 8);
  io::LineReader reader(file.fd(), 100, nullptr);
  auto a = reader.next();
  auto b = reader.next();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->text, "first");
  EXPECT_EQ(b->text, "second");
  EXPECT_FALSE(reader.next());
}

TEST(ReadAll, ReadsEverythingAndEnforcesTheLimit) {
  std::string big(3'000'000, 'z');
  big[1'234'567] = '\n';
  std::string error;
  {
    InputFile file(big);
    auto text = io::read_all(file.fd(), big.size(), error);
    ASSERT_TRUE(text) << error;
    EXPECT_EQ(*text, big);
  }
  {
    InputFile file(big);
    EXPECT_FALSE(io::read_all(file.fd(), big.size() - 1, error));
    EXPECT_NE(error.find("max_input_bytes=2999999"), std::string::npos) << error;
  }
  EXPECT_FALSE(io::read_file("/nonexistent/chatwire", 10, error));
  EXPECT_NE(error.find("/nonexistent/chatwire"), std::string::npos) << error;
}

TEST(WholeInput, ReadsAFileFromItsPositionAndAPipe) {
  std::string error;
  {
    InputFile file("skipped|the rest");
    ASSERT_EQ(::lseek(file.fd(), 8, SEEK_SET), 8);
    auto input = io::WholeInput::read(file.fd(), 100, error);
    ASSERT_TRUE(input) << error;
    auto moved = std::move(*input);
    EXPECT_EQ(moved.view(), "the rest");
    EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 16);  // consumed, as a read leaves it
    ASSERT_EQ(::lseek(file.fd(), 8, SEEK_SET), 8);
    EXPECT_FALSE(io::WholeInput::read(file.fd(), 3, error));
    EXPECT_NE(error.find("max_input_bytes=3"), std::string::npos) << error;
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "piped", 5), 5);
  ::close(fds[1]);
  auto piped = io::WholeInput::read(fds[0], 100, error);
  ::close(fds[0]);
  ASSERT_TRUE(piped) << error;
  auto moved = std::move(*piped);
  EXPECT_EQ(moved.view(), "piped");
  {
    // Larger than one huge page and not a multiple of it: read whole, to its last byte.
    std::string big(3'000'001, 'z');
    big[2'097'152] = '\n';
    InputFile file(big);
    auto input = io::WholeInput::read(file.fd(), big.size(), error);
    ASSERT_TRUE(input) << error;
    EXPECT_EQ(input->view(), big);
  }
}

std::string written(const std::function<void(io::Writer&)>& write, std::size_t capacity) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::string got;
  {
    io::Writer writer(fds[1], capacity);
    write(writer);
  }  // flushed here
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  return got;
}

TEST(Writer, KeepsOrderAcrossSmallAndLargeWrites) {
  std::string want;
  std::string got = written(
      [&want](io::Writer& w) {
        for (int i = 0; i < 50; ++i) {
          std::string piece(static_cast<std::size_t>(i * 7), static_cast<char>('a' + i % 26));
          w.write(piece);
          w.put('\n');
          want += piece + "\n";
        }
      },
      32);
  EXPECT_EQ(got, want);
}

// write_json must give nlohmann's dump(-1, ' ', false, replace) byte for byte, for valid and
// invalid UTF-8, control bytes, quotes and backslashes at every position in a 16-byte block.
TEST(JsonWriter, WritesWhatNlohmannDumps) {
  std::mt19937 rng(7);
  const std::string alphabet[] = {"a", "\"", "\\",   "\n",   "\x01",         "\x1f", "\x7f", "/",
                                  "é", "😀",  "\xff", "\xc3", "\xed\xa0\x80", "\t",   " ",    "z"};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int pieces = static_cast<int>(rng() % 120);
    for (int k = 0; k < pieces; ++k) s += alphabet[rng() % std::size(alphabet)];
    nlohmann::ordered_json j = {{"text", s}, {s, {1, 2.5, nullptr, true, s}}, {"n", -3}};
    const std::string want = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // 256 bytes: long strings are escaped in several pieces; 64: through a string.
    for (std::size_t capacity : {256, 64}) {
      std::string got = written([&j](io::Writer& w) { chatwire::cli::write_json(w, j); }, capacity);
      ASSERT_EQ(got, want) << capacity << " " << nlohmann::json(want).dump();
    }
  }
}

// The escaper (SSSE3 shuffles where the CPU has them, else an escape at a time) against JSON's
// rule written out byte by byte, for every byte value at every position of a 16-byte block,
// blocks dense with escapes of both lengths, and each length's tail.
std::string escaped_by_the_rule(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", c);
          out += u;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

TEST(JsonEscape, EscapesEveryByteAtEveryPositionAsTheRuleSays) {
  namespace detail = chatwire::util::json_escape_detail;
  auto check = [](const std::string& s) {
    // The room the escaper is promised: the escaped size and 16 bytes (ASan sees any more).
    const std::string want = escaped_by_the_rule(s);
    std::string got(want.size() + 16, '\0');
    got.resize(chatwire::util::escape_json_into(got.data(), s));
    ASSERT_EQ(got, want) << nlohmann::json(want).dump();
    got.assign(want.size() + 16, '\0');
    got.resize(detail::escape_json_sse2(got.data(), s));
    ASSERT_EQ(got, want) << "without SSSE3: " << nlohmann::json(want).dump();
#if defined(CHATWIRE_JSON_ESCAPE_SSSE3)
    ASSERT_TRUE(detail::has_ssse3());  // every x86-64 CPU this runs on: the shuffles are checked
    got.assign(want.size() + 16, '\0');
    got.resize(detail::escape_json_ssse3(got.data(), s));
    ASSERT_EQ(got, want) << "SSSE3: " << nlohmann::json(want).dump();
#endif
  };
  for (int c = 0; c < 256; ++c) {
    for (std::size_t at = 0; at < 40; ++at) {
      std::string s(40, 'x');
      s[at] = static_cast<char>(c);
      check(s);
    }
  }
  std::mt19937 rng(11);
  const char dense[] = {'"', '\\', '\n', '\t', '\r', '\b', '\f', 'a', ' ', '\x01', '\x1f', '\xc3'};
  for (int round = 0; round < 20000; ++round) {
    std::string s(rng() % 80, ' ');
    const bool long_escapes = round % 4 == 0;
    for (char& c : s) {
      c = dense[rng() % (long_escapes ? std::size(dense) : std::size(dense) - 3)];
      if (rng() % 3 == 0) c = static_cast<char>(rng());
    }
    check(s);
  }
}

// A long escape-dense string goes out in nearly full blocks: the writer fills its buffer before
// writing it out, not a worst-case piece (6 bytes a byte) at a time.
TEST(JsonWriter, WritesALongStringInFullBlocks) {
  std::string s;
  while (s.size() < 1'000'000) s += "    if (value == \"x\\\\y\") { total += 42; }  // naïve\n";
  const std::string want = nlohmann::json(s).dump();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string got;
  std::uint64_t write_outs = 0;
  std::thread reader([&got, fd = fds[0]] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  });
  {
    io::Writer writer(fds[1], std::size_t{1} << 16);
    chatwire::cli::write_json_string(writer, s);
    writer.flush();
    write_outs = writer.write_outs();
  }
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got, want);
  // At least 15/16 of each 64 KB block is used before it is written out.
  EXPECT_LE(write_outs, want.size() / ((std::size_t{1} << 16) * 15 / 16) + 1);
}

}  // namespace

namespace {

TEST(JsonWriter, WritesAMessageAsMessageToJsonDumps) {
  namespace parse = chatwire::parse;
  std::vector<parse::Message> messages(4);
  messages[1].content = "Sure \"x\"\n\xff";
  messages[2].reasoning_content = "hm\\";
  messages[2].tool_calls = {{"call_0", "f", "{\"a\": \"é\\n\"}"}, {"call_1", "g\x01", "{}"}};
  messages[3].content = "only content";
  for (const auto& m : messages) {
    const std::string want =
        parse::message_to_json(m).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    EXPECT_EQ(written([&m](io::Writer& w) { chatwire::cli::write_message(w, m); }, 256), want);
  }
}

}  // namespace
