// CPU tests of solgemm-judge's command line: defaults, --help, and every kind of bad input giving one clear
// line on stderr and exit code 2 (in process through parse_cli, and through the executable itself).
#include <gtest/gtest.h>

#include "testing.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "device.hpp"
#include "generators.hpp"

namespace sj = solgemm::judge;

namespace {

struct Parsed {
  std::optional<int> rc;
  sj::Options opt;
  std::string out, err;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "solgemm-judge");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  Parsed p;
  std::ostringstream out, err;
  p.rc = sj::parse_cli(static_cast<int>(argv.size()), argv.data(), p.opt, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(JudgeCli, Defaults) {
  const Parsed p = parse({});
  EXPECT_FALSE(p.rc.has_value()) << p.err;
  EXPECT_EQ(p.opt.impl, "solgemm");
  EXPECT_EQ(p.opt.baseline, "cublas");
  EXPECT_EQ(p.opt.inputs, 3);
  EXPECT_EQ(p.opt.min_replays(), 100);
  EXPECT_EQ(p.opt.max_replays(), 1000);
  EXPECT_EQ(p.opt.json, "judge-out/result.json");
  EXPECT_EQ(p.opt.tune_file, "") << "by default the vendor family tunes in every run";
}

TEST(JudgeCli, Options) {
  const Parsed p = parse({"--layers", "pooler,router", "--loads", "decode 1,verify32", "--m", "3,5", "--replays",
                          "20,40", "--seed", "9", "--generator", "llm-like", "--impl", "reference", "--check-only",
                          "--inputs", "2", "--json", "/tmp/x.json", "--tune-file", "/tmp/tune.txt"});
  ASSERT_FALSE(p.rc.has_value()) << p.err;
  EXPECT_EQ(p.opt.layers, (std::vector<std::string>{"pooler", "router"}));
  EXPECT_EQ(p.opt.loads, (std::vector<std::string>{"decode 1", "verify32"}));
  EXPECT_EQ(p.opt.m, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(p.opt.min_replays(), 20);
  EXPECT_EQ(p.opt.max_replays(), 40);
  EXPECT_EQ(p.opt.seed, 9u);
  EXPECT_TRUE(p.opt.check_only);
  EXPECT_EQ(p.opt.inputs, 2);
  EXPECT_EQ(p.opt.tune_file, "/tmp/tune.txt");
  const sj::Selection s = sj::select(p.opt);
  EXPECT_EQ(s.shapes.size(), 2u * 2 + 2u * 2);
  const Parsed one = parse({"--replays", "50"});
  ASSERT_FALSE(one.rc.has_value()) << one.err;
  EXPECT_EQ(one.opt.min_replays(), 50);
  EXPECT_EQ(one.opt.max_replays(), 50);
}

TEST(JudgeCli, Help) {
  const Parsed p = parse({"--help"});
  ASSERT_TRUE(p.rc.has_value());
  EXPECT_EQ(*p.rc, 0);
  EXPECT_NE(p.out.find("--generator"), std::string::npos);
  EXPECT_NE(p.out.find("--check-only"), std::string::npos);
}

TEST(JudgeCli, BadInputGivesOneLineAndExitCode2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--frobnicate"}, "--frobnicate"},
      {{"--layers", "pooler,mlp"}, "mlp"},
      {{"--loads", "decode 64"}, "decode 64"},
      {{"--generator", "gaussian"}, "gaussian"},
      {{"--generator", "safetensors:"}, "path"},
      {{"--m", "0"}, "--m 0"},
      {{"--m", "-3"}, "-3"},
      {{"--m", "abc"}, "abc"},
      {{"--replays", "10,5"}, "--replays"},
      {{"--replays", "0"}, "--replays"},
      {{"--inputs", "0"}, "--inputs"},
      {{"--impl", "cutlass"}, "cutlass"},
      {{"--baseline", "torch"}, "torch"},
      {{"--inputs", "many"}, "many"},
      {{"stray"}, "stray"},
  };
  for (const auto& [args, needle] : cases) {
    const Parsed p = parse(args);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    ASSERT_TRUE(p.rc.has_value()) << shown;
    EXPECT_EQ(*p.rc, 2) << shown;
    EXPECT_EQ(lines(p.err), 1u) << shown << "-> " << p.err;
    EXPECT_NE(p.err.find(needle), std::string::npos) << shown << "-> " << p.err;
    EXPECT_EQ(p.err.rfind("solgemm-judge: ", 0), 0u) << p.err;
  }
}

#ifdef SOLGEMM_JUDGE_EXE
namespace {
std::string judge_exe() {
  return solgemm::testing::project_exe("SOLGEMM_JUDGE_EXE", "judge/solgemm-judge", SOLGEMM_JUDGE_EXE);
}
}  // namespace

// The executable: bad input is reported before the GPU is touched, so this runs everywhere.
TEST(JudgeCli, ExecutableRejectsBadInput) {
  for (const std::string args : {"--layers nope", "--m 0", "--generator foo", "--bogus",
                                 "--generator safetensors:/nonexistent/w.safetensors"}) {
    const std::string cmd = judge_exe() + " " + args + " 2>&1 >/dev/null";
    FILE* f = popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string err;
    std::array<char, 512> buf{};
    while (fgets(buf.data(), buf.size(), f)) err += buf.data();
    const int status = pclose(f);
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 2) << args << ": " << err;
    EXPECT_EQ(lines(err), 1u) << args << ": " << err;
  }
}
#endif

// --generator safetensors:PATH: a missing, truncated, wrong-dtype, wrong-shape or incomplete file is reported
// before any GPU work, naming the file, the tensor and the problem.
namespace {

std::string write_safetensors(const std::string& name, const std::string& tensor, const std::string& dtype,
                              std::vector<int64_t> shape, size_t data_bytes, size_t header_claims_bytes) {
  const auto path = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".safetensors");
  std::string shp;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) shp += ',';
    shp += std::to_string(shape[i]);
  }
  std::string header = "{\"" + tensor + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + shp +
                       "],\"data_offsets\":[0," + std::to_string(header_claims_bytes) + "]}}";
  while (header.size() % 8) header += ' ';
  std::ofstream f(path, std::ios::binary);
  const uint64_t n = header.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << header;
  const std::vector<char> zeros(data_bytes, 0);
  f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  return path.string();
}

std::string file_error(const std::string& path) {
  try {
    sj::check_weights_file(sj::parse_generator("safetensors:" + path), {4});  // the router: 256 x 8192 F32
  } catch (const sj::JudgeError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JudgeCli, BadWeightsFiles) {
  const size_t full = 256 * 8192 * 4;
  EXPECT_NE(file_error("/nonexistent/w.safetensors").find("/nonexistent/w.safetensors"), std::string::npos);
  const std::string good = write_safetensors("good", "router.weight", "F32", {256, 8192}, full, full);
  EXPECT_EQ(file_error(good), "");
  const std::string dtype = write_safetensors("dtype", "router", "BF16", {256, 8192}, full / 2, full / 2);
  EXPECT_NE(file_error(dtype).find("dtype BF16; expected F32"), std::string::npos) << file_error(dtype);
  const std::string shape = write_safetensors("shape", "router", "F32", {128, 8192}, full / 2, full / 2);
  EXPECT_NE(file_error(shape).find("shape [128, 8192]"), std::string::npos) << file_error(shape);
  const std::string missing = write_safetensors("missing", "pooler", "F32", {2, 2}, 16, 16);
  EXPECT_NE(file_error(missing).find("no tensor named 'router'"), std::string::npos) << file_error(missing);
  const std::string truncated = write_safetensors("truncated", "router", "F32", {256, 8192}, 1000, full);
  const std::string t = file_error(truncated);
  EXPECT_NE(t, "");
  EXPECT_NE(t.find(truncated), std::string::npos) << t;
  for (const std::string& p : {good, dtype, shape, missing, truncated}) std::filesystem::remove(p);
}
