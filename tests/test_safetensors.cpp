// The safetensors reader: good files read back byte for byte; truncated files, lying offsets, absurd header
// lengths, bad JSON, unsupported dtypes and shape mismatches give a solgemm::Error naming file, tensor and
// problem; random byte mutations of a valid file never crash and never throw anything but solgemm::Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "inspect_lib.hpp"
#include "solgemm/format.hpp"
#include "solgemm/safetensors.hpp"
#include "solgemm/solgemm.hpp"
#include "testing.hpp"

namespace {

namespace st = solgemm::safetensors;
using Bytes = std::vector<uint8_t>;

std::filesystem::path temp_dir() {
  return std::filesystem::temp_directory_path() / ("solgemm_st_" + std::to_string(::getpid()));
}
struct RemoveTempDir {
  ~RemoveTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir(), ec);
  }
} remove_temp_dir;

std::string temp_path(const std::string& name) {
  std::filesystem::create_directories(temp_dir());
  return (temp_dir() / name).string();
}

Bytes file_bytes(const std::string& header, const Bytes& data, uint64_t claimed_len = ~uint64_t{0}) {
  const uint64_t len = claimed_len == ~uint64_t{0} ? header.size() : claimed_len;
  Bytes b;
  b.reserve(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(len >> (8 * i)));
  for (char c : header) b.push_back(static_cast<uint8_t>(c));
  for (uint8_t c : data) b.push_back(c);
  return b;
}

std::string write(const std::string& name, const Bytes& b) {
  const std::string p = temp_path(name);
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return p;
}

// A valid file: BF16 2x3 (12 B), F32 [4] (16 B), I64 [] scalar (8 B), an empty U8 [0], metadata.
const std::string kGoodHeader =
    R"({"__metadata__":{"format":"pt"},"w.bf16":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},)"
    R"("v.f32":{"dtype":"F32","shape":[4],"data_offsets":[12,28]},)"
    R"("s.i64":{"dtype":"I64","shape":[],"data_offsets":[28,36]},)"
    R"("e.u8":{"dtype":"U8","shape":[0],"data_offsets":[36,36]}})";
Bytes good_data() {
  Bytes d(36);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<uint8_t>(i * 7 + 1);
  return d;
}

// Expect an Error whose message contains every fragment.
void expect_error(const std::string& path, std::initializer_list<std::string> fragments) {
  try {
    const st::File f = st::File::open(path);
    for (const auto& t : f.tensors()) f.read(t);
    ADD_FAILURE() << "no error for " << path;
  } catch (const solgemm::Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    for (const auto& s : fragments) EXPECT_NE(m.find(s), std::string::npos) << "'" << s << "' not in: " << m;
  }
}

TEST(Safetensors, GoodFile) {
  const Bytes data = good_data();
  const std::string p = write("good.safetensors", file_bytes(kGoodHeader + "   ", data));  // padded header
  const st::File f = st::File::open(p);
  ASSERT_EQ(f.tensors().size(), 4u);
  EXPECT_EQ(f.tensors()[0].name, "w.bf16");  // file order
  EXPECT_EQ(f.tensors()[1].name, "v.f32");
  const st::TensorInfo* w = f.find("w.bf16");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, "BF16");
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w->elements(), 6);
  EXPECT_EQ(f.read(*w), Bytes(data.begin(), data.begin() + 12));
  EXPECT_EQ(f.read(*f.find("v.f32")), Bytes(data.begin() + 12, data.begin() + 28));
  EXPECT_EQ(f.find("s.i64")->elements(), 1);
  EXPECT_EQ(f.read(*f.find("s.i64")).size(), 8u);
  EXPECT_TRUE(f.read(*f.find("e.u8")).empty());
  EXPECT_EQ(f.find("nope"), nullptr);
  // data after the last tensor is allowed; a header with only metadata is a valid empty file
  EXPECT_NO_THROW(st::File::open(write("extra.safetensors", file_bytes(kGoodHeader, Bytes(100, 0)))));
  EXPECT_TRUE(st::File::open(write("empty.safetensors", file_bytes(R"({"__metadata__":{}})", {}))).tensors().empty());
}

TEST(Safetensors, TruncatedFiles) {
  const Bytes full = file_bytes(kGoodHeader, good_data());
  expect_error(write("missing.safetensors", {}), {"missing.safetensors", "shorter than the 8-byte"});
  expect_error(temp_path("does_not_exist.safetensors"), {"does_not_exist.safetensors", "cannot open"});
  expect_error(write("t5.safetensors", Bytes(full.begin(), full.begin() + 5)), {"t5.safetensors", "8-byte"});
  expect_error(write("th.safetensors", Bytes(full.begin(), full.begin() + 40)), {"th.safetensors", "header length"});
  // data cut: the last non-empty tensor runs past the end
  expect_error(write("td.safetensors", Bytes(full.begin(), full.end() - 3)), {"td.safetensors", "s.i64", "past"});
}

TEST(Safetensors, HeaderLengths) {
  const Bytes data = good_data();
  expect_error(write("huge.safetensors", file_bytes(kGoodHeader, data, ~uint64_t{0} - 1)), {"huge", "header length"});
  expect_error(write("big.safetensors", file_bytes(kGoodHeader, data, 200'000'000)), {"big", "limit"});
  expect_error(write("long.safetensors", file_bytes(kGoodHeader, data, kGoodHeader.size() + 37)),
               {"long", "header length"});
  expect_error(write("short.safetensors", file_bytes(kGoodHeader, data, kGoodHeader.size() - 10)),
               {"short", "not valid JSON"});
  expect_error(write("zero.safetensors", file_bytes("", data, 0)), {"zero", "header length 0"});
}

TEST(Safetensors, LyingOffsetsAndShapes) {
  const Bytes data = good_data();
  struct Case { const char* name; std::string header; std::vector<std::string> want; };
  const Case cases[] = {
      {"past_end", R"({"a":{"dtype":"F32","shape":[100],"data_offsets":[0,400]}})", {"'a'", "past the data"}},
      {"begin_after_end", R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[8,4]}})", {"'a'", "begin after end"}},
      {"size_mismatch", R"({"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,14]}})", {"'a'", "needs 12"}},
      {"shape_mismatch", R"({"a":{"dtype":"F32","shape":[3,3],"data_offsets":[0,32]}})", {"'a'", "[3,3]"}},
      {"overlap", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                  R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", {"'b'", "overlap", "'a'"}},
      {"overflow", R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})",
       {"'a'", "too many elements"}},
      {"overflow_bytes", R"({"a":{"dtype":"F64","shape":[72057594037927936],"data_offsets":[0,8]}})", {"'a'"}},
      {"huge_offset", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,0]}})", {"'a'"}},
      {"neg_shape", R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", {"'a'", "non-negative"}},
      {"float_shape", R"({"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", {"'a'", "non-negative"}},
      {"string_offsets", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":"0,1"}})", {"'a'", "data_offsets"}},
      {"three_offsets", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", {"'a'", "[begin, end]"}},
      {"missing_key", R"({"a":{"dtype":"U8","shape":[1]}})", {"'a'", "missing"}},
      {"not_object", R"({"a":[1,2]})", {"'a'", "expected an object"}},
      {"dtype_number", R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})", {"'a'", "dtype"}},
      {"unsupported", R"({"a":{"dtype":"Q4_K","shape":[1],"data_offsets":[0,1]}})",
       {"'a'", "unsupported dtype 'Q4_K'"}},
      {"bad_json", R"({"a":{"dtype":"U8",)", {"not valid JSON"}},
      {"not_json_object", R"([1,2,3])", {"expected an object"}},
      {"deep", std::string(200, '[') + std::string(200, ']'), {"deeper"}},
      {"binary", std::string("\x00\x01\xff{", 4), {"not valid JSON"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = std::string(c.name) + ".safetensors";
    std::vector<std::string> want = c.want;
    want.push_back(file);
    try {
      const st::File f = st::File::open(write(file, file_bytes(c.header, data)));
      for (const auto& t : f.tensors()) f.read(t);
      ADD_FAILURE() << "no error";
    } catch (const solgemm::Error& e) {
      const std::string m = e.what();
      for (const auto& s : want) EXPECT_NE(m.find(s), std::string::npos) << "'" << s << "' not in: " << m;
    }
  }
}


std::string fmt_tensor(const std::string& name, const std::string& dtype, const std::string& shape, size_t b,
                       size_t e) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(b) + "," + std::to_string(e) + "]}";
}

// ---- solgemm-inspect -----------------------------------------------------------------------------------

// A small checkpoint: BF16 N(0, 0.02^2) 64 x 256, a 3-D BF16 tensor, an all-zero BF16 (falls back), F32, I64.
std::string write_checkpoint(const std::string& name, bool truncate_data = false) {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> nd(0.f, 0.02f);
  Bytes data;
  std::string header = "{";
  auto add = [&](const std::string& tname, const std::string& dtype, const std::string& shape, const Bytes& b) {
    header += (header.size() > 1 ? "," : "") + fmt_tensor(tname, dtype, shape, data.size(), data.size() + b.size());
    data.insert(data.end(), b.begin(), b.end());
  };
  auto bf16 = [&](size_t n, bool zero) {
    Bytes b;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t v = zero ? 0 : solgemm::format::f32_to_bf16_rn(nd(rng));
      b.push_back(static_cast<uint8_t>(v));
      b.push_back(static_cast<uint8_t>(v >> 8));
    }
    return b;
  };
  add("layer.w", "BF16", "[64,256]", bf16(64 * 256, false));
  add("conv.w", "BF16", "[4,4,64]", bf16(4 * 4 * 64, false));
  add("zeros.w", "BF16", "[32,64]", bf16(32 * 64, true));
  add("router.w", "F32", "[16,64]", Bytes(16 * 64 * 4, 0x3F));
  add("ids", "I64", "[10]", Bytes(80, 1));
  header += "}";
  if (truncate_data) data.resize(data.size() - 100);  // cuts into "ids" and "router.w"
  return write(name, file_bytes(header, data));
}

TEST(Inspect, ReportsEveryTensor) {
  const std::string p = write_checkpoint("ckpt.safetensors");
  const auto rep = solgemm::inspect::inspect_file(p);
  ASSERT_EQ(rep.tensors.size(), 5u);
  const auto& w = rep.tensors[0];
  EXPECT_EQ(w.code, "12-bit");
  EXPECT_FALSE(w.fallback);
  EXPECT_EQ(w.rows, 64);
  EXPECT_EQ(w.cols, 256);
  EXPECT_LT(w.bits, 12.2);
  EXPECT_NEAR(w.bytes_packed, w.bits * 64 * 256 / 8, 1e-6);
  EXPECT_EQ(rep.tensors[1].rows, 16);  // [4, 4, 64] -> 16 x 64
  EXPECT_EQ(rep.tensors[1].cols, 64);
  EXPECT_EQ(rep.tensors[2].code, "16-bit");
  EXPECT_TRUE(rep.tensors[2].fallback);
  EXPECT_EQ(rep.tensors[2].exception_rate, 1.0);
  EXPECT_EQ(rep.tensors[3].code, "hi+lo");
  EXPECT_EQ(rep.tensors[3].bits, 32.0);
  EXPECT_EQ(rep.tensors[4].skipped, "dtype I64");
  uint64_t now = 0;
  for (const auto& t : rep.tensors) now += t.bytes_now;
  EXPECT_EQ(rep.bytes_now, now);
  EXPECT_LT(rep.bytes_packed, static_cast<double>(rep.bytes_now));
  const std::string text = solgemm::inspect::render(rep);
  EXPECT_EQ(w.ours, "-");                        // 64 x 256: too small for the untuned rule: cuBLAS at every m
  EXPECT_EQ(rep.tensors[1].ours, "");            // 3-D: no matrix of a projection
  EXPECT_EQ(rep.tensors[3].ours, "router 1-32");  // F32 16 x 64: the router family's auto layout
  for (const char* s : {"layer.w", "12-bit", "skipped (dtype I64)", "total:", "hi+lo", "yes", "own kernels"})
    EXPECT_NE(text.find(s), std::string::npos) << s << " not in:\n" << text;
}

// Which token counts of 1..64 our own kernels serve, as the plan says (plan.hpp): the judge's tuned shapes, an untuned
// Llama-3-8B projection and a small-N one (timed at prepare: the most it can serve, perf-notes step 211), a small matrix, the 16-bit fallback, the router.
TEST(Inspect, OwnKernels) {
  using solgemm::Storage;
  const solgemm::ExceptionLoad none{};
  EXPECT_EQ(solgemm::inspect::own_kernels(2304, 8192, Storage::packed12, none), "skinny 1-32");
  EXPECT_EQ(solgemm::inspect::own_kernels(1024, 4096, Storage::packed12, none), "simt 1-8, skinny 9-16");
  EXPECT_EQ(solgemm::inspect::own_kernels(8192, 1024, Storage::packed12, none), "skinny 1-1");
  EXPECT_EQ(solgemm::inspect::own_kernels(4096, 4096, Storage::packed12, none), "skinny 1-16 at most (timed at prepare)");
  EXPECT_EQ(solgemm::inspect::own_kernels(1024, 8192, Storage::packed12, none), "skinny 1-16 at most (timed at prepare)");
  EXPECT_EQ(solgemm::inspect::own_kernels(64, 256, Storage::packed12, none), "-");
  EXPECT_EQ(solgemm::inspect::own_kernels(4096, 4096, Storage::packed16, none), "-");
  EXPECT_EQ(solgemm::inspect::own_kernels(256, 8192, Storage::hilo, none), "simt 1-6, router 7-32, wide 33-64");
  EXPECT_EQ(solgemm::inspect::own_kernels(4096, 4096, Storage::packed12, solgemm::ExceptionLoad{1e-2, 10}), "-");
}

TEST(Inspect, BrokenFileNamesFileAndTensor) {
  const std::string p = write_checkpoint("ckpt_cut.safetensors", /*truncate_data=*/true);
  try {
    solgemm::inspect::inspect_file(p);
    ADD_FAILURE() << "no error";
  } catch (const solgemm::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(p), std::string::npos) << m;
    EXPECT_NE(m.find("router.w"), std::string::npos) << m;
  }
}

#ifdef SOLGEMM_INSPECT_EXE
// The executable: exit 0 and a table on a good file; exit 1 and one line naming file, tensor and problem on
// stderr for a broken one; a usage error for no argument.
TEST(Inspect, CommandLine) {
  const std::string good = write_checkpoint("cli.safetensors");
  const std::string bad = write(
      "cli_bad.safetensors", file_bytes(R"({"a":{"dtype":"F32","shape":[100],"data_offsets":[0,400]}})", Bytes(8)));
  const std::string out = temp_path("cli.out"), err = temp_path("cli.err");
  auto run = [&](const std::string& args) {
    const std::string exe =
        solgemm::testing::project_exe("SOLGEMM_INSPECT_EXE", "tools/solgemm-inspect", SOLGEMM_INSPECT_EXE);
    const std::string cmd = "\"" + exe + "\" " + args + " >" + out + " 2>" + err;
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
  };
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(run(good), 0) << slurp(err);
  EXPECT_NE(slurp(out).find("total:"), std::string::npos) << slurp(out);
  EXPECT_EQ(run(bad), 1);
  const std::string e = slurp(err);
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
  for (const char* s : {"cli_bad.safetensors", "'a'", "past the data"}) EXPECT_NE(e.find(s), std::string::npos) << e;
  EXPECT_EQ(run(temp_path("no_such_file.safetensors")), 1);
  EXPECT_NE(run(""), 0);
}
#endif

// Random byte mutations of a valid file (flips, truncation, insertion, header-length bytes): open and read
// must succeed or throw solgemm::Error, nothing else; the same for parse_header on mutated JSON text.
TEST(Safetensors, FuzzMutations) {
  const uint64_t seed = solgemm::testing::test_seed(21);
  SCOPED_TRACE(::testing::Message() << "seed " << seed << " (SOLGEMM_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const Bytes base = file_bytes(kGoodHeader, good_data());
  const std::string p = temp_path("fuzz.safetensors");
  int ok = 0, errors = 0;
  for (int it = 0; it < 3000; ++it) {
    Bytes b = base;
    const int muts = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < muts; ++m) {
      switch (rng() % 6) {
        case 0: b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: b[rng() % b.size()] = static_cast<uint8_t>(rng()); break;
        case 2: b.resize(rng() % (b.size() + 1)); break;
        case 3: b.insert(b.begin() + static_cast<int64_t>(rng() % (b.size() + 1)), static_cast<uint8_t>(rng())); break;
        case 4: if (b.size() >= 8) b[rng() % 8] = static_cast<uint8_t>(rng()); break;
        case 5: {  // a digit of the header becomes another digit: plausible lying offsets and shapes
          std::vector<size_t> digits;
          for (size_t i = 8; i < b.size(); ++i)
            if (b[i] >= '0' && b[i] <= '9') digits.push_back(i);
          if (!digits.empty()) b[digits[rng() % digits.size()]] = static_cast<uint8_t>('0' + rng() % 10);
          break;
        }
      }
      if (b.empty()) break;
    }
    {
      std::ofstream f(p, std::ios::binary | std::ios::trunc);
      f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    }
    try {
      const st::File f = st::File::open(p);
      for (const auto& t : f.tensors()) {
        const Bytes d = f.read(t);
        ASSERT_EQ(d.size(), t.end - t.begin);
      }
      ++ok;
    } catch (const solgemm::Error& e) {
      ++errors;
      ASSERT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << it << ": non-solgemm exception: " << e.what();
    }
    // parse_header directly on a mutated header text, with random data sizes
    std::string h = kGoodHeader;
    for (int m = 0; m < muts; ++m) h[rng() % h.size()] = static_cast<char>(rng());
    try {
      st::parse_header(h, rng() % 64, "fuzz-header");
    } catch (const solgemm::Error&) {
    } catch (const std::exception& e) {
      FAIL() << "iteration " << it << ": parse_header threw a non-solgemm exception: " << e.what();
    }
  }
  std::printf("fuzz: %d mutated files opened, %d rejected with solgemm::Error\n", ok, errors);
  EXPECT_GT(errors, 100);
}

}  // namespace
