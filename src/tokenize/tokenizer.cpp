// Encode (added tokens -> normalizer -> normalized added tokens -> pre-tokenizers -> model ->
// post-processor), decode (decoder chain, skip_special_tokens, clean-up) and streaming decode.
#include <algorithm>

#include "tokenize/pipeline.hpp"
#include "tokenize/unicode.hpp"
#include "util/utf8.hpp"

namespace chatwire::tokenize {
namespace {

struct Segment {
  std::uint32_t added;  // index into TokenizerData::added, or kNoId for text
  std::uint32_t begin, end;
};

std::size_t leading_space_end(std::string_view s, std::size_t from) {
  std::size_t i = from;
  while (i < s.size()) {
    std::size_t len;
    char32_t cp = unicode::decode_utf8(s, i, len);
    if (!unicode::is_white_space(cp)) break;
    i += len;
  }
  return i;
}

// Start of the run of whitespace that ends at `to`.
std::size_t trailing_space_start(std::string_view s, std::size_t floor, std::size_t to) {
  std::size_t i = to;
  while (i > floor) {
    std::size_t start = i - 1;
    while (start > floor && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    std::size_t len;
    char32_t cp = unicode::decode_utf8(s, start, len);
    if (!unicode::is_white_space(cp)) break;
    i = start;
  }
  return i;
}

bool ends_with_word(std::string_view s, std::size_t end) {
  if (end == 0) return false;
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  std::size_t len;
  return unicode::is_word_char(unicode::decode_utf8(s, start, len));
}

bool starts_with_word(std::string_view s, std::size_t begin) {
  if (begin >= s.size()) return false;
  std::size_t len;
  return unicode::is_word_char(unicode::decode_utf8(s, begin, len));
}

// HF AddedVocabulary::find_matches over s[from, to): leftmost-longest matches, single_word
// rejection (the rejected span is still consumed), lstrip/rstrip absorbing whitespace.
void split_added(const TokenizerData& d, const AddedTrie& trie, std::string_view s,
                 std::uint32_t from, std::uint32_t to, std::vector<Segment>& out) {
  if (trie.empty()) {
    out.push_back({kNoId, from, to});
    return;
  }
  std::size_t start_offset = from;
  std::size_t pos = from;
  while (pos < to) {
    pos = trie.next_candidate(s, pos, to);
    if (pos >= to) break;
    std::size_t len = 0;
    std::uint32_t index = trie.longest_at(s.substr(0, to), pos, len);
    if (index == kNoId) {
      ++pos;
      continue;
    }
    std::size_t start = pos, stop = pos + len;
    pos = stop;
    const AddedToken& t = d.added[index];
    if (t.single_word) {
      bool start_space = start == from || !ends_with_word(s.substr(0, to), start);
      bool stop_space = stop == to || !starts_with_word(s.substr(0, to), stop);
      if (!start_space || !stop_space) continue;
    }
    if (t.lstrip) start = std::max(trailing_space_start(s, from, start), start_offset);
    // The search goes on from the match's end, not from the whitespace rstrip took: HF's matches
    // come from one pass over the text, so an added token inside that whitespace (`<R>\n\n b`
    // with "\n" added) is still a token, and the text after it starts where it ends (the span
    // rstrip took is covered twice, as HF's offsets show).
    if (t.rstrip) stop = leading_space_end(s.substr(0, to), stop);
    if (start_offset < start)
      out.push_back(
          {kNoId, static_cast<std::uint32_t>(start_offset), static_cast<std::uint32_t>(start)});
    out.push_back({index, static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(stop)});
    start_offset = stop;
  }
  if (start_offset < to) out.push_back({kNoId, static_cast<std::uint32_t>(start_offset), to});
}

// What an encode produces, in order: added tokens, and runs of pre-tokens whose model tokens are
// computed at the end, all at once (the model overlaps the work of many words; see bpe.cpp).
struct EncodeItem {
  bool added;
  std::uint32_t id;    // added: the token
  std::uint32_t a, b;  // added: its original byte range; else: its pre-tokens [a, b) in `pieces`
};

struct EncodeScratch {
  std::vector<Segment> raw_segments, norm_segments;
  Text norm, tmp;
  PreTokenized pre;
  SpanVector spans, matches;
  // The pre-tokenized text of the whole input, its pre-tokens, and the items in order.
  Text all;
  SpanVector pieces;
  std::vector<EncodeItem> items;
  TokenList tokens;
  HugeVector<std::uint32_t> piece_end;
  bool one_text = false;  // the input has one text between added tokens
  void reset(bool offsets) {
    all.clear();
    all.track = offsets;
    pieces.clear();
    items.clear();
  }
};

void push_token(Encoding& enc, bool offsets, std::uint32_t id, std::size_t b, std::size_t e) {
  enc.ids.push_back(id);
  if (offsets) enc.offsets.emplace_back(b, e);
}

// Normalizes and pre-tokenizes input[b, e) (a span without raw added tokens) into es.items.
Result<bool> encode_text(const TokenizerData& d, std::string_view input, std::uint32_t b,
                         std::uint32_t e, bool offsets, EncodeScratch& es) {
  Text& norm = es.norm;
  // Without normalizers the text is the input's: its texts between added tokens are copied once,
  // from the input, rather than into `norm` and again into the pre-tokenizer's text. Added tokens
  // start and end on character boundaries, so the offsets are the input's byte positions.
  const bool raw = d.normalizers.empty();
  std::string_view text = input.substr(b, e - b);
  if (!raw) {
    norm.assign(text, b, offsets);
    if (auto r = normalize(d.normalizers, norm, es.tmp); !r) return r;
    text = norm.s;
  }
  es.norm_segments.clear();
  split_added(d, d.normalized_trie, text, 0, static_cast<std::uint32_t>(text.size()),
              es.norm_segments);
  for (const Segment& seg : es.norm_segments) {
    if (seg.added != kNoId) {
      std::uint32_t ob = 0, oe = 0;
      if (offsets && seg.end > seg.begin) {
        ob = raw ? b + seg.begin : norm.begin[seg.begin];
        oe = raw ? b + seg.end : norm.end[seg.end - 1];
      }
      es.items.push_back({true, d.added[seg.added].id, ob, oe});
      continue;
    }
    if (seg.end == seg.begin) continue;
    PreTokenized& pre = es.pre;
    pre.pieces.clear();
    pre.text.clear();
    pre.text.track = offsets;
    if (raw) {
      pre.text.assign(text.substr(seg.begin, seg.end - seg.begin), b + seg.begin, offsets);
    } else if (es.norm_segments.size() == 1 && seg.begin == 0 && seg.end == norm.s.size()) {
      std::swap(pre.text, norm);  // the whole normalized text: no copy (norm is scratch)
      pre.text.track = offsets;
    } else {
      pre.text.append_from(norm, seg.begin, seg.end);
    }
    pre.pieces.emplace_back(0, seg.end - seg.begin);
    if (!d.pre_tokenizers.empty()) {
      bool at_start = b == 0 && seg.begin == 0;
      if (auto r = pre_tokenize(d.pre_tokenizers, pre, at_start, es.tmp, es.spans, es.matches); !r)
        return r;
    }
    const auto base = static_cast<std::uint32_t>(es.all.s.size());
    const auto first = static_cast<std::uint32_t>(es.pieces.size());
    if (base == 0 && first == 0) {
      // The first text of the input (usually the only one): taken over, not copied. Its pieces
      // only when it is the only text: the list of all pieces keeps the room reserved for them.
      std::swap(es.all, pre.text);
      if (es.one_text && es.norm_segments.size() == 1) {
        std::swap(es.pieces, pre.pieces);
      } else {
        es.pieces.assign(pre.pieces.begin(), pre.pieces.end());
      }
    } else {
      // Many texts (Gemma 3: about 20k per MB, between added tokens): room for the whole input
      // once, rather than doubling copies through fresh pages (normalizing may lengthen it).
      if (es.all.s.capacity() < input.size()) es.all.s.reserve(input.size() + input.size() / 2);
      es.all.append_from(pre.text, 0, pre.text.s.size());
      for (auto [pb, pe] : pre.pieces) es.pieces.emplace_back(base + pb, base + pe);
    }
    es.items.push_back({false, 0, first, static_cast<std::uint32_t>(es.pieces.size())});
  }
  return true;
}

// Runs the model on every collected pre-token and emits the items in order.
Result<bool> finish_encode(const TokenizerData& d, bool offsets, EncodeScratch& es, Encoding& enc) {
  es.tokens.clear();
  es.tokens.reserve(std::min(es.all.s.size() / 2 + 16, std::size_t{1} << 24));  // no growth copies
  if (auto r = run_model(d, es.all.s, es.pieces, es.tokens, es.piece_end); !r) return r;
  const Text& all = es.all;
  std::size_t k = 0;
  for (const EncodeItem& item : es.items) {
    if (item.added) {
      push_token(enc, offsets, item.id, item.a, item.b);
      continue;
    }
    if (!offsets) {
      const std::size_t end = item.b > item.a ? es.piece_end[item.b - 1] : k;
      for (; k < end; ++k) enc.ids.push_back(es.tokens[k].id);
      continue;
    }
    for (std::uint32_t p = item.a; p < item.b; ++p) {
      auto [pb, pe] = es.pieces[p];
      std::uint32_t at = pb;
      for (; k < es.piece_end[p]; ++k) {
        const TokenPiece& t = es.tokens[k];
        std::uint32_t last = std::min<std::uint32_t>(at + t.len, pe) - 1;
        push_token(enc, true, t.id, all.begin[at], all.end[last]);
        at += t.len;
      }
    }
  }
  return true;
}

// WHATWG/Rust lossy decoding: each maximal invalid subpart becomes one U+FFFD.
void lossy(std::string& out, std::string_view in) {
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size(), i = 0;
  while (i < n) {
    unsigned char b = s[i];
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF)
      need = 1;
    else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    if (need == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    std::size_t got = 0;
    while (got < need && j < n) {
      unsigned char c = s[j];
      unsigned char l = got == 0 ? lo : 0x80, h = got == 0 ? hi : 0xBF;
      if (c < l || c > h) break;
      ++j;
      ++got;
    }
    if (got == need) {
      out.append(in.substr(i, j - i));
    } else {
      out += "\xEF\xBF\xBD";
    }
    i = j;
  }
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  std::size_t last = 0, pos;
  while ((pos = s.find(from, last)) != std::string::npos) {
    out.append(s, last, pos - last);
    out.append(to);
    last = pos + from.size();
  }
  if (last == 0) return;
  out.append(s, last, std::string::npos);
  s = std::move(out);
}

// transformers' clean_up_tokenization.
void clean_up(std::string& s) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
}

// ByteLevel decoding of a run of ordinary tokens (chars of the byte alphabet back to bytes).
void byte_level_run(const std::vector<std::string>& tokens, std::size_t b, std::size_t e,
                    std::string& out) {
  static const auto table = [] {
    std::array<std::int16_t, 324> t{};
    t.fill(-1);
    int n = 0;
    for (int byte = 0; byte < 256; ++byte) {
      bool printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) ||
                       (byte >= 174 && byte <= 255);
      int c = printable ? byte : 256 + n++;
      t[c] = static_cast<std::int16_t>(byte);
    }
    return t;
  }();
  std::string bytes;
  for (std::size_t k = b; k < e; ++k) {
    const std::string& tok = tokens[k];
    std::size_t mark = bytes.size();
    bool mapped = true;
    std::size_t i = 0;
    while (i < tok.size()) {
      std::size_t len;
      char32_t cp = unicode::decode_utf8(tok, i, len);
      if (cp >= table.size() || table[cp] < 0) {
        mapped = false;
        break;
      }
      bytes.push_back(static_cast<char>(table[cp]));
      i += len;
    }
    if (!mapped) {  // HF: a token outside the alphabet contributes its own bytes
      bytes.resize(mark);
      bytes += tok;
    }
  }
  lossy(out, bytes);
}

void decode_chain(const TokenizerData& d, const DecoderStep& step,
                  std::vector<std::string>& tokens) {
  switch (step.kind) {
    case DecoderKind::kByteLevel: {
      std::vector<std::string> out;
      std::size_t run = 0;
      for (std::size_t i = 0; i <= tokens.size(); ++i) {
        std::uint32_t id;
        bool added = i < tokens.size() && d.added_content.get(tokens[i], id);
        if (i == tokens.size() || added) {
          if (i > run) {
            out.emplace_back();
            byte_level_run(tokens, run, i, out.back());
          }
          if (added) out.push_back(tokens[i]);
          run = i + 1;
        }
      }
      tokens = std::move(out);
      return;
    }
    case DecoderKind::kByteFallback: {
      std::vector<std::string> out;
      std::string pending;
      auto flush = [&] {
        if (pending.empty()) return;
        out.emplace_back();
        // transformers.js decodes these bytes with a default TextDecoder, which drops a leading
        // BOM.
        std::string_view bytes(pending);
        if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
        lossy(out.back(), bytes);
        pending.clear();
      };
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      for (auto& t : tokens) {
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex(t[3]) >= 0 &&
            hex(t[4]) >= 0) {
          pending.push_back(static_cast<char>(hex(t[3]) * 16 + hex(t[4])));
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      tokens = std::move(out);
      return;
    }
    case DecoderKind::kFuse: {
      std::string all;
      for (auto& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      return;
    }
    case DecoderKind::kStrip: {
      for (auto& t : tokens) {
        std::size_t b = 0, e = t.size();
        const std::string& c = step.content;
        for (std::size_t k = 0;
             k < step.strip_start && !c.empty() && t.compare(b, c.size(), c) == 0; ++k)
          b += c.size();
        for (std::size_t k = 0; k < step.strip_stop && !c.empty() && e >= b + c.size() &&
                                t.compare(e - c.size(), c.size(), c) == 0;
             ++k) {
          e -= c.size();
        }
        t = t.substr(b, e - b);
      }
      return;
    }
    case DecoderKind::kReplace: {
      for (auto& t : tokens) {
        if (step.regex) {
          SpanVector m;
          if (!step.regex->find_all(t, m)) continue;
          std::string out;
          std::size_t last = 0;
          for (auto [b, e] : m) {
            out.append(t, last, b - last);
            out += step.content;
            last = e;
          }
          out.append(t, last, std::string::npos);
          t = std::move(out);
        } else {
          replace_all(t, step.pattern, step.content);
        }
      }
      return;
    }
    case DecoderKind::kMetaspace: {
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        replace_all(tokens[i], step.replacement, " ");
        if (i == 0 && step.prepend && !tokens[i].empty() && tokens[i][0] == ' ')
          tokens[i].erase(0, 1);
      }
      return;
    }
    case DecoderKind::kWordPiece: {
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i != 0) {
          if (tokens[i].compare(0, step.prefix.size(), step.prefix) == 0) {
            tokens[i].erase(0, step.prefix.size());
          } else {
            tokens[i] = std::string(" ") + tokens[i];
          }
        }
        if (step.cleanup) clean_up(tokens[i]);
      }
      return;
    }
  }
}

}  // namespace

void append_lossy_utf8(std::string& out, std::string_view bytes) {
  lossy(out, bytes);
}

Result<Encoding> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  const TokenizerData& d = *data_;
  if (text.size() > options.max_input_bytes) {
    return Error{"LimitError", "input text is larger than max_input_bytes", 0, 0, {}};
  }
  if (text.size() >= 0xFFFFFFF0u)
    return Error{"LimitError", "input text is larger than 4 GiB", 0, 0, {}};
  if (!unicode::is_valid_utf8(text))
    return Error{
        "ValueError",
        "input text is not valid UTF-8 at byte " + std::to_string(util::utf8::first_invalid(text)),
        0,
        0,
        {}};
  thread_local EncodeScratch es;
  Encoding enc;
  enc.ids.reserve(text.size() / 3 + 8);
  const bool offsets = options.with_offsets;
  es.raw_segments.clear();
  split_added(d, d.raw_trie, text, 0, static_cast<std::uint32_t>(text.size()), es.raw_segments);
  // The segments vector is reused by nested calls; copy it out first.
  std::vector<Segment> segments = es.raw_segments;
  // A large input: its span lists sized once (address space, in huge pages: a list touched for
  // the first time costs a page fault per 4 KB otherwise, and growth copies it through every
  // size). The pre-tokens of the whole input by its size; the lists that hold one text between
  // added tokens at a time by the longest such text: a list on huge pages of which one entry is
  // written still costs a fresh 2 MB (about 0.27 ms here), and Gemma 3 has some 20k short texts
  // per MB.
  auto reserve_spans = [](std::size_t bytes, std::initializer_list<SpanVector*> lists) {
    if (bytes < (std::size_t{1} << 18)) return;
    const std::size_t spans = std::min(bytes / 2 + 16, std::size_t{1} << 24);
    for (SpanVector* v : lists) {
      if (v->capacity() < spans) v->reserve(spans);
    }
  };
  std::size_t longest = 0, texts = 0;
  for (const Segment& seg : segments) {
    if (seg.added != kNoId || seg.end == seg.begin) continue;
    longest = std::max<std::size_t>(longest, seg.end - seg.begin);
    ++texts;
  }
  reserve_spans(text.size(), {&es.pieces});
  reserve_spans(longest, {&es.spans, &es.matches, &es.pre.pieces});
  es.reset(offsets);
  es.one_text = texts == 1;
  for (const Segment& seg : segments) {
    if (seg.added != kNoId) {
      es.items.push_back({true, d.added[seg.added].id, seg.begin, seg.end});
      continue;
    }
    if (seg.end == seg.begin) continue;
    if (auto r = encode_text(d, text, seg.begin, seg.end, offsets, es); !r) return r.error();
  }
  if (auto r = finish_encode(d, offsets, es, enc); !r) return r.error();
  if (options.add_special_tokens && d.has_post_template) {
    Encoding out;
    for (const TemplatePiece& piece : d.post_single) {
      if (piece.is_sequence) {
        out.ids.insert(out.ids.end(), enc.ids.begin(), enc.ids.end());
        if (offsets) out.offsets.insert(out.offsets.end(), enc.offsets.begin(), enc.offsets.end());
      } else {
        for (std::uint32_t id : piece.special_ids) push_token(out, offsets, id, 0, 0);
      }
    }
    return out;
  }
  return enc;
}

Result<std::vector<std::uint32_t>> Tokenizer::encode_ids(std::string_view text,
                                                         bool add_special_tokens) const {
  EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  auto r = encode(text, options);
  if (!r) return r.error();
  return std::move(r->ids);
}

Result<std::string> Tokenizer::decode(std::span<const std::uint32_t> ids,
                                      const DecodeOptions& options) const {
  const TokenizerData& d = *data_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::uint32_t id : ids) {
    std::string_view text;
    if (id < d.id_text.size() && (!d.id_text[id].empty() || (d.id_flags[id] & 2))) {
      text = d.id_text[id];
    } else if (d.unk_id != kNoId) {
      text = d.id_text[d.unk_id];  // transformers.js: unknown ids read as the unk token
    } else {
      return Error{
          "ValueError", "token id " + std::to_string(id) + " is not in the vocabulary", 0, 0, {}};
    }
    if (options.skip_special_tokens) {
      std::uint32_t sid;
      if (d.special_content.get(text, sid)) continue;
    }
    tokens.emplace_back(text);
  }
  std::string out;
  if (d.decoders.empty()) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
  } else {
    for (const DecoderStep& step : d.decoders) decode_chain(d, step, tokens);
    for (auto& t : tokens) out += t;
  }
  if (options.clean_up_tokenization_spaces.value_or(d.clean_up_tokenization_spaces)) clean_up(out);
  return out;
}

std::size_t Tokenizer::vocab_size() const {
  return data_->id_text.size();
}

std::size_t Tokenizer::model_vocab_size() const {
  return data_->vocab.size();
}

std::size_t Tokenizer::distinct_vocab_size() const {
  return data_->vocab_with_added;
}

std::optional<std::uint32_t> Tokenizer::token_to_id(std::string_view token) const {
  std::uint32_t id;
  if (data_->added_content.get(token, id)) return id;
  if (data_->byte_level) {
    // Vocab keys are raw bytes: translate the file spelling.
    for (std::uint32_t i = 0; i < data_->id_text.size(); ++i) {
      if (data_->id_text[i] == token) return i;
    }
    return std::nullopt;
  }
  if (data_->vocab.get(token, id)) return id;
  return std::nullopt;
}

std::optional<std::string> Tokenizer::id_to_token(std::uint32_t id) const {
  if (id >= data_->id_text.size()) return std::nullopt;
  if (data_->id_text[id].empty() && !(data_->id_flags[id] & 2)) return std::nullopt;
  return std::string(data_->id_text[id]);
}

bool Tokenizer::is_special(std::uint32_t id) const {
  return id < data_->id_flags.size() && (data_->id_flags[id] & 1) != 0;
}

std::optional<std::string> Tokenizer::bos_token() const {
  return data_->bos_token;
}
std::optional<std::string> Tokenizer::eos_token() const {
  return data_->eos_token;
}

// ---- streaming ----
//
// The windows are decoded without clean-up (it is not prefix-stable: " ." becomes "." once the "."
// arrives); clean-up is applied to the emitted text instead, holding back a tail that could still
// start one of its patterns.

namespace {

// Length of the tail of `s` that clean-up might still rewrite once more text arrives: from the
// first space that could start a pattern, moved back so that no pattern straddles the cut and no
// space precedes it.
std::size_t cleanup_holdback(std::string_view s) {
  static constexpr std::string_view kPatterns[] = {" .",   " ?",  " !",  " ,",   " ' ",
                                                   " n't", " 'm", " 's", " 've", " 're"};
  // Every pattern starts with a space and is at most 4 bytes long, and replacements only remove
  // spaces: once 4 non-space bytes follow the last space, nothing before them can change. Else hold
  // back from that space, and from the spaces and quotes before it (through which replacements
  // cascade: "  ' re" -> " 're" -> "'re").
  std::size_t cut = s.size();
  std::size_t last_space = s.rfind(' ');
  if (last_space != std::string_view::npos && s.size() - last_space <= 4) {
    cut = last_space;
    while (cut > 0 && (s[cut - 1] == ' ' || s[cut - 1] == '\'')) --cut;
    // " ' " -> "'" can join an " n" before it to a "t" after it: " n ' t" -> " n't" -> "n't".
    if (cut >= 2 && s[cut - 1] == 'n' && s[cut - 2] == ' ') cut -= 2;
  }
  // And no pattern may straddle the cut, nor a space precede it.
  for (bool moved = true; moved;) {
    moved = false;
    while (cut > 0 && s[cut - 1] == ' ') {
      --cut;
      moved = true;
    }
    for (std::string_view p : kPatterns) {
      std::size_t from = cut >= p.size() ? cut - p.size() + 1 : 0;
      std::size_t o = s.find(p, from);
      if (o != std::string_view::npos && o < cut && o + p.size() > cut) {
        cut = o;
        moved = true;
      }
    }
  }
  return s.size() - cut;
}

// A DecodeStream step: sets `fresh` to the text of ids[prefix_offset:] past that of
// ids[prefix_offset:read_offset] (emitted already). False (wait) when not final and that text ends
// in an incomplete character (decoded as U+FFFD) or has not grown. Inlined into both callers, as
// the code it replaces was (as a call, with the string returned, it cost ~1.5% per streamed id).
[[gnu::always_inline]] inline Result<bool> added_text(
    const Tokenizer& tokenizer, std::span<const std::uint32_t> ids, std::size_t prefix_offset,
    std::size_t read_offset, const DecodeOptions& options, bool final, std::string& fresh) {
  auto prefix = tokenizer.decode(ids.subspan(prefix_offset, read_offset - prefix_offset), options);
  if (!prefix) return prefix.error();
  auto full = tokenizer.decode(ids.subspan(prefix_offset), options);
  if (!full) return full.error();
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  const bool incomplete =
      full->size() >= 3 && full->compare(full->size() - 3, 3, kReplacement) == 0;
  if (!final && (full->size() <= prefix->size() || incomplete)) return false;
  if (full->size() > prefix->size()) fresh.assign(*full, prefix->size());
  return true;
}

}  // namespace

DecodeStream::DecodeStream(Tokenizer tokenizer, DecodeOptions options)
    : tokenizer_(std::move(tokenizer)), options_(options) {
  cleanup_ = options_.clean_up_tokenization_spaces.value_or(
      tokenizer_.data().clean_up_tokenization_spaces);
  options_.clean_up_tokenization_spaces = false;
}

Result<std::string> DecodeStream::push(std::uint32_t id) {
  return push(std::span<const std::uint32_t>(&id, 1));
}

std::string DecodeStream::emit(std::string raw, bool final) {
  if (!cleanup_) return raw;
  held_ += raw;
  std::size_t keep = final ? 0 : cleanup_holdback(held_);
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  clean_up(out);
  return out;
}

Result<std::string> DecodeStream::push(std::span<const std::uint32_t> ids) {
  const std::size_t before = ids_.size();
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  std::string fresh;
  auto ready = added_text(tokenizer_, ids_, prefix_offset_, read_offset_, options_, false, fresh);
  if (!ready) {  // an id it cannot decode: the stream is as it was, so it can go on
    ids_.resize(before);
    return ready.error();
  }
  if (!*ready) return std::string();
  prefix_offset_ = read_offset_;
  read_offset_ = ids_.size();
  return emit(std::move(fresh), false);
}

Result<std::string> DecodeStream::finish() {
  std::string fresh;
  auto ready = added_text(tokenizer_, ids_, prefix_offset_, read_offset_, options_, true, fresh);
  if (!ready) return ready.error();
  prefix_offset_ = read_offset_ = ids_.size();
  return emit(std::move(fresh), true);
}

}  // namespace chatwire::tokenize
