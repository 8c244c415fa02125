// The dtypes reducekit reads, and the one dispatch from a runtime dtype to its C++ type that every
// backend uses. Torch-free and CUDA-free: the 16-bit float types are parameters (c10::Half and
// c10::BFloat16 on the CPU, __half and __nv_bfloat16 on the GPU).
#pragma once

#include <cstdint>

namespace rk {

// X(id, name, bytes, floating, C type): the order is the order of dispatch tables. `Half` and
// `BFloat16` stand for the backend's 16-bit types (dispatch_dtype's parameters).
#define RK_DTYPES(X)                           \
  X(Bool, "bool", 1, false, bool)              \
  X(UInt8, "uint8", 1, false, uint8_t)         \
  X(Int8, "int8", 1, false, int8_t)            \
  X(Int16, "int16", 2, false, int16_t)         \
  X(Int32, "int32", 4, false, int32_t)         \
  X(Int64, "int64", 8, false, int64_t)         \
  X(Float16, "float16", 2, true, Half)         \
  X(BFloat16, "bfloat16", 2, true, BFloat16)   \
  X(Float32, "float32", 4, true, float)        \
  X(Float64, "float64", 8, true, double)

enum class DType : int {
#define RK_DT_ENUM(id, ...) id,
  RK_DTYPES(RK_DT_ENUM)
#undef RK_DT_ENUM
      Count
};

inline constexpr int kNumDTypes = static_cast<int>(DType::Count);

inline constexpr const char* kDTypeNames[] = {
#define RK_DT_NAME(id, name, ...) name,
    RK_DTYPES(RK_DT_NAME)
#undef RK_DT_NAME
};
inline constexpr int kDTypeBytes[] = {
#define RK_DT_BYTES(id, name, bytes, ...) bytes,
    RK_DTYPES(RK_DT_BYTES)
#undef RK_DT_BYTES
};
inline constexpr bool kDTypeFloating[] = {
#define RK_DT_FLOAT(id, name, bytes, floating, ...) floating,
    RK_DTYPES(RK_DT_FLOAT)
#undef RK_DT_FLOAT
};
static_assert(sizeof(kDTypeNames) / sizeof(kDTypeNames[0]) == kNumDTypes, "dtype table out of sync");

inline int dtype_bytes(DType d) { return d == DType::Count ? 0 : kDTypeBytes[static_cast<int>(d)]; }
inline bool is_floating(DType d) { return d != DType::Count && kDTypeFloating[static_cast<int>(d)]; }

// A C++ type as a value, for generic lambdas: [](auto t) { using T = typename decltype(t)::T; }.
template <class T_>
struct TypeTag {
  using T = T_;
};

// Calls f(TypeTag<C type of d>{}) with the backend's 16-bit types, or bad() for DType::Count (a
// dtype the caller should have refused). Every runtime dtype switch of the backends is this one.
template <class Half, class BFloat16, class F, class Bad>
decltype(auto) dispatch_dtype(DType d, F&& f, Bad&& bad) {
  switch (d) {
#define RK_DT_CASE(id, name, bytes, floating, ctype) \
  case DType::id: return f(TypeTag<ctype>{});
    RK_DTYPES(RK_DT_CASE)
#undef RK_DT_CASE
    case DType::Count: break;
  }
  return bad();
}

}  // namespace rk
