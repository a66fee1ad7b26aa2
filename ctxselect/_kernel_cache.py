"""How ctxselect's cached kernels are loaded: Numba's machine code, with less of Numba's set-up.

A fresh process's first ``select()`` loads ~23 kernels from the disk cache (:mod:`ctxselect._config`
says where it lives). Numba's own ``Cache.load_overload`` does two things per kernel that running
cached machine code does not need, and here they are left out or deferred:

1. it calls ``target_context.refresh()``, which installs every typing and lowering registry Numba
   has (a compiler's work). :class:`KernelCache` initialises only Numba's runtime (NRT), which the
   machine code calls; any compilation later in the process refreshes the context itself
   (``compile_extra``), so a kernel's new signature, or the user's own Numba code, is unaffected;
2. it parses the kernel's whole LLVM bitcode (kept so that code compiled later can link the kernel
   in) and walks its symbols. :class:`_LazyLinkingLibrary` keeps the bitcode and parses it when a
   compilation first links the kernel, which a process whose kernels all come from the cache never does.

Both rest on Numba internals (``CompileResult._rebuild``, ``CPUCodeLibrary._unserialize``); where this
Numba's differ from what :data:`FAST_LOAD` checks at import, kernels load the way Numba loads them.
Measured (2026-12-06, this 2-core machine): a fresh process's first ``select()`` of 50 candidates
took ~570 ms, of which ~260 ms loading kernels; see docs/benchmarks.md for the figures after.
"""

from __future__ import annotations

import inspect

from llvmlite import binding as ll
from numba.core import caching, codegen, compiler
from numba.core.runtime import rtsys

__all__ = ["KernelCache", "LoadOnlyCache", "FAST_LOAD"]

_RESULT_FIELDS = {"target_context", "typing_context", "library", "environment", "entry_point", "fndesc",
                  "type_annotation", "signature", "objectmode", "lifted", "typing_error", "call_helper",
                  "metadata", "reload_init", "referenced_envs"}


def _fast_load_supported() -> bool:
    """Whether this Numba's internals are those :func:`_rebuild` mirrors (checked once, at import: its
    parameters are ``CompileResult._rebuild``'s)."""
    try:
        parameters = tuple(inspect.signature(compiler.CompileResult._rebuild).parameters)
        library = codegen.JITCodeLibrary
        return (parameters == tuple(inspect.signature(_rebuild).parameters)
                and set(compiler.CompileResult._fields) == _RESULT_FIELDS
                and codegen.JITCPUCodegen._library_class is library
                and all(hasattr(library, name) for name in ("enable_object_caching", "_set_compiled_object",
                                                            "_finalize_final_module", "_get_module_for_linking"))
                and hasattr(codegen.JitEngine, "_load_defined_symbols"))
    except (AttributeError, TypeError, ValueError):
        return False


class _LazyLinkingLibrary(codegen.JITCodeLibrary):
    """A cached kernel's code library whose bitcode for linking is parsed when first linked.

    Numba's ``CPUCodeLibrary._unserialize`` parses it at once (~4 ms a kernel) and records its symbols
    with the JIT engine (~2.5 ms); only ``_get_module_for_linking`` reads it, when a compilation links
    this kernel into another."""

    _pending_bitcode = None

    @property
    def _shared_module(self):
        if self._pending_bitcode is not None:
            bitcode, self._pending_bitcode = self._pending_bitcode, None
            self._parsed_shared_module = ll.parse_bitcode(bitcode)
            self._codegen._engine._load_defined_symbols(self._parsed_shared_module)
        return self._parsed_shared_module

    @_shared_module.setter
    def _shared_module(self, module) -> None:
        self._parsed_shared_module = module


def _library(target_context, libdata, fndesc):
    """The code library of a cached kernel (``CPUCodeLibrary._unserialize``, its bitcode parsed lazily)."""
    name, kind, data = libdata
    jit_codegen = target_context.codegen()
    if kind != "object":
        return jit_codegen.unserialize_library(libdata)
    object_code, shared_bitcode = data
    library = _LazyLinkingLibrary(jit_codegen, name)
    library.enable_object_caching()
    library._set_compiled_object(object_code)
    library._pending_bitcode = shared_bitcode
    library._finalize_final_module()
    # the symbols looked up by name before any linking: the entry point and its Python wrapper
    library._codegen._engine._defined_symbols.update((fndesc.llvm_func_name, fndesc.llvm_cpython_wrapper_name))
    return library


def _rebuild(target_context, libdata, fndesc, env, signature, objectmode, lifted, typeann, reload_init,
             referenced_envs):
    """``numba.core.compiler.CompileResult._rebuild``, with :func:`_library` for the code library."""
    for init in reload_init or ():
        init()
    library = _library(target_context, libdata, fndesc)
    entry_point = target_context.get_executable(library, fndesc, env)
    result = compiler.CompileResult(
        target_context=target_context, typing_context=target_context.typing_context, library=library,
        environment=env, entry_point=entry_point, fndesc=fndesc, type_annotation=typeann, signature=signature,
        objectmode=objectmode, lifted=lifted, typing_error=None, call_helper=None, metadata=None,
        reload_init=reload_init, referenced_envs=referenced_envs)
    for referenced in referenced_envs:
        library.codegen.set_env(referenced.env_name, referenced)
    return result


#: Whether kernels load through :func:`_rebuild` (this Numba's internals as expected), else Numba's path.
FAST_LOAD = _fast_load_supported()


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    """Numba's ``CompileResultCacheImpl``, rebuilding a cached kernel by :func:`_rebuild`."""

    def rebuild(self, target_context, payload):
        return _rebuild(target_context, *payload) if FAST_LOAD else super().rebuild(target_context, payload)


class KernelCache(caching.FunctionCache):
    """A ctxselect kernel's disk cache: Numba's ``FunctionCache``, loading as the module docstring says."""

    _impl_class = _KernelCacheImpl

    def load_overload(self, sig, target_context):
        if not FAST_LOAD:
            return super().load_overload(sig, target_context)
        rtsys.initialize(target_context)  # what the machine code needs of target_context.refresh()
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


class LoadOnlyCache(KernelCache):
    """A kernel's cache in a read-only cache directory: loads, and leaves what it compiles unsaved."""

    def save_overload(self, sig, data) -> None:
        return None
