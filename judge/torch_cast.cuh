// torch's x.float() kernel, written out: at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda's identity,
// std::array<char*, 2>, 4, TrivialOffsetCalculator<1>, TrivialOffsetCalculator<1>, memory::LoadWithCast<1>,
// memory::StoreWithCast<1>> (ATen/native/cuda/CUDALoops.cuh, MemoryAccess.cuh, c10/core/DynamicCast.h,
// c10/util/Float8_*.h; PyTorch, BSD-3-Clause), which is what torch launches for a dtype-converting contiguous copy.
//
// Why written out and not approximated (issue 2, perf-notes steps 139, 162): with the L2 cold, such a kernel's time is
// set by its dispatch code more than by its 16 KB of data (a cast of 8192 elements takes 4-6 us cold, and its time
// moves by ~1.5 us with the shape of the switch alone). So this copy keeps torch's structure: the kernel's parameters
// (the dtypes as one-byte ScalarType codes and the element sizes as run-time values), four elements per thread, each
// loaded through the whole c10::fetch_and_cast switch and stored through the whole c10::cast_and_store switch (every
// scalar type torch 2.11 lists, with its conversion, the assert in the default), the compute loop in between. Only the
// BF16 -> FP32 path ever runs (and is tested); the others are there for their code: the loads and the integer, half
// and complex conversions are c10's, the Float8 ones follow c10's algorithms from memory, not bit for bit (their
// from-float roundings in particular), which is all the layout of the code needs.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cassert>
#include <cstdint>

// CUDA_KERNEL_ASSERT as torch's release builds keep it (an __assert_fail call, whatever NDEBUG says); under NDEBUG
// glibc's <assert.h> does not declare __assert_fail, so c10/macros/Macros.h declares it, as here.
#if defined(NDEBUG)
extern "C" {
#if defined(__CUDA_ARCH__)
__host__ __device__
#endif
    void
    __assert_fail(const char* assertion, const char* file, unsigned int line, const char* function) noexcept
    __attribute__((__noreturn__));
}
#endif
#define SOLGEMM_TORCH_KERNEL_ASSERT(cond) \
  if (!(cond)) __assert_fail(#cond, __FILE__, static_cast<unsigned int>(__LINE__), __func__)

namespace solgemm::judge::torch_cast {

// c10::ScalarType (int8_t), torch's numbering.
enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, ComplexHalf = 8,
  ComplexFloat = 9, ComplexDouble = 10, Bool = 11, BFloat16 = 15, Float8_e5m2 = 23, Float8_e4m3fn = 24,
  Float8_e5m2fnuz = 25, Float8_e4m3fnuz = 26, UInt16 = 27, UInt32 = 28, UInt64 = 29, Float8_e8m0fnu = 44
};

__device__ __forceinline__ float f32_bits(uint32_t u) { return __uint_as_float(u); }
__device__ __forceinline__ uint32_t bits_f32(float f) { return __float_as_uint(f); }

// c10/util/Half.h: fp16_ieee_to_fp32_value (the Float8_e5m2 path goes through it).
__device__ __forceinline__ float fp16_ieee_to_fp32_value(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t exp_offset = 0xE0u << 23;
  const float exp_scale = 0x1.0p-112f;
  const float normalized_value = f32_bits((two_w >> 4) + exp_offset) * exp_scale;
  const uint32_t magic_mask = 126u << 23;
  const float magic_bias = 0.5f;
  const float denormalized_value = f32_bits((two_w >> 17) | magic_mask) - magic_bias;
  const uint32_t denormalized_cutoff = 1u << 27;
  const uint32_t result =
      sign | (two_w < denormalized_cutoff ? bits_f32(denormalized_value) : bits_f32(normalized_value));
  return f32_bits(result);
}

// c10/util/Float8_e4m3fn.h: fp8e4m3fn_to_fp32_value.
__device__ __forceinline__ float fp8e4m3fn_to_fp32(uint8_t input) {
  const uint32_t w = static_cast<uint32_t>(input) << 24;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t nonsign = w & 0x7FFFFFFFu;
  uint32_t renorm_shift = __clz(nonsign);
  renorm_shift = renorm_shift > 4 ? renorm_shift - 4 : 0;
  const int32_t inf_nan_mask = (static_cast<int32_t>(nonsign + 0x01000000) >> 8) & 0x7F800000;
  const int32_t zero_mask = static_cast<int32_t>(nonsign - 1) >> 31;
  const uint32_t result =
      sign | ((((nonsign << renorm_shift >> 4) + ((0x78 - renorm_shift) << 23)) | inf_nan_mask) & ~zero_mask);
  return f32_bits(result);
}

// c10/util/Float8_fnuz_cvt.h: fp8_fnuz_to_fp32_value<we, wm>.
template <uint32_t we, uint32_t wm>
__device__ __forceinline__ float fp8_fnuz_to_fp32(uint8_t x) {
  constexpr uint32_t weo = 8, wmo = 23;
  if (x == 0) return 0;
  if (x == 0x80) return f32_bits(0x7F800001u);
  uint32_t mantissa = x & ((1u << wm) - 1);
  uint32_t exponent = (x & 0x7F) >> wm;
  if (exponent == 0) {
    const uint32_t renorm_shift = __clz(mantissa);
    const uint32_t sh = 1 + renorm_shift - (32 - wm);
    mantissa <<= sh;
    exponent += 1 - sh;
    mantissa &= ((1u << wm) - 1);
  }
  const uint32_t exp_low_cutoff = (1u << (weo - 1)) - (1u << (we - 1));
  exponent += exp_low_cutoff - 1;
  mantissa <<= wmo - wm;
  const uint32_t sign = x >> 7;
  return f32_bits((sign << 31) | (exponent << 23) | mantissa);
}

// c10/util/Float8_e8m0fnu.h.
__device__ __forceinline__ float fp8e8m0fnu_to_fp32(uint8_t x) {
  if (x == 0) return f32_bits(0x00400000u);
  if (x == 0xFF) return f32_bits(0x7F800001u);
  return f32_bits(static_cast<uint32_t>(x) << 23);
}

// c10/util/Float8_e5m2.h: fp8e5m2_from_fp32_value.
__device__ __forceinline__ uint8_t fp8e5m2_from_fp32(float f) {
  constexpr uint32_t fp32_inf = 0xFFu << 23, fp8_max = 0x8Fu << 23, denorm_mask = 0x85u << 23;
  uint32_t f_bits = bits_f32(f);
  uint8_t result = 0u;
  const uint32_t sign = f_bits & 0x80000000u;
  f_bits ^= sign;
  if (f_bits >= fp8_max) {
    result = f_bits > fp32_inf ? 0x7F : 0x7C;
  } else if (f_bits < (0x71u << 23)) {
    f_bits = bits_f32(f32_bits(f_bits) + f32_bits(denorm_mask));
    result = static_cast<uint8_t>(f_bits - denorm_mask);
  } else {
    const uint32_t mant_odd = (f_bits >> 21) & 1;
    f_bits += ((uint32_t)(15 - 127) << 23) + 0xFFFFF;
    f_bits += mant_odd;
    result = static_cast<uint8_t>(f_bits >> 21);
  }
  return result | static_cast<uint8_t>(sign >> 24);
}

// c10/util/Float8_e4m3fn.h: fp8e4m3fn_from_fp32_value.
__device__ __forceinline__ uint8_t fp8e4m3fn_from_fp32(float f) {
  constexpr uint32_t fp8_max = 1087u << 20, denorm_mask = 141u << 23;
  uint32_t f_bits = bits_f32(f);
  uint8_t result = 0u;
  const uint32_t sign = f_bits & 0x80000000u;
  f_bits ^= sign;
  if (f_bits >= fp8_max) {
    result = 0x7F;
  } else if (f_bits < (121u << 23)) {
    f_bits = bits_f32(f32_bits(f_bits) + f32_bits(denorm_mask));
    result = static_cast<uint8_t>(f_bits - denorm_mask);
  } else {
    const uint8_t mant_odd = (f_bits >> 20) & 1;
    f_bits += ((uint32_t)(7 - 127) << 23) + 0x7FFFF;
    f_bits += mant_odd;
    result = static_cast<uint8_t>(f_bits >> 20);
  }
  return result | static_cast<uint8_t>(sign >> 24);
}

// After c10::Float8_e5m2fnuz / e4m3fnuz's from-float conversions (round to nearest even, NaN -> 0x80): not bit for bit.
template <uint32_t we, uint32_t wm>
__device__ __forceinline__ uint8_t fp8_fnuz_from_fp32(float f) {
  constexpr uint32_t bias = (1u << (we - 1));  // fnuz: exponent bias one more than the IEEE-like format
  const uint32_t fp8_max = (127u + (1u << we) - 1 - bias) << 23 | (((1u << wm) - 1) << (23 - wm));
  const uint32_t denorm_mask = (127u - bias + 23 - wm + 1) << 23;
  uint32_t f_bits = bits_f32(f);
  const uint32_t sign = f_bits & 0x80000000u;
  f_bits ^= sign;
  uint8_t result;
  if (f_bits > 0x7F800000u) return 0x80;  // NaN
  if (f_bits >= fp8_max) {
    result = static_cast<uint8_t>((1u << (we + wm)) - 1);
  } else if (f_bits < ((127u - bias + 1) << 23)) {
    f_bits = bits_f32(f32_bits(f_bits) + f32_bits(denorm_mask));
    result = static_cast<uint8_t>(f_bits - denorm_mask);
  } else {
    const uint32_t mant_odd = (f_bits >> (23 - wm)) & 1;
    f_bits += ((bias - 127u) << 23) + ((1u << (22 - wm)) - 1);
    f_bits += mant_odd;
    result = static_cast<uint8_t>(f_bits >> (23 - wm));
  }
  if (result == 0) return 0;  // no negative zero in fnuz
  return result | static_cast<uint8_t>(sign >> 24);
}

// After c10/util/Float8_e8m0fnu.h's fp8e8m0fnu_from_fp32_value (round to nearest): not bit for bit.
__device__ __forceinline__ uint8_t fp8e8m0fnu_from_fp32(float f) {
  const uint32_t f_bits = bits_f32(f);
  uint32_t exponent = (f_bits >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;
  const uint32_t mantissa = f_bits & 0x7FFFFF;
  const uint32_t g = mantissa & 0x400000, s = mantissa & 0x3FFFFF;
  if ((g && s) || (g && exponent == 0) || (g && (exponent & 1))) exponent++;
  return static_cast<uint8_t>(exponent > 0xFE ? 0xFE : exponent);
}

// c10::fetch_and_cast<float>.
__device__ __forceinline__ float fetch_and_cast(ScalarType src_type, const void* ptr) {
  switch (src_type) {
    case ScalarType::Byte: return static_cast<float>(*static_cast<const uint8_t*>(ptr));
    case ScalarType::Char: return static_cast<float>(*static_cast<const int8_t*>(ptr));
    case ScalarType::Short: return static_cast<float>(*static_cast<const int16_t*>(ptr));
    case ScalarType::Int: return static_cast<float>(*static_cast<const int32_t*>(ptr));
    case ScalarType::Long: return static_cast<float>(*static_cast<const int64_t*>(ptr));
    case ScalarType::Half: return __half2float(*static_cast<const __half*>(ptr));
    case ScalarType::Float: return *static_cast<const float*>(ptr);
    case ScalarType::Double: return static_cast<float>(*static_cast<const double*>(ptr));
    case ScalarType::ComplexHalf: return __half2float(*static_cast<const __half*>(ptr));
    case ScalarType::ComplexFloat: return *static_cast<const float*>(ptr);
    case ScalarType::ComplexDouble: return static_cast<float>(*static_cast<const double*>(ptr));
    case ScalarType::Bool: return *static_cast<const uint8_t*>(ptr) != 0 ? 1.f : 0.f;
    case ScalarType::BFloat16: return f32_bits(static_cast<uint32_t>(*static_cast<const uint16_t*>(ptr)) << 16);
    case ScalarType::Float8_e5m2:
      return fp16_ieee_to_fp32_value(static_cast<uint16_t>(*static_cast<const uint8_t*>(ptr) << 8));
    case ScalarType::Float8_e4m3fn: return fp8e4m3fn_to_fp32(*static_cast<const uint8_t*>(ptr));
    case ScalarType::Float8_e5m2fnuz: return fp8_fnuz_to_fp32<5, 2>(*static_cast<const uint8_t*>(ptr));
    case ScalarType::Float8_e4m3fnuz: return fp8_fnuz_to_fp32<4, 3>(*static_cast<const uint8_t*>(ptr));
    case ScalarType::UInt16: return static_cast<float>(*static_cast<const uint16_t*>(ptr));
    case ScalarType::UInt32: return static_cast<float>(*static_cast<const uint32_t*>(ptr));
    case ScalarType::UInt64: return static_cast<float>(*static_cast<const uint64_t*>(ptr));
    case ScalarType::Float8_e8m0fnu: return fp8e8m0fnu_to_fp32(*static_cast<const uint8_t*>(ptr));
    default: SOLGEMM_TORCH_KERNEL_ASSERT(false);
  }
  return 0.f;
}

// c10::cast_and_store<float>.
__device__ __forceinline__ void cast_and_store(ScalarType dest_type, void* ptr, float value) {
  switch (dest_type) {
    case ScalarType::Byte: *static_cast<uint8_t*>(ptr) = static_cast<uint8_t>(static_cast<int64_t>(value)); return;
    case ScalarType::Char: *static_cast<int8_t*>(ptr) = static_cast<int8_t>(value); return;
    case ScalarType::Short: *static_cast<int16_t*>(ptr) = static_cast<int16_t>(value); return;
    case ScalarType::Int: *static_cast<int32_t*>(ptr) = static_cast<int32_t>(value); return;
    case ScalarType::Long: *static_cast<int64_t*>(ptr) = static_cast<int64_t>(value); return;
    case ScalarType::Half: *static_cast<__half*>(ptr) = __float2half(value); return;
    case ScalarType::Float: *static_cast<float*>(ptr) = value; return;
    case ScalarType::Double: *static_cast<double*>(ptr) = value; return;
    case ScalarType::ComplexHalf: *static_cast<__half2*>(ptr) = __halves2half2(__float2half(value), __float2half(0.f)); return;
    case ScalarType::ComplexFloat: *static_cast<float2*>(ptr) = make_float2(value, 0.f); return;
    case ScalarType::ComplexDouble: *static_cast<double2*>(ptr) = make_double2(value, 0.0); return;
    case ScalarType::Bool: *static_cast<bool*>(ptr) = value != 0.f; return;
    case ScalarType::BFloat16: *static_cast<__nv_bfloat16*>(ptr) = __float2bfloat16(value); return;
    case ScalarType::Float8_e5m2: *static_cast<uint8_t*>(ptr) = fp8e5m2_from_fp32(value); return;
    case ScalarType::Float8_e4m3fn: *static_cast<uint8_t*>(ptr) = fp8e4m3fn_from_fp32(value); return;
    case ScalarType::Float8_e5m2fnuz: *static_cast<uint8_t*>(ptr) = fp8_fnuz_from_fp32<5, 2>(value); return;
    case ScalarType::Float8_e4m3fnuz: *static_cast<uint8_t*>(ptr) = fp8_fnuz_from_fp32<4, 3>(value); return;
    case ScalarType::UInt16: *static_cast<uint16_t*>(ptr) = static_cast<uint16_t>(value); return;
    case ScalarType::UInt32: *static_cast<uint32_t*>(ptr) = static_cast<uint32_t>(value); return;
    case ScalarType::UInt64: *static_cast<uint64_t*>(ptr) = static_cast<uint64_t>(value); return;
    case ScalarType::Float8_e8m0fnu: *static_cast<uint8_t*>(ptr) = fp8e8m0fnu_from_fp32(value); return;
    default:;
  }
  SOLGEMM_TORCH_KERNEL_ASSERT(false);
}

// The kernel's parameters, in torch's order and layout: N, the functor (empty), data (out, in), two empty offset
// calculators, the loader and the storer (one dtype byte and one element size each).
struct Identity {
  __device__ float operator()(float v) const { return v; }
};
struct Data {
  char* ptr[2];  // [0] output, [1] input
};
struct TrivialOffsetCalculator {};
struct LoadWithCast {
  ScalarType dtypes[1];
  uint32_t element_sizes[1];
};
struct StoreWithCast {
  ScalarType dtypes[1];
  uint32_t element_sizes[1];
};

constexpr int kNumThreads = 128, kElemsPerThread = 4, kBlockWorkSize = kNumThreads * kElemsPerThread;

// unrolled_elementwise_kernel with policies::unroll: load (stop at the first element past the end), compute where in
// bounds, store (likewise).
__global__ void __launch_bounds__(kNumThreads) unrolled_elementwise_kernel(int N, Identity f, Data data,
                                                                            TrivialOffsetCalculator, TrivialOffsetCalculator,
                                                                            LoadWithCast l, StoreWithCast s) {
  const int remaining = N - kBlockWorkSize * static_cast<int>(blockIdx.x);
  const int idx = static_cast<int>(blockIdx.x);
  float args[kElemsPerThread];
  float results[kElemsPerThread];
  {
    int thread_idx = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < kElemsPerThread; i++) {
      if (thread_idx >= remaining) break;
      const uint32_t offset = static_cast<uint32_t>(thread_idx + kBlockWorkSize * idx);
      args[i] = fetch_and_cast(l.dtypes[0], data.ptr[1] + l.element_sizes[0] * offset);
      thread_idx += kNumThreads;
    }
  }
#pragma unroll
  for (int i = 0; i < kElemsPerThread; i++)
    if (static_cast<int>(threadIdx.x) + i * kNumThreads < remaining) results[i] = f(args[i]);
  {
    int thread_idx = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < kElemsPerThread; i++) {
      if (thread_idx >= remaining) return;
      const uint32_t offset = static_cast<uint32_t>(thread_idx + kBlockWorkSize * idx);
      cast_and_store(s.dtypes[0], data.ptr[0] + s.element_sizes[0] * offset, results[i]);
      thread_idx += kNumThreads;
    }
  }
}

}  // namespace solgemm::judge::torch_cast
