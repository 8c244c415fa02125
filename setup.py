"""Build of reducekit's native extension.

With a CUDA build of torch and nvcc (CUDA_HOME) present, builds the CUDA kernels
(csrc/cuda/**/*.cu) as a CUDAExtension; otherwise the CPU path alone as a CppExtension.
Build with `pip install --no-build-isolation .` so that the extension is compiled against the
torch already installed (build isolation would fetch another one).
Set REDUCEKIT_FORCE_CPU=1 to skip CUDA, TORCH_CUDA_ARCH_LIST to choose GPU targets.
REDUCEKIT_FAULT=<name> compiles in one planted fault (csrc/core/faults.h) for
benchmarks/faults.py; never set it for a build you use.
"""
import glob
import os
import re
import sys

from setuptools import find_packages, setup

try:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension
except ImportError:  # pragma: no cover - exercised only without torch
    sys.exit(
        "reducekit needs PyTorch installed before it is built. Install the torch build for your "
        "machine first (CPU: pip install torch==2.13.0; CUDA: see pytorch.org), then run "
        "pip install --no-build-isolation ."
    )

ROOT = os.path.dirname(os.path.abspath(__file__))


def with_cuda() -> bool:
    if os.environ.get("REDUCEKIT_FORCE_CPU") == "1":
        return False
    return torch.version.cuda is not None and CUDA_HOME is not None


def fault_define() -> list[str]:
    """-DRK_FAULT=<index> for REDUCEKIT_FAULT=<name>, checked against csrc/core/faults.h."""
    name = os.environ.get("REDUCEKIT_FAULT", "none") or "none"
    with open(os.path.join(ROOT, "csrc", "core", "faults.h")) as f:
        names = re.findall(r'^\s*X\(\w+, "([a-z0-9_]+)"', f.read(), flags=re.M)
    if name not in names:
        sys.exit(f"REDUCEKIT_FAULT={name!r} is not a planted fault; valid names: {', '.join(names)}")
    if name == "none":
        return []
    print(f"*** reducekit: building with PLANTED FAULT {name!r}: results will be wrong on purpose ***", file=sys.stderr)
    return [f"-DRK_FAULT={names.index(name)}"]


CPU_SOURCES = ["csrc/torch/library.cpp", "csrc/torch/module.cpp", "csrc/torch/hooks.cpp", "csrc/torch/sum.cpp", "csrc/torch/reduce.cpp", "csrc/cpu/dims_cpu.cpp",
               "csrc/cpu/exact_cpu.cpp", "csrc/cpu/reduce_cpu.cpp"]


def extension():
    include_dirs = [os.path.join(ROOT, "csrc")]
    fault = fault_define()
    # OpenMP: torch's at::parallel_for (the CPU kernels, csrc/cpu/dims_cpu.cpp) runs on torch's
    # threads only in code compiled with it; without it every CPU sum runs on one thread. Linking
    # with it names libgomp.so.1, the runtime torch has already loaded (one thread pool).
    openmp = ["-fopenmp"] if sys.platform.startswith("linux") else []
    # -ffp-contract=off: no product fused into an add unless the code asks for it (std::fma, FMA
    # intrinsics): the CPU's bits must not depend on what the compiler contracts where FMA is on.
    cxx = ["-O3", "-ffp-contract=off"] + openmp + fault
    if not with_cuda():
        return CppExtension("reducekit._C", CPU_SOURCES, include_dirs=include_dirs,
                            extra_compile_args={"cxx": cxx}, extra_link_args=openmp)
    sources = CPU_SOURCES + ["csrc/torch/cuda_backend.cpp", "csrc/cuda/launch.cpp"] + sorted(glob.glob("csrc/cuda/**/*.cu", recursive=True))
    # -Werror=switch: a switch over one of our enums that forgets a value fails to compile.
    nvcc = ["-O3", "-lineinfo", "-Xptxas=-warn-spills", "-Xcompiler=-Werror=switch"] + fault
    return CUDAExtension(
        "reducekit._C",
        sources,
        include_dirs=include_dirs,
        define_macros=[("RK_WITH_CUDA", None)],
        extra_compile_args={"cxx": cxx, "nvcc": nvcc},
        extra_link_args=openmp,
    )


setup(
    packages=find_packages(include=["reducekit", "reducekit.*"]),
    ext_modules=[extension()],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
)
