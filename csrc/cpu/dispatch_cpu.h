// core/dtype.h's dispatch with the CPU's 16-bit types (c10::Half, c10::BFloat16): f(TypeTag<In>{}),
// and torch's internal error for a dtype the caller should have refused.
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <string>

#include "core/dtype.h"

namespace rk {

template <class F>
decltype(auto) dispatch_cpu(DType d, F&& f) {
  return dispatch_dtype<c10::Half, c10::BFloat16>(d, f, [&]() -> decltype(f(TypeTag<float>{})) {
    TORCH_CHECK(false, "reducekit: internal error: bad dtype id " + std::to_string(static_cast<int>(d)));
  });
}

}  // namespace rk
