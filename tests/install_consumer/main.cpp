// Links against the installed library: calls the API with bad arguments (no GPU needed) and prints the error.
#include <cstdio>

#include <solgemm/solgemm.hpp>

int main() {
  try {
    (void)solgemm::Weights::prepare(nullptr, solgemm::DType::bf16, 16, 16, nullptr);
  } catch (const solgemm::Error& e) {
    std::printf("consumer: %s\n", e.what());
    return 0;
  }
  std::printf("consumer: no error for a null W\n");
  return 1;
}
