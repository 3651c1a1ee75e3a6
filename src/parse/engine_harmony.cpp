// The engine's states for gpt-oss's Harmony messages: channels and recipients.
#include "parse/engine.hpp"

namespace chatwire::parse {

// ---- harmony ----
bool Engine::hm_header() {
  if (at("<|start|>") == Tri::kYes && pos_ == cand_) {
    pos_ += 9;
    mark_ = pos_;
  } else if (pos_ == cand_) {
    mark_ = pos_;
  }
  MarkerSet::Hit hit = search(hm_header_markers_);
  if (hit.kind != MarkerSet::Hit::kFound || hit.tag != 1) {
    if (hit.kind != MarkerSet::Hit::kFound && !eof_) return false;
    // No <|message|>: the header is not a message; it stays text.
    pos_ = hit.kind == MarkerSet::Hit::kFound ? hit.at : buf_.size();
    fallback("malformed_message", "harmony header without <|message|>");
    return true;
  }
  std::string_view header = std::string_view(buf_).substr(mark_, hit.at - mark_);
  pos_ = hit.at + hit.len;
  std::string recipient, channel;
  if (auto p = header.find("to="); p != std::string_view::npos) {
    std::string_view v = header.substr(p + 3);
    auto e = v.find_first_of(" \t\n<");
    recipient.assign(v.substr(0, e));
  }
  if (auto p = header.find("<|channel|>"); p != std::string_view::npos) {
    std::string_view v = header.substr(p + 11);
    auto e = v.find_first_of(" \t\n<");
    channel.assign(v.substr(0, e));
  }
  cand_ = kNone;
  std::string name = recipient;
  if (name.starts_with("functions.")) name.erase(0, 10);
  if (!recipient.empty() && !valid_name(name)) {
    em_.warn("not_a_call",
             "harmony recipient '" + recipient + "' is not a function name; body kept as content",
             abs(mark_));
    hm_route_ = Route::kContent;
  } else if (!recipient.empty()) {
    open_call("", name);
    hm_route_ = Route::kArgs;
  } else if (channel == "analysis") {
    hm_route_ = Route::kReasoning;
  } else {
    hm_route_ = Route::kContent;
  }
  go(St::kHmBody);
  return true;
}

bool Engine::hm_body() {
  MarkerSet::Hit hit = search(hm_body_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    std::size_t end = emit_end(hit.at);
    if (end > pos_) emit(hm_route_, std::string_view(buf_).substr(pos_, end - pos_));
    pos_ = end;
    if (!eof_) return false;
  } else {
    if (hit.at > pos_) emit(hm_route_, std::string_view(buf_).substr(pos_, hit.at - pos_));
    pos_ = hit.at + (hit.tag == 1 ? hit.len : 0);
  }
  if (hm_route_ == Route::kArgs) close_call();
  back_to_text();
  return true;
}

}  // namespace chatwire::parse
