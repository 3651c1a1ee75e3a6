#include "tokenize/json.hpp"

#include <charconv>
#include <cstring>

#include "tokenize/unicode.hpp"

namespace chatwire::tokenize::json {

class Parser {
 public:
  Parser(Document& doc, std::size_t max_depth) : doc_(doc), max_depth_(max_depth) {}

  bool run() {
    char* data = doc_.buffer_->data();
    p_ = data;
    end_ = data + doc_.buffer_->size();
    doc_.nodes_.reserve(doc_.buffer_->size() / 24 + 16);
    doc_.nodes_.emplace_back();
    skip_ws();
    if (!parse_value(0, 0)) return false;
    skip_ws();
    if (p_ != end_) return fail("unexpected data after the JSON value");
    return true;
  }

  Error error() const {
    // Line/column of the failure point.
    std::size_t line = 1, column = 1;
    for (const char* q = doc_.buffer_->data(); q < err_at_ && q < end_; ++q) {
      if (*q == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Error{"TokenizerError", "invalid JSON: " + err_, line, column, {}};
  }

 private:
  bool fail(const char* message) {
    err_ = message;
    err_at_ = p_;
    return false;
  }

  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool parse_value(std::uint32_t index, std::size_t depth) {
    if (p_ >= end_) return fail("unexpected end of input");
    switch (*p_) {
      case '{':
        return parse_container(index, depth, true);
      case '[':
        return parse_container(index, depth, false);
      case '"': {
        std::string_view s;
        if (!parse_string(s)) return false;
        doc_.nodes_[index].kind = Kind::kString;
        doc_.nodes_[index].text = s;
        return true;
      }
      case 't':
        return literal("true", Kind::kTrue, index);
      case 'f':
        return literal("false", Kind::kFalse, index);
      case 'n':
        return literal("null", Kind::kNull, index);
      default:
        return parse_number(index);
    }
  }

  bool literal(const char* word, Kind kind, std::uint32_t index) {
    std::size_t n = std::strlen(word);
    if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) {
      return fail("invalid literal");
    }
    p_ += n;
    doc_.nodes_[index].kind = kind;
    return true;
  }

  bool parse_number(std::uint32_t index) {
    const char* start = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    const char* digits = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    if (p_ == digits) return fail("invalid value");
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      const char* frac = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == frac) return fail("invalid number");
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* exp = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == exp) return fail("invalid number");
    }
    doc_.nodes_[index].kind = Kind::kNumber;
    doc_.nodes_[index].text = std::string_view(start, static_cast<std::size_t>(p_ - start));
    return true;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool read_hex4(const char* q, char32_t& out) {
    if (end_ - q < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex_value(q[i]);
      if (h < 0) return false;
      out = (out << 4) | static_cast<char32_t>(h);
    }
    return true;
  }

  // Unescapes in place: the output never outgrows the input it came from.
  bool parse_string(std::string_view& out) {
    ++p_;  // opening quote
    char* write = p_;
    char* start = p_;
    while (true) {
      // Fast scan of the plain run.
      char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20)
        ++p_;
      if (write != run) std::memmove(write, run, static_cast<std::size_t>(p_ - run));
      write += p_ - run;
      if (p_ >= end_) return fail("unterminated string");
      char c = *p_;
      if (c == '"') {
        ++p_;
        break;
      }
      if (c != '\\') return fail("control character in string");
      if (end_ - p_ < 2) return fail("unterminated string");
      char e = p_[1];
      p_ += 2;
      switch (e) {
        case '"':
          *write++ = '"';
          break;
        case '\\':
          *write++ = '\\';
          break;
        case '/':
          *write++ = '/';
          break;
        case 'b':
          *write++ = '\b';
          break;
        case 'f':
          *write++ = '\f';
          break;
        case 'n':
          *write++ = '\n';
          break;
        case 'r':
          *write++ = '\r';
          break;
        case 't':
          *write++ = '\t';
          break;
        case 'u': {
          char32_t cp;
          if (!read_hex4(p_, cp)) return fail("invalid \\u escape");
          p_ += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            char32_t low;
            if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u' || !read_hex4(p_ + 2, low) ||
                low < 0xDC00 || low > 0xDFFF) {
              return fail("lone surrogate in \\u escape");
            }
            p_ += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("lone surrogate in \\u escape");
          }
          std::string tmp;
          unicode::append_utf8(tmp, cp);
          std::memcpy(write, tmp.data(), tmp.size());
          write += tmp.size();
          break;
        }
        default:
          return fail("invalid escape in string");
      }
    }
    out = std::string_view(start, static_cast<std::size_t>(write - start));
    return true;
  }

  bool parse_container(std::uint32_t index, std::size_t depth, bool is_object) {
    if (depth >= max_depth_) return fail("nesting deeper than max_json_depth");
    ++p_;
    doc_.nodes_[index].kind = is_object ? Kind::kObject : Kind::kArray;
    const char close = is_object ? '}' : ']';
    skip_ws();
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return true;
    }
    std::uint32_t previous = 0;
    std::uint32_t count = 0;
    while (true) {
      std::string_view key;
      if (is_object) {
        if (p_ >= end_ || *p_ != '"') return fail("expected a member name");
        if (!parse_string(key)) return false;
        skip_ws();
        if (p_ >= end_ || *p_ != ':') return fail("expected ':'");
        ++p_;
        skip_ws();
      }
      if (doc_.nodes_.size() >= 0xFFFFFFF0u) return fail("too many values");
      auto child = static_cast<std::uint32_t>(doc_.nodes_.size());
      doc_.nodes_.emplace_back();
      doc_.nodes_[child].key = key;
      if (previous == 0) {
        doc_.nodes_[index].first_child = child;
      } else {
        doc_.nodes_[previous].next = child;
      }
      previous = child;
      ++count;
      if (!parse_value(child, depth + 1)) return false;
      skip_ws();
      if (p_ >= end_) return fail("unexpected end of input");
      if (*p_ == ',') {
        ++p_;
        skip_ws();
        continue;
      }
      if (*p_ == close) {
        ++p_;
        break;
      }
      return fail(is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    doc_.nodes_[index].count = count;
    return true;
  }

  Document& doc_;
  std::size_t max_depth_;
  char* p_ = nullptr;
  char* end_ = nullptr;
  const char* err_at_ = nullptr;
  std::string err_;
};

Result<Document> Document::parse(std::string text, std::size_t max_depth) {
  Document doc;
  doc.buffer_ = std::make_unique<std::string>(std::move(text));
  Parser parser(doc, max_depth);
  if (!parser.run()) return parser.error();
  return doc;
}

const Node* Document::get(const Node& object, std::string_view key) const {
  if (object.kind != Kind::kObject) return nullptr;
  for (const Node* c = first(object); c; c = next(*c)) {
    if (c->key == key) return c;
  }
  return nullptr;
}

bool is_string(const Node* n) {
  return n && n->kind == Kind::kString;
}

bool as_bool(const Node* n, bool fallback) {
  if (!n) return fallback;
  if (n->kind == Kind::kTrue) return true;
  if (n->kind == Kind::kFalse) return false;
  return fallback;
}

bool as_uint(const Node* n, std::uint64_t& out) {
  if (!n || n->kind != Kind::kNumber) return false;
  auto [ptr, ec] = std::from_chars(n->text.data(), n->text.data() + n->text.size(), out);
  return ec == std::errc() && ptr == n->text.data() + n->text.size();
}

bool as_int(const Node* n, std::int64_t& out) {
  if (!n || n->kind != Kind::kNumber) return false;
  auto [ptr, ec] = std::from_chars(n->text.data(), n->text.data() + n->text.size(), out);
  return ec == std::errc() && ptr == n->text.data() + n->text.size();
}

}  // namespace chatwire::tokenize::json
