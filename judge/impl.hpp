// The two sides the judge compares, behind one interface: "solgemm" (the library, through its plan table),
// "reference" (the library with PrepareOptions::kernel = "reference": its simple kernel on raw weights),
// and "cublas" (the baseline, called the way torch.nn.functional.linear calls it: baseline.cpp).
// prepare() is untimed; run() is what gets captured into a CUDA graph and timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime.h>

namespace solgemm::judge {

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  // Once per layer (index into layers()), untimed. d_W: the judge's device copy of the layer's weights in their
  // stored dtype; it stays valid for the whole run.
  virtual void prepare(int layer, const void* d_W, cudaStream_t stream) = 0;
  // out (m x rows, BF16 or FP32 for the router) = x (m x K, BF16) @ W[:rows]^T. Graph-capturable.
  virtual void run(int layer, const void* d_x, int64_t m, void* d_out, int64_t rows, cudaStream_t stream) = 0;
  // What runs for this call (kernel and configuration), and what prepare chose for the layer.
  virtual std::string plan(int layer, int64_t m, int64_t rows) const = 0;
  virtual std::string description(int layer) const = 0;
  // Bits read per weight (the stored floor and the practical ceiling are computed at this size).
  virtual double weight_bits(int layer, int64_t m, int64_t rows) const = 0;  // bits per weight the call reads
  // Device memory the prepared layer owns beyond the judge's copy of W, in bytes (0: none, as cuBLAS).
  virtual size_t device_bytes(int /*layer*/) const { return 0; }
};

// The names --impl and --baseline accept.
const char* implementation_names();
bool is_implementation_name(const std::string& name);
// max_m: the largest m run() will see. Throws UsageError for an unknown name.
// tune_file: solgemm's PrepareOptions::tune_file (the vendor family's tuned choices kept across runs; "" = none).
std::unique_ptr<Implementation> make_implementation(const std::string& name, int64_t max_m,
                                                    const std::string& tune_file = "");

}  // namespace solgemm::judge
