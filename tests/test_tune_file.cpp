// CPU tests of the vendor tuner's tune file format (src/kernels/tune_file.hpp; PrepareOptions::tune_file): entries
// round-trip bit for bit, the last entry of a key wins, a missing file or key is "none", and a malformed line or an
// unwritable file is one error naming the file (and the line). The GPU test Vendor.TuneFileRoundTrip checks the
// tuner's use of it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../src/kernels/tune_file.hpp"
#include "solgemm/solgemm.hpp"
#include "testing.hpp"

namespace tf = solgemm::kernels::tune_file;

namespace {

std::string temp_path(const char* name) {
  const std::string p = ::testing::TempDir() + name;
  std::remove(p.c_str());
  return p;
}

std::vector<unsigned char> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const solgemm::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TuneFile, EntriesRoundTrip) {
  const uint64_t seed = solgemm::testing::test_seed(0x7F11Eu);
  const std::string path = temp_path("solgemm_tune_file_cpu.txt");
  const auto a = random_bytes(3000, seed), b = random_bytes(3000, seed + 1), c = random_bytes(3000, seed + 2);
  std::vector<unsigned char> got(3000);
  EXPECT_FALSE(tf::read(path, "tag-v1", "A", got.data(), got.size())) << "no file: no entry";
  tf::append(path, "tag-v1", "A", a.data(), a.size());
  tf::append(path, "tag-v1", "B/132SM/N4096", b.data(), b.size());
  ASSERT_TRUE(tf::read(path, "tag-v1", "A", got.data(), got.size()));
  EXPECT_EQ(got, a) << "seed " << seed;
  ASSERT_TRUE(tf::read(path, "tag-v1", "B/132SM/N4096", got.data(), got.size()));
  EXPECT_EQ(got, b) << "seed " << seed;
  EXPECT_FALSE(tf::read(path, "tag-v1", "C", got.data(), got.size())) << "an absent key";
  tf::append(path, "tag-v1", "A", c.data(), c.size());
  ASSERT_TRUE(tf::read(path, "tag-v1", "A", got.data(), got.size()));
  EXPECT_EQ(got, c) << "the last entry of a key wins; seed " << seed;
  std::remove(path.c_str());
}

TEST(TuneFile, BadFilesAreOneClearError) {
  const std::string path = temp_path("solgemm_tune_file_bad.txt");
  std::vector<unsigned char> got(16);
  const auto write = [&](const std::string& text) {
    std::ofstream out(path);
    out << text;
  };
  write("tag-v1 A 00112233445566778899aabbccddeeff\nnot a tune file\n");
  std::string e = error_of([&] { tf::read(path, "tag-v1", "A", got.data(), got.size()); });
  EXPECT_NE(e.find(path + " line 2"), std::string::npos) << e;
  write("tag-v2 A 00112233445566778899aabbccddeeff\n");
  e = error_of([&] { tf::read(path, "tag-v1", "A", got.data(), got.size()); });
  EXPECT_NE(e.find("line 1: an entry of tag-v2, written by another version of solgemm (this one reads and writes "
                   "tag-v1): remove the file"),
            std::string::npos)
      << "another format version: " << e;
  write("tag-v1 A 0011\n");
  e = error_of([&] { tf::read(path, "tag-v1", "A", got.data(), got.size()); });
  EXPECT_NE(e.find("32 hex digits"), std::string::npos) << "an entry of another size: " << e;
  write("tag-v1 A 00112233445566778899AABBCCDDEEFF\n");
  e = error_of([&] { tf::read(path, "tag-v1", "A", got.data(), got.size()); });
  EXPECT_NE(e.find("line 1"), std::string::npos) << "not lowercase hex: " << e;
  std::remove(path.c_str());
  e = error_of([&] { tf::append("/nonexistent-solgemm-dir/tune.txt", "tag-v1", "A", got.data(), got.size()); });
  EXPECT_NE(e.find("cannot append to the tune file /nonexistent-solgemm-dir/tune.txt"), std::string::npos) << e;
}
