// The decision model (model/) against hand-written tables (model/decision_tables.h): each row's
// expected outcome comes from a rule of docs/dispatch_model.md (cited beside it), never from
// dispatch/ or from the model. The same rows are replayed by `mxgate gate` (decisions.tables).
// Covers: selection on every platform, load actions and apply paths of every linear kernel,
// lifecycles out of order (apply before processing, model-side shuffle before and after
// processing, second processing), declared activation-scale orders, negotiation, branch names.
// Does not cover: dispatch itself (test_decision_dispatch.cpp compares dispatch with the model).
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/decision_model.h"
#include "model/decision_tables.h"

namespace mxgate::model {
namespace {

using tables::check;

constexpr Platform kGfx950 = Platform::kGfx950, kGfx942 = Platform::kGfx942,
                   kSm90 = Platform::kSm90, kHost = Platform::kHost;
constexpr ScaleDtype kE8m0 = ScaleDtype::kE8m0;

// A registry that picks a linear kernel the platform lacks, skips the one a rule puts first, or
// accepts a layer no linear kernel can run, sends the layer to the wrong code (or none) silently.
TEST(DecisionModelSelect, TableOfRules) {
  EXPECT_GE(tables::select_rows().size(), 20u);
  for (const tables::SelectRow& r : tables::select_rows()) EXPECT_EQ(check(r), std::nullopt);
}

// A plan whose load actions or apply path depart from the rules re-materializes a constant per
// step, relays a weight out that other code reads, or runs a GEMM outside its contract.
TEST(DecisionModelPlan, TableOfRules) {
  EXPECT_GE(tables::plan_rows().size(), 12u);
  for (const tables::PlanRow& r : tables::plan_rows()) EXPECT_EQ(check(r), std::nullopt);
  LayerSpec k144;
  k144.n = 5120;
  k144.k = 144;
  EXPECT_FALSE(plan(k144, kGfx950, {}).has_value()) << "§3.4 no linear kernel, no plan";
}

// Lifecycles tests may reorder (I4): apply before processing, the model's shuffle before and
// after the linear kernel's, a second processing. A rule broken here is a double shuffle, a
// skipped upcast, an illegal dot_scaled or a fused activation read in the wrong order.
TEST(DecisionModelLifecycle, TableOfRules) {
  EXPECT_GE(tables::lifecycle_rows().size(), 8u);
  for (const tables::LifecycleRow& r : tables::lifecycle_rows()) {
    EXPECT_EQ(check(r), std::nullopt);
  }
}

// A negotiation that keeps the fused path when consumers disagree hands one of them scales in
// the wrong order: same shape, wrong numbers (vLLM #56433 defect 1).
TEST(DecisionModelNegotiation, TableOfRules) {
  EXPECT_GE(tables::negotiation_rows().size(), 7u);
  for (const tables::NegotiationRow& r : tables::negotiation_rows()) {
    EXPECT_EQ(check(r), std::nullopt);
  }
}

// The gate's replay sees every row and reports nothing on the model as written; a row changed
// to a wrong expectation is reported (the replay can fail).
TEST(DecisionModelTables, GateReplayCoversEveryRowAndCanFail) {
  std::size_t rows = 0;
  EXPECT_TRUE(tables::replay_model(&rows).empty());
  EXPECT_EQ(rows, tables::select_rows().size() + tables::plan_rows().size() +
                      tables::lifecycle_rows().size() + tables::negotiation_rows().size() + 1);
  tables::SelectRow wrong = tables::select_rows().front();
  wrong.want = LinearKernel::kBf16;
  const std::optional<std::string> v = check(wrong);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find(wrong.what), std::string::npos) << *v;
}

// Coverage tags come from branch names: two branches sharing a name would hide one of them.
TEST(DecisionModelBranches, NamesAreDistinctAndGrouped) {
  std::set<std::string> names;
  for (Branch b : all_branches()) {
    const std::string n(name(b));
    EXPECT_TRUE(names.insert(n).second) << n;
    const std::string group = n.substr(0, n.find('.'));
    EXPECT_TRUE(group == "select" || group == "load" || group == "model_shuffle" ||
                group == "apply" || group == "order" || group == "negotiate")
        << n;
  }
  EXPECT_EQ(names.size(), kBranchCount);
}

// §3.4: selection reads (N, K), the scheme and the scale dtype, never the layer flags.
TEST(DecisionModelSelect, FlagsNeverChangeTheSelection) {
  for (Platform p : {kGfx950, kGfx942, kSm90, kHost}) {
    for (uint64_t n : {16u, 128u, 2112u, 4096u}) {
      for (uint64_t k : {88u, 96u, 128u, 576u}) {
        for (Scheme s : {Scheme::kMxfp8, Scheme::kFp8Block, Scheme::kBf16}) {
          const LayerSpec l{.n = n, .k = k, .scheme = s, .weight_scale = kE8m0};
          const std::optional<LinearKernel> plain = select(l, p, {}).linear_kernel;
          for (auto [bmm, skip] : {std::pair{true, false}, {false, true}, {true, true}}) {
            LayerSpec flagged = l;
            flagged.is_bmm = bmm;
            flagged.skip_weight_relayout = skip;
            EXPECT_EQ(select(flagged, p, {}).linear_kernel, plain) << n << "x" << k;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace mxgate::model
