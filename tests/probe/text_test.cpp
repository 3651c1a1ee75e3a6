// Unit tests of the probe's text measurements (no rendering involved).
#include "probe/text.hpp"

#include <gtest/gtest.h>

namespace text = chatwire::probe::text;

TEST(ProbeText, MarkersKeepFullWidthBarsAndUpperCaseBrackets) {
  auto found = text::markers(
      "a<tool_call>x</tool_call> [TOOL_CALLS]<\xEF\xBD\x9C"
      "tool\xE2\x96\x81"
      "sep\xEF\xBD\x9C> < no> [lower]");
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0], "<tool_call>");
  EXPECT_EQ(found[1], "</tool_call>");
  EXPECT_EQ(found[2], "[TOOL_CALLS]");
  EXPECT_EQ(found[3],
            "<\xEF\xBD\x9C"
            "tool\xE2\x96\x81"
            "sep\xEF\xBD\x9C>");
}

TEST(ProbeText, MarkerCoreStripsBracketsOnly) {
  EXPECT_EQ(text::marker_core("<\xEF\xBD\x9C"
                              "tool_call_begin\xEF\xBD\x9C>"),
            "tool_call_begin");
  EXPECT_EQ(text::marker_core("<\xEF\xBD\x9C"
                              "tool_call_begin>"),
            "tool_call_begin");
  EXPECT_EQ(text::marker_core("</tool_call>"), "/tool_call");
  EXPECT_EQ(text::marker_core("[TOOL_CALLS]"), "TOOL_CALLS");
}

TEST(ProbeText, DiffRegionNeverCutsAMarker) {
  // A plain character diff would share the '<' of both markers.
  std::string a = "X<tool_call>\n{}\n</tool_call><|im_end|>\n";
  std::string b = "X<|im_end|>\n";
  auto d = text::diff_region(a, b);
  EXPECT_EQ(a.substr(d.start, d.end_a - d.start), "<tool_call>\n{}\n</tool_call>");
  EXPECT_EQ(d.end_b, d.start);
}

TEST(ProbeText, DiffRegionOfEqualStringsIsEmpty) {
  auto d = text::diff_region("same", "same");
  EXPECT_EQ(d.start, d.end_a);
}

TEST(ProbeText, HeaderPatternFromChatMLUserPrefix) {
  auto pattern = text::HeaderPattern::from_user_prefix("<|im_end|>\n<|im_start|>user\n");
  ASSERT_NE(pattern, nullptr);
  std::string out = "<|im_start|>user\nQ<|im_end|>\n<|im_start|>tool\nRESULT";
  auto m = pattern->last(out, 0, out.find("RESULT"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->role, "tool");
}

TEST(ProbeText, HeaderPatternAllowsHarmonyRecipients) {
  auto pattern = text::HeaderPattern::from_user_prefix("<|end|><|start|>user<|message|>");
  ASSERT_NE(pattern, nullptr);
  std::string out =
      "<|call|><|start|>functions.get_x to=assistant<|channel|>commentary<|message|>\"R\"";
  auto m = pattern->last(out, 0, out.find("\"R\""));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->role, "functions.get_x");
}

TEST(ProbeText, HeaderPatternTakesTheLastHeaderNotAnEarlierOverlap) {
  // Kimi-style: two role words in one header; an earlier end marker must not swallow it.
  auto pattern = text::HeaderPattern::from_user_prefix("<|im_user|>user<|im_middle|>");
  ASSERT_NE(pattern, nullptr);
  std::string out = "<|im_end|><|im_system|>get_x<|im_middle|>## Return\nRESULT";
  auto m = pattern->last(out, 0, out.find("RESULT"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->role, "system");
}

TEST(ProbeText, NoHeaderPatternWithoutARoleWord) {
  EXPECT_EQ(text::HeaderPattern::from_user_prefix("[INST] "), nullptr);
}
