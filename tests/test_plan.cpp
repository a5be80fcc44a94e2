// The plan table covers every layer at every m from 1 to 4096, and each plan can serve its shape.
#include <gtest/gtest.h>

#include "solgemm/plan.hpp"
#include "solgemm/solgemm.hpp"

namespace {

struct Layer {
  const char* name;
  int64_t n, k;
  solgemm::Storage storage;
};

TEST(Plan, CoversEveryLayerAtEveryM) {
  const Layer layers[] = {{"qkv_gate", 2304, 8192, solgemm::Storage::packed12},
                          {"o", 8192, 1024, solgemm::Storage::packed12},
                          {"pooler", 4096, 8192, solgemm::Storage::packed12},
                          {"unpooler", 8192, 4096, solgemm::Storage::packed12},
                          {"unpooler_slice", 1024, 4096, solgemm::Storage::packed12},
                          {"router", 256, 8192, solgemm::Storage::hilo},
                          {"raw", 2304, 8192, solgemm::Storage::raw_bf16},
                          {"fallback", 4096, 8192, solgemm::Storage::packed16}};
  for (const auto& l : layers) {
    for (int64_t m = 1; m <= 4096; ++m) {
      const auto p = solgemm::select_plan({l.n, l.k, l.storage}, m);
      SCOPED_TRACE(testing::Message() << l.name << " m=" << m << " plan=" << p.str());
      EXPECT_FALSE(p.why.empty());
      EXPECT_GE(p.cfg.split_k, 1);
      switch (p.kernel) {
        case solgemm::Kernel::reference: break;  // any shape
        case solgemm::Kernel::skinny:
          EXPECT_TRUE(l.storage == solgemm::Storage::packed12 || l.storage == solgemm::Storage::packed16);
          EXPECT_LE(m, 64);  // past 8 * n_tiles tokens: chunks of 8 * n_tiles over the grid
          EXPECT_TRUE(p.cfg.n_tiles == 1 || p.cfg.n_tiles == 2 || p.cfg.n_tiles == 4);
          break;
        case solgemm::Kernel::router: EXPECT_EQ(l.storage, solgemm::Storage::hilo); break;
        case solgemm::Kernel::wide:
          EXPECT_TRUE(l.storage == solgemm::Storage::packed12 || l.storage == solgemm::Storage::packed16);
          EXPECT_GT(m, 64);
          EXPECT_LE(p.cfg.split_k, 8);
          break;
        case solgemm::Kernel::vendor:
          EXPECT_TRUE(l.storage == solgemm::Storage::packed12 || l.storage == solgemm::Storage::packed16 ||
                      l.storage == solgemm::Storage::hilo);
          break;
      }
    }
  }
}

}  // namespace

namespace {

TEST(Plan, ForcedFamilies) {
  const solgemm::Shape packed{4096, 8192, solgemm::Storage::packed12};
  EXPECT_EQ(solgemm::select_plan(packed, 128, solgemm::Kernel::wide).kernel, solgemm::Kernel::wide);
  EXPECT_EQ(solgemm::select_plan(packed, 3, solgemm::Kernel::reference).kernel, solgemm::Kernel::reference);
  EXPECT_THROW(solgemm::select_plan(packed, 65, solgemm::Kernel::skinny), solgemm::Error);
  EXPECT_THROW(solgemm::select_plan(packed, 1, solgemm::Kernel::router), solgemm::Error);
  EXPECT_EQ(solgemm::kernel_from_string("wide"), solgemm::Kernel::wide);
  try {
    solgemm::kernel_from_string("fast");
    FAIL() << "no error for an unknown family";
  } catch (const solgemm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected one of"), std::string::npos) << e.what();
  }
}

}  // namespace
