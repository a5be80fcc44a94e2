// Weights::prepare / run: argument checks, storage choice, and dispatch through the plan table.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "kernels/decode.hpp"
#include "kernels/kernels.hpp"
#include "solgemm/format.hpp"
#include "solgemm/plan.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm {

const char* to_string(DType t) { return t == DType::bf16 ? "bf16" : "f32"; }

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(fmt::format("solgemm: {}: CUDA error: {}", what, cudaGetErrorString(e)));
}

}  // namespace

// Owned device buffer.
struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  DevBuf() = default;
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() { if (p) cudaFree(p); }
  void upload(const void* host, size_t n, cudaStream_t s, const char* what) {
    bytes = n;
    check_cuda(cudaMalloc(&p, n ? n : 1), what);
    if (n) check_cuda(cudaMemcpyAsync(p, host, n, cudaMemcpyHostToDevice, s), what);
  }
  // n bytes, zeroed on `s` when `zero` (counters); returns the pointer.
  template <class T = void>
  T* alloc(size_t n, bool zero, cudaStream_t s, const char* what) {
    bytes = n;
    check_cuda(cudaMalloc(&p, n ? n : 1), what);
    if (zero && n) check_cuda(cudaMemsetAsync(p, 0, n, s), what);
    return static_cast<T*>(p);
  }
};

// A cuBLAS handle with its fixed workspace (the vendor family; graph-capturable). A Weights owns one, or, with
// PrepareOptions::shared_workspace, shares its device's (perf-notes step 216: created by the first such prepare, freed
// with the last such Weights).
struct BlasHandle {
  cublasHandle_t handle = nullptr;
  DevBuf ws;
  BlasHandle() = default;
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  ~BlasHandle() {
    if (handle) cublasDestroy(handle);
  }
};

struct Weights::Impl {
  DType dtype = DType::bf16;
  int64_t n = 0, k = 0;
  int device = 0;                        // the CUDA device prepare ran on: every buffer and handle lives there
  PrepareOptions opt;
  Storage storage = Storage::raw_bf16;   // what the fast kernels read (raw when none applies)
  DevBuf raw;                            // the original weights, for the reference kernel
  DevBuf packed, exc_off, exc, exc_blk;  // packed12 / packed16 (exc_blk: format::exception_blocks)
  DevBuf hi, lo, lo2;                    // router hi + lo (+ lo2 in exact mode), fragment order
  DevBuf hi_rm, lo_rm, lo2_rm;           // the same terms row-major (vendor family)
  format::Packed meta;                   // host copy of the packing metadata (data cleared after upload)
  double bits = 16;
  ExceptionLoad exc_load;                // the 12-bit code's exceptions, for the plan (plan.hpp)
  std::string desc;
  std::optional<Kernel> forced;          // PrepareOptions::kernel
  std::shared_ptr<kernels::VendorTable> vendor_table;  // cuBLASLt algorithms tuned at prepare (BF16)
  std::vector<UntunedChoice> untuned;    // untuned 12-bit row counts' skinny layouts and ranges, timed at prepare
  std::shared_ptr<BlasHandle> blas;      // vendor family: its own, or its device's shared one
  bool blas_shared = false;              // (PrepareOptions::shared_workspace: not counted in device_bytes)
  DevBuf split_ws, split_cnt, split_cnt64;  // skinny / router split-K workspace + zeroed counters (kernels.hpp)
  kernels::SplitWs split;
  DevBuf stream_ws, stream_cnt;          // stream family: partials + its barrier counters (kernels.hpp)
  kernels::StreamWs stream;
  DevBuf s12_data, s12_exc_off, s12_exc;  // the simt family's 12-bit layout of the rows it serves (format.hpp Simt12)
  kernels::Simt12View s12;               // (data null: none)
  double s12_bits = 16;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // This call's plan: the forced family's, else the table's for these rows and this matrix's exceptions.
  Plan plan(const Shape& shape, int64_t m) const {
    if (forced) return select_plan(shape, m, *forced);
    const UntunedChoice* measured = nullptr;  // (timed for these rows, if they are one of untuned_row_sets)
    for (const UntunedChoice& c : untuned)
      if (c.rows == shape.rows) measured = &c;
    return select_plan(shape, m, exc_load, measured);
  }
  kernels::Blas blas_ctx() const { return {blas->handle, blas->ws.p, blas->ws.bytes}; }
  // run(), plan_for(), weight_bits(): rows in 1..N and, where declared, one of PrepareOptions::row_counts.
  void check_rows(int64_t rows, const char* who) const {
    if (rows < 1 || rows > n)
      throw Error(fmt::format("solgemm::Weights::{}: rows = {}; expected 1 <= rows <= N = {}", who, rows, n));
    const std::vector<int64_t>& d = opt.row_counts;
    if (!d.empty() && !std::binary_search(d.begin(), d.end(), rows))
      throw Error(fmt::format("solgemm::Weights::{}: rows = {}; expected one of the row counts declared at prepare "
                              "({}: PrepareOptions::row_counts)", who, rows, fmt::join(d, ", ")));
  }

  // Every device buffer this Weights owns (Weights::device_bytes).
  size_t device_bytes() const {
    size_t b = blas && !blas_shared ? blas->ws.bytes : 0;
    for (const DevBuf* d : {&raw, &packed, &exc_off, &exc, &exc_blk, &hi, &lo, &lo2, &hi_rm, &lo_rm, &lo2_rm, &split_ws, &split_cnt, &split_cnt64, &stream_ws, &stream_cnt, &s12_data, &s12_exc_off, &s12_exc})
      b += d->bytes;
    return b;
  }

  kernels::PackedView packed_view() const {
    kernels::PackedView v;
    v.data = static_cast<const uint8_t*>(packed.p);
    v.exc_off = static_cast<const uint32_t*>(exc_off.p);
    v.exc = static_cast<const uint32_t*>(exc.p);
    v.exc_blk = static_cast<const uint32_t*>(exc_blk.p);
    v.bits12 = meta.code == format::Code::bits12;
    v.base = meta.base;
    v.n = n;
    v.k = k;
    v.row_tiles = meta.row_tiles;
    v.k_groups = meta.k_groups;
    v.k_blocks = meta.k_blocks;
    v.split = split;
    return v;
  }

  kernels::StreamView stream_view() const {
    kernels::StreamView v;
    v.w = static_cast<const __nv_bfloat16*>(raw.p);
    v.n = n;
    v.k = k;
    v.ws = stream;
    return v;
  }

  kernels::HiLoView hilo_view() const {
    kernels::HiLoView v;
    v.hi = static_cast<const uint8_t*>(hi.p);
    v.lo = static_cast<const uint8_t*>(lo.p);
    v.lo2 = static_cast<const uint8_t*>(lo2.p);
    v.n = n;
    v.k = k;
    v.row_tiles = meta.row_tiles;
    v.k_groups = meta.k_groups;
    v.split = split;
    return v;
  }
};

Weights::Weights(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Weights::Weights(Weights&&) noexcept = default;
Weights& Weights::operator=(Weights&&) noexcept = default;
Weights::~Weights() = default;

int64_t Weights::n() const { return impl_->n; }
int64_t Weights::k() const { return impl_->k; }
DType Weights::dtype() const { return impl_->dtype; }
DType Weights::out_dtype() const { return impl_->dtype; }
double Weights::weight_bits(int64_t m, int64_t rows) const {
  impl_->check_rows(rows, "weight_bits");
  const Shape shape{rows, impl_->k, impl_->storage};
  const Plan p = impl_->plan(shape, m);
  const double raw = impl_->dtype == DType::bf16 ? 16.0 : 32.0;
  switch (p.kernel) {
    case Kernel::skinny:
    case Kernel::wide:
    case Kernel::router: return impl_->bits;
    case Kernel::vendor: return impl_->storage == Storage::hilo ? impl_->bits : raw;  // hilo: the BF16 terms
    case Kernel::simt: return impl_->s12.data && rows <= impl_->s12.rows ? impl_->s12_bits : raw;
    case Kernel::stream: return raw;
    case Kernel::reference: break;
  }
  return raw;
}
std::string Weights::description() const { return impl_->desc; }
size_t Weights::device_bytes() const { return impl_->device_bytes(); }

Weights Weights::prepare(const void* d_W, DType wt, int64_t n, int64_t k, cudaStream_t stream,
                         const PrepareOptions& opt) {
  if (d_W == nullptr) throw Error("solgemm::Weights::prepare: W is a null pointer; expected a device pointer");
  if (n < 1 || k < 1)
    throw Error(fmt::format("solgemm::Weights::prepare: shape {} x {}; expected N >= 1 and K >= 1", n, k));
  if (n > (int64_t{1} << 24) || k > (int64_t{1} << 24))
    throw Error(fmt::format("solgemm::Weights::prepare: shape {} x {}; expected N, K <= 2^24", n, k));
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, d_W) != cudaSuccess || attr.type != cudaMemoryTypeDevice) {
    cudaGetLastError();
    throw Error("solgemm::Weights::prepare: W is not a device pointer; expected memory from cudaMalloc");
  }
  auto impl = std::make_unique<Impl>();
  check_cuda(cudaGetDevice(&impl->device), "prepare: cudaGetDevice");
  impl->dtype = wt;
  impl->n = n;
  impl->k = k;
  impl->opt = opt;
  for (size_t i = 0; i < opt.row_counts.size(); ++i)
    if (opt.row_counts[i] < 1 || opt.row_counts[i] > n)
      throw Error(fmt::format("solgemm::Weights::prepare: row_counts[{}] = {}; expected 1 <= rows <= N = {} "
                              "(PrepareOptions::row_counts)", i, opt.row_counts[i], n));
  std::vector<int64_t>& declared = impl->opt.row_counts;  // (sorted, once each: Impl::check_rows searches it)
  std::sort(declared.begin(), declared.end());
  declared.erase(std::unique(declared.begin(), declared.end()), declared.end());
  if (!opt.kernel.empty()) impl->forced = kernel_from_string(opt.kernel);
  const size_t esz = wt == DType::bf16 ? 2 : 4;
  const size_t bytes = static_cast<size_t>(n) * static_cast<size_t>(k) * esz;
  check_cuda(cudaMalloc(&impl->raw.p, bytes), "prepare: allocating the weight copy");
  impl->raw.bytes = bytes;
  check_cuda(cudaMemcpyAsync(impl->raw.p, d_W, bytes, cudaMemcpyDeviceToDevice, stream), "prepare: copying W");
  impl->storage = wt == DType::bf16 ? Storage::raw_bf16 : Storage::raw_f32;
  impl->bits = static_cast<double>(esz * 8);
  impl->desc = fmt::format("{} {}x{} stored raw ({} bits/weight)", to_string(wt), n, k, esz * 8);

  // Pack for the fast kernels on the host (untimed): lossless code for BF16, hi + lo for FP32.
  std::vector<uint8_t> host(bytes);
  check_cuda(cudaMemcpyAsync(host.data(), d_W, bytes, cudaMemcpyDeviceToHost, stream), "prepare: reading W");
  check_cuda(cudaStreamSynchronize(stream), "prepare: synchronising");
  if (wt == DType::bf16) {
    format::EncodeOptions eo;
    eo.allow12 = opt.compress;
    format::Packed pk = format::encode_bf16(reinterpret_cast<const uint16_t*>(host.data()), n, k, eo);
    // The skinny kernels decode in the coded domain (true * 2^d, kernels/decode.hpp): a matrix it cannot hold
    // exactly (a weight pushed past the largest exponent, or a base above 224) is stored at 16 bits instead.
    std::string note;
    if (pk.code == format::Code::bits12 && !kernels::decode::coded_ok(pk.base, pk.exc.data(), pk.exc.size())) {
      note = fmt::format(" (16 bits: the 12-bit code's base {} and its exceptions do not fit the kernels' coded "
                         "domain)", pk.base);
      eo.allow12 = false;
      pk = format::encode_bf16(reinterpret_cast<const uint16_t*>(host.data()), n, k, eo);
    }
    impl->packed.upload(pk.data.data(), pk.data.size(), stream, "prepare: uploading packed weights");
    impl->exc_off.upload(pk.exc_off.data(), pk.exc_off.size() * 4, stream, "prepare: uploading exceptions");
    impl->exc.upload(pk.exc.data(), pk.exc.size() * 4, stream, "prepare: uploading exceptions");
    const std::vector<uint32_t> blk = format::exception_blocks(pk);
    impl->exc_blk.upload(blk.data(), blk.size() * 4, stream, "prepare: uploading exceptions");
    impl->storage = pk.code == format::Code::bits12 ? Storage::packed12 : Storage::packed16;
    // (+ the derived block index the skinny kernels read with each entry: 4 bytes per exception)
    impl->bits = pk.bits_per_weight() + 32.0 * static_cast<double>(pk.exceptions()) / (static_cast<double>(n) * k);
    impl->desc = pk.describe() + note;
    if (impl->storage == Storage::packed12) {
      impl->exc_load.rate = static_cast<double>(pk.exceptions()) / (static_cast<double>(n) * static_cast<double>(k));
      impl->exc_load.block_max = pk.block_max_exceptions();
      impl->desc += fmt::format("; at most {} exceptions in a block of 16 x 256", impl->exc_load.block_max);
    }
    // The rows the plan sends to the simt family (the unpooler's slice) also in its 12-bit layout, where every row's
    // exceptions fit its slots: a CTA then never reads the side table (whose dependent loads made the slice 0.6-0.7x
    // cuBLAS on llm-like weights, whose rows hold up to ~60; perf-notes step 181); else the raw rows serve the family.
    // Only where that row count is declared (PrepareOptions::row_counts): a copy of 6.3 MB per K = 4096 matrix is not
    // made for calls that may never come (perf-notes step 218).
    if (const int64_t sr = simt_rows_bf16(n, k);
        sr > 0 && impl->storage == Storage::packed12 && std::binary_search(declared.begin(), declared.end(), sr)) {
      const format::Simt12 s12 = format::encode_simt12(reinterpret_cast<const uint16_t*>(host.data()), n, k, sr, pk.base);
      if (s12.max_row_entries > format::kSimtSlots) {
        impl->desc += fmt::format("; its first {} rows read as raw BF16 by the simt family (a row holds {} exceptions, "
                                  "more than the {} slots of its 12-bit layout)", sr, s12.max_row_entries,
                                  format::kSimtSlots);
      } else {
        impl->s12_data.upload(s12.data.data(), s12.data.size(), stream, "prepare: uploading the simt layout");
        impl->s12_exc_off.upload(s12.exc_off.data(), s12.exc_off.size() * 4, stream, "prepare: uploading the simt layout");
        impl->s12_exc.upload(s12.exc.data(), s12.exc.size() * 4, stream, "prepare: uploading the simt layout");
        impl->s12 = {static_cast<const uint8_t*>(impl->s12_data.p), static_cast<const uint32_t*>(impl->s12_exc_off.p),
                     static_cast<const uint32_t*>(impl->s12_exc.p), s12.rows, s12.k, s12.passes, s12.base};
        impl->s12_bits = 8.0 * static_cast<double>(s12.data.size() + 4 * (s12.exc.size() + s12.exc_off.size())) /
                         (static_cast<double>(sr) * static_cast<double>(k));
        impl->desc += fmt::format("; its first {} rows also in the simt family's 12-bit layout ({} exceptions, {:.4f} "
                                  "bits/weight)", sr, s12.exceptions(), impl->s12_bits);
      }
    }
    check_cuda(cudaStreamSynchronize(stream), "prepare: synchronising");
    pk.data.clear();
    pk.data.shrink_to_fit();
    impl->meta = std::move(pk);
  } else {
    format::PackedHiLo hl = format::encode_hilo(reinterpret_cast<const float*>(host.data()), n, k,
                                                opt.router_mode == RouterMode::exact);
    impl->hi.upload(hl.hi.data(), hl.hi.size(), stream, "prepare: uploading hi");
    impl->lo.upload(hl.lo.data(), hl.lo.size(), stream, "prepare: uploading lo");
    if (hl.exact) impl->lo2.upload(hl.lo2.data(), hl.lo2.size(), stream, "prepare: uploading lo2");
    impl->storage = Storage::hilo;
    impl->bits = hl.bits_per_weight();
    impl->desc = fmt::format("f32 {}x{} as BF16 {} ({} bits/weight)", n, k, hl.exact ? "hi+lo+lo2 (exact)" : "hi+lo",
                             impl->bits);
    {  // the same terms row-major, for the vendor family's GEMMs
      const size_t count = static_cast<size_t>(n) * static_cast<size_t>(k);
      std::vector<uint16_t> rh(count), rl(count), rl2(hl.exact ? count : 0);
      format::split_rowmajor(reinterpret_cast<const float*>(host.data()), static_cast<int64_t>(count), hl.exact,
                             rh.data(), rl.data(), hl.exact ? rl2.data() : nullptr);
      impl->hi_rm.upload(rh.data(), count * 2, stream, "prepare: uploading hi");
      impl->lo_rm.upload(rl.data(), count * 2, stream, "prepare: uploading lo");
      if (hl.exact) impl->lo2_rm.upload(rl2.data(), count * 2, stream, "prepare: uploading lo2");
      check_cuda(cudaStreamSynchronize(stream), "prepare: synchronising");
    }
    impl->meta.row_tiles = hl.row_tiles;
    impl->meta.k_groups = hl.k_groups;
    check_cuda(cudaStreamSynchronize(stream), "prepare: synchronising");
  }
  // Split-K workspace of the skinny / router families: sized from the plan table for m <= max_m (skinny:
  // m <= 64), counters zeroed once here (each launch leaves them at 0).
  {
    const kernels::SplitWs need = kernels::split_ws_need(impl->storage, n, k, opt.max_m, impl->forced, declared);
    if (need.ws_floats > 0) {
      impl->split = need;
      impl->split.ws = impl->split_ws.alloc<float>(need.ws_floats * sizeof(float), false, stream,
                                                   "prepare: split-K workspace");
      impl->split.cnt = impl->split_cnt.alloc<unsigned>(need.counters * sizeof(unsigned), true, stream,
                                                        "prepare: split-K counters");
      if (need.tiles64 > 0)  // the shared tail's counters: 15 sets (cs = 2..16) of one per tile
        impl->split.cnt64 = impl->split_cnt64.alloc<unsigned long long>(15 * need.tiles64 * 8, true, stream,
                                                                        "prepare: split-K counters");
      check_cuda(cudaStreamSynchronize(stream), "prepare: synchronising");
    }
  }
  // The stream family's workspace (BF16 weights; the plan table does not choose the family, so only when it is
  // forced): partials for any split and m <= max_m, counters zeroed once (they only ever grow, kernels/stream.cu).
  if (wt == DType::bf16 && impl->forced == Kernel::stream) {
    impl->stream = kernels::stream_ws_need(n, opt.max_m);
    impl->stream.ws = impl->stream_ws.alloc<float>(impl->stream.ws_floats * sizeof(float), false, stream,
                                                   "prepare: stream workspace");
    impl->stream.cnt = impl->stream_cnt.alloc<unsigned long long>(impl->stream.counters * 8, true, stream,
                                                                  "prepare: stream counters");
    check_cuda(cudaStreamSynchronize(stream), "prepare: synchronising");
  }
  // cuBLAS for the vendor family: a handle with a fixed workspace, so run() is graph-capturable.
  constexpr size_t kBlasWorkspace = size_t{32} << 20;
  auto make_blas = [&] {
    auto b = std::make_shared<BlasHandle>();
    if (cublasCreate(&b->handle) != CUBLAS_STATUS_SUCCESS) throw Error("solgemm: prepare: cublasCreate failed");
    b->ws.alloc(kBlasWorkspace, false, stream, "prepare: allocating the cuBLAS workspace");
    if (cublasSetWorkspace(b->handle, b->ws.p, kBlasWorkspace) != CUBLAS_STATUS_SUCCESS)
      throw Error("solgemm: prepare: cublasSetWorkspace failed");
    return b;
  };
  impl->blas_shared = opt.shared_workspace;
  if (opt.shared_workspace) {  // one per device for every Weights prepared so (perf-notes step 216)
    static std::mutex mu;
    static std::map<int, std::weak_ptr<BlasHandle>> registry;
    std::lock_guard<std::mutex> lock(mu);
    impl->blas = registry[impl->device].lock();
    if (!impl->blas) registry[impl->device] = impl->blas = make_blas();
  } else {
    impl->blas = make_blas();
  }
  if (wt == DType::bf16 && opt.tune_vendor) {
    impl->vendor_table = kernels::tune_vendor(impl->blas_ctx(), impl->raw.p, n, k, stream, opt.tune_file);
    impl->desc += "; " + kernels::describe(*impl->vendor_table);
    // Row counts the plan table was not tuned on (all N rows of an untuned shape; the leading N/2, N/4, N/8 of any
    // shape, or the declared row counts): their skinny layout and range timed against that tuning (perf-notes steps
    // 211, 214, 218), where the rule alone would serve some m.
    if (impl->storage == Storage::packed12 && !impl->forced)
      for (const int64_t rows : untuned_row_sets(n, k, declared)) {
        kernels::UntunedTuning ut = kernels::tune_untuned(impl->blas_ctx(), impl->vendor_table.get(), impl->raw.p,
                                                          impl->packed_view(), rows, impl->exc_load, opt.max_m, stream,
                                                          opt.tune_file);
        impl->untuned.push_back(ut.choice);
        impl->desc += "; " + ut.desc;
      }
  }
  return Weights(std::move(impl));
}

std::string Weights::plan_for(int64_t m, int64_t rows) const {
  impl_->check_rows(rows, "plan_for");
  const Shape shape{rows, impl_->k, impl_->storage};
  return impl_->plan(shape, m).str();
}

void Weights::run(const void* d_x, int64_t m, void* d_out, int64_t rows, cudaStream_t stream) const {
  const Impl& w = *impl_;
  if (m < 1) throw Error(fmt::format("solgemm::Weights::run: m = {}; expected m >= 1", m));
  if (m > w.opt.max_m)
    throw Error(fmt::format("solgemm::Weights::run: m = {}; expected m <= max_m = {} (PrepareOptions)", m,
                            w.opt.max_m));
  w.check_rows(rows, "run");
  if (d_x == nullptr || d_out == nullptr)
    throw Error("solgemm::Weights::run: x or out is a null pointer; expected device pointers");
  // (a launch on another device would read this one's buffers from there: a fault that ends the context; host only,
  // ~tens of ns, capture-safe)
  if (int dev = -1; cudaGetDevice(&dev) != cudaSuccess || dev != w.device)
    throw Error(fmt::format("solgemm::Weights::run: the current CUDA device is {}; expected device {}, where the "
                            "weights were prepared (cudaSetDevice)", dev, w.device));
  const auto* x = static_cast<const __nv_bfloat16*>(d_x);
  const Shape shape{rows, w.k, w.storage};
  const Plan plan = w.plan(shape, m);
  // cuBLAS on the raw BF16 copy: the vendor family, and where another family cannot take this x. x in 16-byte rows is
  // what the TMA boxes and vector copies of x need (the skinny family's scalar path takes K % 8 != 0, not an
  // unaligned start: some layouts' staged x would not fit shared memory; GpuApi.UnalignedXAndOut).
  const bool x_aligned = reinterpret_cast<uintptr_t>(d_x) % 16 == 0, x_rows16 = x_aligned && w.k % 8 == 0;
  auto bf16_vendor = [&] {
    kernels::launch_vendor(w.blas_ctx(), w.vendor_table.get(), w.raw.p, x, m, static_cast<__nv_bfloat16*>(d_out), rows,
                           w.k, stream);
  };
  switch (plan.kernel) {
    case Kernel::reference:
      kernels::launch_reference(w.dtype, w.raw.p, x, m, d_out, rows, w.k, stream);
      break;
    case Kernel::skinny:
      if (!x_aligned)
        bf16_vendor();
      else
        kernels::launch_skinny(plan.cfg, w.packed_view(), x, m, static_cast<__nv_bfloat16*>(d_out), rows, stream);
      break;
    case Kernel::wide:
      if (w.storage == Storage::hilo)
        kernels::launch_wide_hilo(plan.cfg, w.hilo_view(), x, m, static_cast<float*>(d_out), rows, stream);
      else if (!x_rows16)  // (its cp.async of x)
        bf16_vendor();
      else
        kernels::launch_wide(plan.cfg, w.packed_view(), x, m, static_cast<__nv_bfloat16*>(d_out), rows, stream);
      break;
    case Kernel::vendor:
      if (w.storage == Storage::hilo)
        kernels::launch_vendor_hilo(w.blas_ctx(), w.hi_rm.p, w.lo_rm.p, w.lo2_rm.p, x, m, static_cast<float*>(d_out), rows,
                                    w.k, stream);
      else
        bf16_vendor();
      break;
    case Kernel::router:
      kernels::launch_router(plan.cfg, w.hilo_view(), x, m, static_cast<float*>(d_out), rows, stream);
      break;
    case Kernel::simt:
      if (w.s12.data != nullptr && rows <= w.s12.rows && kernels::simt_supports(w.dtype, w.k, d_x)) {
        kernels::launch_simt12(plan.cfg, w.s12, x, m, static_cast<__nv_bfloat16*>(d_out), rows, stream);
      } else if (kernels::simt_supports(w.dtype, w.k, d_x)) {
        kernels::launch_simt(plan.cfg, w.dtype, w.raw.p, x, m, d_out, rows, w.k, stream);
      } else if (w.storage == Storage::hilo) {  // K or x alignment: the router family
        const Plan rp = select_plan(shape, m, Kernel::router);
        kernels::launch_router(rp.cfg, w.hilo_view(), x, m, static_cast<float*>(d_out), rows, stream);
      } else {
        bf16_vendor();
      }
      break;
    case Kernel::stream:
      if (!x_rows16)  // (no TMA for x)
        bf16_vendor();
      else
        kernels::launch_stream(plan.cfg, w.stream_view(), x, m, static_cast<__nv_bfloat16*>(d_out), rows, stream);
      break;
  }
}

}  // namespace solgemm
