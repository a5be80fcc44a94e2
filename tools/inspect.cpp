// solgemm-inspect FILE.safetensors...: for each BF16 / F32 tensor of a checkpoint, what solgemm's lossless
// formats would store (code, bits per weight, exception rate, fallback), which token counts of 1..64 solgemm's own
// kernels would serve for each 2-D tensor as a projection's weights (the rest: cuBLAS), and a total for the file.
// Broken files: one line naming the file, the tensor and the problem on stderr, exit status 1.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "inspect_lib.hpp"
#include "solgemm/solgemm.hpp"

int main(int argc, char** argv) {
  CLI::App app{"solgemm-inspect: what solgemm's lossless weight formats make of a safetensors checkpoint"};
  std::vector<std::string> files;
  app.add_option("files", files, "safetensors files")->required();
  CLI11_PARSE(app, argc, argv);
  int status = 0;
  for (const auto& path : files) {
    try {
      const auto rep = solgemm::inspect::inspect_file(path);
      std::fputs(solgemm::inspect::render(rep).c_str(), stdout);
    } catch (const solgemm::Error& e) {
      std::fflush(stdout);
      fmt::print(stderr, "solgemm-inspect: {}\n", e.what());
      status = 1;
    } catch (const std::exception& e) {  // e.g. out of memory on a huge tensor
      std::fflush(stdout);
      fmt::print(stderr, "solgemm-inspect: {}: {}\n", path, e.what());
      status = 1;
    }
  }
  return status;
}
