// cuBLAS baseline, called as torch's F.linear calls it (see baseline.hpp).
#include "baseline.hpp"

#include <array>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "device.hpp"
#include "kernels.hpp"
#include "shapes.hpp"

namespace solgemm::judge {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

void cublas_check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw JudgeError(fmt::format("cuBLAS error while {}: {} ({})", what, cublasGetStatusName(st),
                                 cublasGetStatusString(st)));
}

class CublasBaseline final : public Implementation {
 public:
  explicit CublasBaseline(int64_t max_m) : max_m_(max_m) {
    cublas_check(cublasCreate(&handle_), "creating the handle");
    workspace_ = DeviceBuffer(kWorkspaceBytes, "the cuBLAS workspace");
  }
  ~CublasBaseline() override {
    if (handle_) cublasDestroy(handle_);
  }
  CublasBaseline(const CublasBaseline&) = delete;
  CublasBaseline& operator=(const CublasBaseline&) = delete;

  std::string name() const override { return "cublas"; }

  void prepare(int layer, const void* d_W, cudaStream_t) override {
    weights_.at(static_cast<size_t>(layer)) = d_W;
    const Layer& l = layers().at(static_cast<size_t>(layer));
    if (l.fp32) {
      const size_t need = static_cast<size_t>(max_m_ * l.k) * sizeof(float);
      if (x_f32_.bytes() < need) x_f32_ = DeviceBuffer(need, "the router baseline's FP32 copy of x");
    }
  }

  void run(int layer, const void* d_x, int64_t m, void* d_out, int64_t rows, cudaStream_t stream) override {
    const Layer& l = layers().at(static_cast<size_t>(layer));
    const void* W = weights_.at(static_cast<size_t>(layer));
    if (!W) throw JudgeError(fmt::format("cublas baseline: layer {} was not prepared", l.name));
    if (m > max_m_) throw JudgeError(fmt::format("cublas baseline: m = {} > max_m = {}", m, max_m_));
    cublas_check(cublasSetStream(handle_, stream), "setting the stream");
    // cublasSetStream resets the workspace to cuBLAS's own pool: set ours again (torch does the same).
    cublas_check(cublasSetWorkspace(handle_, workspace_.get(), workspace_.bytes()), "setting the workspace");
    cublas_check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "setting the math mode");
    const int n = static_cast<int>(rows), mm = static_cast<int>(m), k = static_cast<int>(l.k);
    const float one = 1.0f, zero = 0.0f;
    if (!l.fp32) {
      cublas_check(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, mm, k, &one, W, CUDA_R_16BF, k, d_x,
                                CUDA_R_16BF, k, &zero, d_out, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT),
                   "running cublasGemmEx");
    } else {
      kernels::bf16_to_f32(static_cast<const uint16_t*>(d_x), x_f32_.as<float>(), m * l.k, stream);
      cublas_check(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, mm, k, &one, static_cast<const float*>(W), k,
                               x_f32_.as<float>(), k, &zero, static_cast<float*>(d_out), n),
                   "running cublasSgemm");
    }
  }

  std::string plan(int layer, int64_t, int64_t) const override {
    return layers().at(static_cast<size_t>(layer)).fp32
               ? "x.float() + cublasSgemm (TF32 off), as F.linear(x.float(), W)"
               : "cublasGemmEx BF16, compute 32F, default algo, as F.linear(x, W)";
  }
  std::string description(int layer) const override {
    const Layer& l = layers().at(static_cast<size_t>(layer));
    return fmt::format("{} {}x{} as stored (cuBLAS reads it directly)", l.fp32 ? "f32" : "bf16", l.n, l.k);
  }
  double weight_bits(int layer, int64_t, int64_t) const override { return 8.0 * layers().at(static_cast<size_t>(layer)).weight_bytes(); }

 private:
  int64_t max_m_;
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer workspace_, x_f32_;
  std::array<const void*, kLayerCount> weights_{};
};

}  // namespace

std::unique_ptr<Implementation> make_cublas_baseline(int64_t max_m) { return std::make_unique<CublasBaseline>(max_m); }

}  // namespace solgemm::judge
