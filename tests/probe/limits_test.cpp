// The probe's render limits: its own defaults (probe::probe_render_limits), far below the
// rendering defaults, so that probing a template that spins costs seconds; a real template's
// probe renders fit in them many times over (the survey tests compare every bundled template's
// profile with the oracle's under these defaults).
#include <gtest/gtest.h>

#include <string>

#include "chatwire/probe.hpp"

namespace probe = chatwire::probe;

namespace {

// 10^10 loop iterations before anything is written: only the step limit ends a render.
constexpr const char* kSpins =
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    "{% for m in messages %}{{ m.content }}{% endfor %}";

}  // namespace

TEST(ProbeLimits, TheProbeHasItsOwnLowerDefaults) {
  const chatwire::jinja::Limits rendering, probing = probe::Options{}.limits;
  EXPECT_EQ(probing.max_steps, probe::probe_render_limits().max_steps);
  EXPECT_LT(probing.max_steps * 10, rendering.max_steps);
  EXPECT_LT(probing.max_output_bytes, rendering.max_output_bytes);
}

TEST(ProbeLimits, ASpinningTemplateMeetsTheProbesStepLimit) {
  auto profile = probe::probe_source(kSpins);
  ASSERT_TRUE(profile) << profile.error().to_string();
  EXPECT_FALSE(profile->renders);
  EXPECT_NE(profile->baseline.error.find("max_steps=" +
                                         std::to_string(probe::probe_render_limits().max_steps)),
            std::string::npos)
      << profile->baseline.error;

  probe::Options tight;
  tight.limits.max_steps = 1000;
  auto tighter = probe::probe_source(kSpins, tight);
  ASSERT_TRUE(tighter);
  EXPECT_NE(tighter->baseline.error.find("max_steps=1000"), std::string::npos)
      << tighter->baseline.error;
}
