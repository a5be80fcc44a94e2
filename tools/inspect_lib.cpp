// solgemm-inspect's engine (inspect_lib.hpp).
#include "inspect_lib.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "solgemm/format.hpp"
#include "solgemm/safetensors.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm::inspect {

namespace {

TensorReport analyse(const safetensors::File& f, const safetensors::TensorInfo& t) {
  TensorReport r;
  r.name = t.name;
  r.dtype = t.dtype;
  r.shape = t.shape;
  r.bytes_now = t.end - t.begin;
  r.bytes_packed = static_cast<double>(r.bytes_now);
  const int64_t elements = t.elements();
  if (t.dtype != "BF16" && t.dtype != "F32") {
    r.skipped = "dtype " + t.dtype;
    return r;
  }
  if (elements == 0) {
    r.skipped = "empty";
    return r;
  }
  r.cols = t.shape.empty() ? 1 : t.shape.back();
  r.rows = elements / r.cols;
  if (t.dtype == "F32") {  // hi + lo: two BF16 terms in the 16-bit group layout (padding to 16 x 64 included)
    r.code = "hi+lo";
    if (t.shape.size() == 2) r.ours = own_kernels(r.rows, r.cols, Storage::hilo, ExceptionLoad{});
    const double padded = static_cast<double>((r.rows + format::kGroupRows - 1) / format::kGroupRows *
                                              format::kGroupRows) *
                          static_cast<double>((r.cols + format::kGroupK - 1) / format::kGroupK * format::kGroupK);
    r.bits = 32.0 * padded / static_cast<double>(elements);
  } else {
    const std::vector<uint8_t> bytes = f.read(t);
    std::vector<uint16_t> w(static_cast<size_t>(elements));
    std::memcpy(w.data(), bytes.data(), bytes.size());  // safetensors is little-endian, like the host
    const format::BaseChoice bc = format::choose_base(w.data(), elements);
    const format::Packed p = format::encode_bf16(w.data(), r.rows, r.cols);
    r.fallback = p.code != format::Code::bits12;
    r.code = r.fallback ? "16-bit" : "12-bit";
    r.base = bc.base;
    r.exceptions = bc.outside;
    r.exception_rate = static_cast<double>(bc.outside) / static_cast<double>(elements);
    r.bits = p.bits_per_weight();
    if (t.shape.size() == 2) {  // (as prepare measures the exceptions for the plan: api.cu)
      ExceptionLoad exc;
      if (!r.fallback) {
        exc.rate = static_cast<double>(p.exceptions()) / static_cast<double>(elements);
        exc.block_max = p.block_max_exceptions();
      }
      r.ours = own_kernels(r.rows, r.cols, r.fallback ? Storage::packed16 : Storage::packed12, exc);
    }
  }
  r.bytes_packed = r.bits * static_cast<double>(elements) / 8.0;
  return r;
}

std::string mb(double bytes) { return fmt::format("{:.3f}", bytes / 1e6); }

}  // namespace

std::string own_kernels(int64_t rows, int64_t k, Storage storage, const ExceptionLoad& exc) {
  std::string s;
  Kernel run = Kernel::vendor;
  int64_t first = 0;
  auto close = [&](int64_t last) {
    if (run != Kernel::vendor)
      s += fmt::format("{}{} {}-{}", s.empty() ? "" : ", ", to_string(run), first, last);
  };
  // A 12-bit shape the plan was not tuned on: prepare times its skinny layout and serves it at 1..max_m where it wins,
  // max_m <= 16 (kernels::tune_untuned): the most it can serve, given these exceptions.
  const bool timed = storage == Storage::packed12 && untuned_skinny_shape(rows, k);
  const auto rule = untuned_skinny_layout(rows, k);
  const UntunedChoice most{rows, rule.value_or(UntunedLayout{1, 1, 1, 1}), 16};
  for (int64_t m = 1; m <= 64; ++m) {
    const Kernel kern = select_plan(Shape{rows, k, storage}, m, exc, timed ? &most : nullptr).kernel;
    if (kern != run) {
      close(m - 1);
      run = kern;
      first = m;
    }
  }
  close(64);
  if (timed && !s.empty()) s += " at most (timed at prepare)";
  return s.empty() ? "-" : s;
}

FileReport inspect_file(const std::string& path) {
  FileReport rep;
  rep.path = path;
  const safetensors::File f = safetensors::File::open(path);
  for (const auto& t : f.tensors()) {
    TensorReport r;
    try {
      r = analyse(f, t);
    } catch (const Error& e) {
      const std::string m = e.what();
      if (m.find(path) != std::string::npos) throw;  // already names the file and the tensor
      throw Error(fmt::format("{}: tensor '{}': {}", path, t.name, m));
    }
    rep.bytes_now += r.bytes_now;
    rep.bytes_packed += r.bytes_packed;
    if (r.skipped.empty() || r.skipped == "empty") {
      rep.packable_now += r.bytes_now;
      rep.packable_packed += r.bytes_packed;
    }
    rep.tensors.push_back(std::move(r));
  }
  return rep;
}

std::string render(const FileReport& rep) {
  std::string s = fmt::format("{}: {} tensors\n", rep.path, rep.tensors.size());
  s += fmt::format("{:<40} {:<5} {:<20} {:<7} {:>9} {:>11} {:>9} {:>12} {:>12}  {}\n", "tensor", "dtype", "shape",
                   "code", "bits/w", "exc. rate", "fallback", "MB now", "MB packed", "own kernels at m <= 64");
  for (const auto& t : rep.tensors) {
    const std::string shape = fmt::format("[{}]", fmt::join(t.shape, ", "));
    if (!t.skipped.empty()) {
      s += fmt::format("{:<40} {:<5} {:<20} {:<39} {:>12} {:>12}\n", t.name, t.dtype, shape,
                       "skipped (" + t.skipped + ")", mb(static_cast<double>(t.bytes_now)), mb(t.bytes_packed));
      continue;
    }
    const std::string rate = t.dtype == "BF16" ? fmt::format("{:.3e}", t.exception_rate) : "-";
    const std::string fb = t.dtype == "BF16" ? (t.fallback ? "yes" : "no") : "-";
    s += fmt::format("{:<40} {:<5} {:<20} {:<7} {:>9.4f} {:>11} {:>9} {:>12} {:>12}  {}\n", t.name, t.dtype, shape,
                     t.code, t.bits, rate, fb, mb(static_cast<double>(t.bytes_now)), mb(t.bytes_packed),
                     t.ours.empty() ? "-" : t.ours);
  }
  const double ratio = rep.bytes_now ? rep.bytes_packed / static_cast<double>(rep.bytes_now) : 1.0;
  s += fmt::format("total: {} MB now, {} MB packed ({:.1f}% of now); BF16 + F32 tensors: {} MB -> {} MB\n",
                   mb(static_cast<double>(rep.bytes_now)), mb(rep.bytes_packed), 100.0 * ratio,
                   mb(static_cast<double>(rep.packable_now)), mb(rep.packable_packed));
  return s;
}

}  // namespace solgemm::inspect
