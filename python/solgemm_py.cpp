// Python bindings of solgemm (nanobind): the C++ API as it is, on any DLPack array (PyTorch, CuPy, JAX, ...).
//
// Thin by design: Weights.prepare / Weights.run take arrays instead of raw pointers and a CUDA stream as an
// integer (torch.cuda.current_stream().cuda_stream), check what the C++ API cannot see (device, dtype, shape,
// layout), and call it. No framework is linked: torch helpers live in solgemm/__init__.py. Every bad argument
// raises solgemm.Error (a ValueError) with one line saying which argument, what it is and what was expected.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "solgemm/solgemm.hpp"

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<>;  // any framework, dtype, device and layout: checked below, with our messages
constexpr int kDLCPU = 1, kDLCUDA = 2;

std::string dtype_name(nb::dlpack::dtype t) {
  const char* base = "?";
  switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Int: base = "int"; break;
    case nb::dlpack::dtype_code::UInt: base = "uint"; break;
    case nb::dlpack::dtype_code::Float: base = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: base = "bfloat"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    default: return "dtype(code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits)";
  }
  return std::string(base) + std::to_string(t.bits);
}
bool is_bf16(nb::dlpack::dtype t) { return t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.bits == 16 && t.lanes == 1; }
bool is_f32(nb::dlpack::dtype t) { return t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && t.bits == 32 && t.lanes == 1; }

[[noreturn]] void fail(const std::string& what) { throw solgemm::Error("solgemm." + what); }

std::string shape_str(const Array& a) {
  std::string s = "(";
  for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// A 2-D, row-major contiguous array on a CUDA device (16-byte aligned where the kernels read it: x and out, not W,
// which prepare copies); returns its device.
int check_matrix(const Array& a, const char* where, const char* name, bool aligned = true) {
  const std::string w = std::string(where) + ": " + name;
  if (a.device_type() != kDLCUDA)
    fail(w + " is on " + (a.device_type() == kDLCPU ? std::string("the CPU") : "device type " + std::to_string(a.device_type())) +
         "; expected a CUDA device array");
  if (a.ndim() != 2) fail(w + " has shape " + shape_str(a) + "; expected a 2-D matrix");
  const int64_t rows = static_cast<int64_t>(a.shape(0)), cols = static_cast<int64_t>(a.shape(1));
  const bool contiguous = (cols <= 1 || a.stride(1) == 1) && (rows <= 1 || a.stride(0) == cols);
  if (!contiguous)
    fail(w + " has strides (" + std::to_string(a.stride(0)) + ", " + std::to_string(a.stride(1)) +
         ") for shape " + shape_str(a) + "; expected row-major contiguous (call .contiguous())");
  if (aligned && reinterpret_cast<uintptr_t>(a.data()) % 16 != 0)
    fail(w + " is not 16-byte aligned; expected a 16-byte aligned start");
  return a.device_id();
}

// Makes `dev` current for the scope (the kernels and handles of a Weights belong to the device it was prepared on).
class DeviceGuard {
 public:
  explicit DeviceGuard(int dev) {
    if (cudaGetDevice(&prev_) != cudaSuccess) {
      cudaGetLastError();
      fail("Weights: no CUDA device is usable (cudaGetDevice failed)");
    }
    if (prev_ != dev && cudaSetDevice(dev) != cudaSuccess) {
      cudaGetLastError();
      fail("Weights: cannot make CUDA device " + std::to_string(dev) + " current");
    }
  }
  ~DeviceGuard() {
    int now = prev_;
    if (cudaGetDevice(&now) == cudaSuccess && now != prev_) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = 0;
};

struct PyWeights {
  solgemm::Weights w;
  int device;
};

cudaStream_t as_stream(uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }

PyWeights prepare(const Array& W, uintptr_t stream, bool compress, const std::string& router_mode, bool tune_vendor,
                  const std::string& tune_file, int64_t max_m, const std::string& kernel, bool shared_workspace,
                  const std::vector<int64_t>& row_counts) {
  const int dev = check_matrix(W, "Weights.prepare", "W", false);
  solgemm::DType dt;
  if (is_bf16(W.dtype()))
    dt = solgemm::DType::bf16;
  else if (is_f32(W.dtype()))
    dt = solgemm::DType::f32;
  else
    fail("Weights.prepare: W has dtype " + dtype_name(W.dtype()) + "; expected bfloat16 or float32");
  solgemm::PrepareOptions opt;
  opt.compress = compress;
  if (router_mode == "hi_lo")
    opt.router_mode = solgemm::RouterMode::hi_lo;
  else if (router_mode == "exact")
    opt.router_mode = solgemm::RouterMode::exact;
  else
    fail("Weights.prepare: router_mode = '" + router_mode + "'; expected 'hi_lo' or 'exact'");
  opt.tune_vendor = tune_vendor;
  opt.tune_file = tune_file;
  if (max_m < 1) fail("Weights.prepare: max_m = " + std::to_string(max_m) + "; expected max_m >= 1");
  opt.max_m = static_cast<int>(std::min<int64_t>(max_m, INT32_MAX));
  opt.kernel = kernel;
  opt.shared_workspace = shared_workspace;
  opt.row_counts = row_counts;
  const void* p = W.data();
  const int64_t n = static_cast<int64_t>(W.shape(0)), k = static_cast<int64_t>(W.shape(1));
  nb::gil_scoped_release release;  // packing and the vendor tuner take seconds on large shapes
  DeviceGuard guard(dev);
  return PyWeights{solgemm::Weights::prepare(p, dt, n, k, as_stream(stream), opt), dev};
}

void run(const PyWeights& pw, const Array& x, const Array& out, int64_t rows, uintptr_t stream) {
  const solgemm::Weights& w = pw.w;
  const int xdev = check_matrix(x, "Weights.run", "x");
  const int odev = check_matrix(out, "Weights.run", "out");
  if (xdev != pw.device || odev != pw.device)
    fail("Weights.run: x is on cuda:" + std::to_string(xdev) + " and out on cuda:" + std::to_string(odev) +
         "; expected both on cuda:" + std::to_string(pw.device) + ", where the weights were prepared");
  if (!is_bf16(x.dtype())) fail("Weights.run: x has dtype " + dtype_name(x.dtype()) + "; expected bfloat16");
  const int64_t m = static_cast<int64_t>(x.shape(0));
  if (static_cast<int64_t>(x.shape(1)) != w.k())
    fail("Weights.run: x has shape " + shape_str(x) + "; expected (m, K) with K = " + std::to_string(w.k()));
  if (rows < 0) rows = w.n();
  const bool f32_out = w.out_dtype() == solgemm::DType::f32;
  if (f32_out ? !is_f32(out.dtype()) : !is_bf16(out.dtype()))
    fail("Weights.run: out has dtype " + dtype_name(out.dtype()) + "; expected " + (f32_out ? "float32" : "bfloat16") +
         " for " + solgemm::to_string(w.dtype()) + " weights");
  if (static_cast<int64_t>(out.shape(0)) != m || static_cast<int64_t>(out.shape(1)) != rows)
    fail("Weights.run: out has shape " + shape_str(out) + "; expected (m, rows) = (" + std::to_string(m) + ", " +
         std::to_string(rows) + ")");
  if (m == 0) return;  // an empty batch: nothing to compute (the C++ API asks for m >= 1)
  const void* px = x.data();
  void* po = out.data();
  DeviceGuard guard(pw.device);
  w.run(px, m, po, rows, as_stream(stream));  // enqueues only: no GIL release needed, no host sync
}

}  // namespace

NB_MODULE(_solgemm, m) {
  m.doc() = "solgemm: out = x @ W.T at serving batch sizes on Hopper (C++ core; see the solgemm package)";
  nb::exception<solgemm::Error>(m, "Error", PyExc_ValueError);

  nb::class_<PyWeights>(m, "Weights",
                        "A weight matrix W (N x K, bfloat16 or float32) prepared once for out = x @ W[:rows].T.")
      .def_static("prepare", &prepare, nb::arg("W"), nb::kw_only(), nb::arg("stream") = 0, nb::arg("compress") = true,
                  nb::arg("router_mode") = "hi_lo", nb::arg("tune_vendor") = true, nb::arg("tune_file") = "",
                  nb::arg("max_m") = 4096, nb::arg("kernel") = "", nb::arg("shared_workspace") = false,
                  nb::arg("row_counts") = std::vector<int64_t>{},
                  "Copies and packs W (a 2-D CUDA array, row-major, bfloat16 or float32) on `stream` and synchronises "
                  "it; W may be freed afterwards. Options as solgemm::PrepareOptions.")
      .def("run", &run, nb::arg("x"), nb::arg("out"), nb::arg("rows") = -1, nb::arg("stream") = 0,
           "out[:m, :rows] = x @ W[:rows].T on `stream` (an integer handle; 0 = the legacy default stream). x: "
           "(m, K) bfloat16; out: (m, rows), bfloat16 (float32 for float32 weights); rows = -1 means N. "
           "Enqueues kernels only: CUDA-graph safe, never synchronises.")
      .def("run_ptr",
           [](const PyWeights& pw, uintptr_t x, int64_t mm, uintptr_t out, int64_t rows, uintptr_t stream) {
             DeviceGuard guard(pw.device);
             pw.w.run(reinterpret_cast<const void*>(x), mm, reinterpret_cast<void*>(out), rows < 0 ? pw.w.n() : rows,
                      as_stream(stream));
           },
           nb::arg("x_ptr"), nb::arg("m"), nb::arg("out_ptr"), nb::arg("rows") = -1, nb::arg("stream") = 0,
           "run() on raw device addresses (integers), for callers that have checked their arrays (solgemm.Linear): "
           "x_ptr -> m x K bfloat16 row-major, 16-byte aligned; out_ptr -> m x rows of out_dtype; on the device the "
           "weights were prepared on. Only m, rows and null pointers are checked here.")
      .def("plan_for", [](const PyWeights& p, int64_t mm, int64_t rows) { return p.w.plan_for(mm, rows < 0 ? p.w.n() : rows); },
           nb::arg("m"), nb::arg("rows") = -1, "The kernel and configuration a call of this size uses, as one line.")
      .def("weight_bits", [](const PyWeights& p, int64_t mm, int64_t rows) { return p.w.weight_bits(mm, rows < 0 ? p.w.n() : rows); },
           nb::arg("m"), nb::arg("rows") = -1, "Bits per weight a call of this size reads.")
      .def_prop_ro("description", [](const PyWeights& p) { return p.w.description(); })
      .def_prop_ro("device_bytes", [](const PyWeights& p) { return p.w.device_bytes(); },
                   "Device memory this Weights owns, in bytes (its copy of W, the packed code, workspaces).")
      .def_prop_ro("n", [](const PyWeights& p) { return p.w.n(); })
      .def_prop_ro("k", [](const PyWeights& p) { return p.w.k(); })
      .def_prop_ro("dtype", [](const PyWeights& p) { return std::string(solgemm::to_string(p.w.dtype())); })
      .def_prop_ro("out_dtype", [](const PyWeights& p) { return std::string(solgemm::to_string(p.w.out_dtype())); })
      .def_prop_ro("device", [](const PyWeights& p) { return p.device; });
}
