// Torch-facing helpers shared by the CPU and CUDA implementations of reducekit::sum.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "registry.h"

namespace rk {

// The supported input dtype, or a TypeError naming the dtype and what is supported.
DType to_rk_dtype(const at::Tensor& self);
at::ScalarType to_scalar_type(DType d);
// torch.sum's result dtype: int64 for bool and integers, the input dtype for floats.
at::ScalarType result_dtype(at::ScalarType in);
// The method with this name, or a ValueError listing the valid names.
Method parse_method(c10::string_view name);
// ValueError/NotImplementedError if the method cannot run on this device.
void check_device(Method m, const at::Tensor& self);

}  // namespace rk
