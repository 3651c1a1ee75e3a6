// The hand-written strftime conversions against the C library's strftime in the C locale
// (what the oracle's datetime.strftime calls): every conversion formatted by hand, one at a
// time and mixed, over every day of several spans of years (leap years, century years, the
// four-digit edges) at times of day that hit the 00 and 12 hour cases.
#include "jinja/strftime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <clocale>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace {

using chatwire::jinja::c_conversion;
using chatwire::jinja::format_time;
using chatwire::jinja::kMaxCConversion;

// The conversions the hand formatter must take for four-digit years: if one of them falls
// back to the C library the speed-up is silently gone, so that fails too.
constexpr std::string_view kHandled = "YCymdejHIMSpAaBbhuw%ntFDxTXRrc";

std::string c_strftime(const std::string& fmt, const std::tm& tm) {
  char buf[512];
  std::size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
  return std::string(buf, n);
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

// Broken-down UTC times for every day of the spans, each at two times of day.
std::vector<std::tm> sample_times() {
  struct Span {
    int first, last;
  };
  const Span spans[] = {{998, 1001}, {1899, 1901}, {1999, 2029}, {2099, 2101}, {9998, 9999}};
  const int seconds_of_day[] = {0,
                                59 * 60 + 59,
                                1 * 3600 + 2 * 60 + 3,
                                11 * 3600 + 59 * 60 + 59,
                                12 * 3600,
                                12 * 3600 + 30 * 60 + 45,
                                13 * 3600 + 1,
                                23 * 3600 + 59 * 60 + 59,
                                9 * 3600 + 5 * 60 + 7,
                                21 * 3600 + 10 * 60 + 20,
                                6 * 3600,
                                18 * 3600 + 45 * 60};
  constexpr std::size_t kTimes = sizeof seconds_of_day / sizeof seconds_of_day[0];
  std::vector<std::tm> out;
  for (const Span& span : spans) {
    const std::int64_t first = days_from_civil(span.first, 1, 1);
    const std::int64_t end = days_from_civil(span.last + 1, 1, 1);
    for (std::int64_t day = first; day < end; ++day) {
      for (std::size_t k = 0; k < 2; ++k) {
        const auto which = static_cast<std::size_t>(day * 5 + static_cast<std::int64_t>(k) * 7);
        const std::time_t t = static_cast<std::time_t>(
            day * 86400 + seconds_of_day[(which % kTimes + kTimes) % kTimes]);
        std::tm tm{};
        EXPECT_NE(gmtime_r(&t, &tm), nullptr);
        out.push_back(tm);
      }
    }
  }
  // Every hour and a spread of minutes and seconds on one day, and a leap second.
  for (int h = 0; h < 24; ++h)
    for (int m = 0; m < 60; m += 7) {
      const std::time_t t = static_cast<std::time_t>(days_from_civil(2024, 2, 29) * 86400 +
                                                     h * 3600 + m * 60 + (h * 7 + m) % 60);
      std::tm tm{};
      EXPECT_NE(gmtime_r(&t, &tm), nullptr);
      out.push_back(tm);
    }
  std::tm leap = out.back();
  leap.tm_sec = 60;
  out.push_back(leap);
  return out;
}

class StrftimeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(std::setlocale(LC_TIME, "C"), nullptr); }
};

TEST_F(StrftimeTest, EachConversionMatchesCLibrary) {
  const std::vector<std::tm> times = sample_times();
  ASSERT_GT(times.size(), 20000u);
  std::size_t by_hand = 0;
  for (const std::tm& tm : times) {
    const bool four_digit_year = tm.tm_year + 1900 >= 1000 && tm.tm_year + 1900 <= 9999;
    for (char conv : kHandled) {
      // Guard bytes around the output catch writes outside the length returned.
      char buf[kMaxCConversion + 2];
      std::fill(std::begin(buf), std::end(buf), '#');
      const std::size_t n = c_conversion(conv, tm, buf + 1);
      const std::string expected = c_strftime(std::string("%") + conv, tm);
      ASSERT_EQ(buf[0], '#');
      ASSERT_LE(n, kMaxCConversion);
      if (n != 0) {
        // (A refused conversion may leave partial output: the caller overwrites it.)
        for (std::size_t k = n + 1; k < sizeof buf; ++k)
          ASSERT_EQ(buf[k], '#') << "%" << conv << " wrote past its length";
        ++by_hand;
        ASSERT_EQ(std::string(buf + 1, n), expected)
            << "%" << conv << " for " << c_strftime("%F %T", tm);
      } else {
        ASSERT_FALSE(four_digit_year)
            << "%" << conv << " not formatted by hand for " << c_strftime("%F %T", tm);
      }
      // What strftime_now prints goes through format_time either way.
      ASSERT_EQ(format_time(std::string("%") + conv, tm, 0), expected) << "%" << conv;
    }
  }
  EXPECT_GT(by_hand, times.size() * (kHandled.size() - 4));
}

TEST_F(StrftimeTest, MixedFormatsMatchCLibrary) {
  const std::string formats[] = {
      "%Y-%m-%d",
      "%d %B %Y",
      "%d %b %Y",
      "Today Date: %d %b %Y, %A %a %h %e %j %y %C",
      "%H:%M:%S %I %p | %%Y %% 100%% | %u %w%n%t|%F %T %D %R %r %x %X %c",
      "no conversions at all",
      "%a%b%c%d%e%%%%",
      // Conversions the hand formatter leaves to the C library, and flagged ones.
      "%U %W %V %G %g %s %k %l %P %-d %_m %0e %Ey %Od %#B %^a",
  };
  for (const std::tm& tm : sample_times())
    for (const std::string& fmt : formats)
      ASSERT_EQ(format_time(fmt, tm, 0), c_strftime(fmt, tm))
          << fmt << " for " << c_strftime("%F %T", tm);
}

TEST_F(StrftimeTest, PythonOwnDirectives) {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 6;
  tm.tm_mday = 4;
  tm.tm_wday = 5;
  tm.tm_yday = 184;
  EXPECT_EQ(format_time("%f|%z|%Z|%Y", tm, 123), "000123|||2025");
  EXPECT_EQ(format_time("%f", tm, 999999), "999999");
  EXPECT_EQ(format_time("%f", tm, 0), "000000");
  // A lone '%' at the end, and flags running off the end, are literal text.
  EXPECT_EQ(format_time("50%", tm, 0), "50%");
  EXPECT_EQ(format_time("x%-_", tm, 0), "x%-_");
}

// strftime_now with a frozen clock: the ISO parse (weekday, day of the year) and the
// formatting together, against gmtime + strftime of the same instant.
TEST_F(StrftimeTest, FrozenClockMatchesGmtime) {
  auto tmpl = chatwire::jinja::Template::compile(
      "{{ strftime_now('%Y-%m-%d %j %a %A %b %B %e %H %I %M %S %p %y %U %W %V %G %c %f') }}");
  ASSERT_TRUE(tmpl.ok());
  const chatwire::Value context = chatwire::Value::empty_dict();
  for (const std::tm& tm : sample_times()) {
    if (tm.tm_year + 1900 < 1000 || tm.tm_sec == 60) continue;  // fromisoformat needs 4 digits
    const std::string iso = c_strftime("%Y-%m-%dT%H:%M:%S.25", tm);
    chatwire::jinja::RenderOptions options;
    options.now = iso;
    auto result = tmpl->render(context, options);
    ASSERT_TRUE(result.ok()) << iso;
    ASSERT_EQ(
        result->output,
        c_strftime("%Y-%m-%d %j %a %A %b %B %e %H %I %M %S %p %y %U %W %V %G %c ", tm) + "250000")
        << iso;
  }
}

}  // namespace
