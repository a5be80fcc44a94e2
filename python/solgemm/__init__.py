"""solgemm: the linear projections of LLM inference, out = x @ W.T, at serving batch sizes, on Hopper.

Two layers:

* ``Weights`` (the C++ core through nanobind; any DLPack array: PyTorch, CuPy, JAX): ``Weights.prepare(W)``
  copies and packs W once; ``w.run(x, out, rows, stream)`` enqueues ``out = x @ W[:rows].T`` on a CUDA stream
  given as an integer handle. No framework is needed.
* ``Linear`` / ``linear`` (PyTorch): a drop-in for ``torch.nn.functional.linear(x, W)`` without bias, on the
  current CUDA stream, any leading batch dimensions, output allocated for you; CUDA-graph capturable, and traced by
  ``torch.compile`` as the custom operator ``torch.ops.solgemm.linear`` (no graph break).

    import torch, solgemm
    W = torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16)
    lin = solgemm.Linear(W)                  # once: packs W losslessly, tunes the cuBLAS fallback
    y = lin(x)                               # x: (..., 8192) bfloat16 -> y: (..., 4096) bfloat16

FP32 weights (the router) give FP32 outputs from BF16 x. Every bad argument raises ``solgemm.Error`` (a
ValueError) with one line naming the argument, what it is and what was expected.
"""

from ._solgemm import Error, Weights

__all__ = ["Error", "Weights", "Linear", "linear", "from_module"]


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise Error("solgemm.Linear: PyTorch is not installed; use solgemm.Weights with any DLPack array") from e
    return torch


_LINEARS = None  # handle -> Linear (weak), for the custom operator; created with the first Linear
_OP = None
_HANDLES = None  # a counter: a handle is never reused within the process (compiled graphs hold handles)


def _register_op(torch):
    """``torch.ops.solgemm.linear(x, handle, rows)``: a Linear's call as a PyTorch custom operator (torch >= 2.4),
    so that ``torch.compile`` traces it (its fake implementation gives the output's shape and dtype) instead of
    breaking the graph at the call's use of raw addresses. None where torch.library.custom_op is missing."""
    global _LINEARS, _OP, _HANDLES
    if _OP is not None or not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
        return _OP
    import itertools
    import weakref

    _LINEARS = weakref.WeakValueDictionary()
    _HANDLES = itertools.count(1)

    def lookup(handle):
        lin = _LINEARS.get(handle)
        if lin is None:
            raise Error(f"solgemm.linear: no live solgemm.Linear with handle {handle}")
        return lin

    @torch.library.custom_op("solgemm::linear", mutates_args=())
    def linear_op(x: torch.Tensor, handle: int, rows: int) -> torch.Tensor:
        return lookup(handle)._eager(x, rows, None)

    @linear_op.register_fake
    def _(x, handle, rows):
        return x.new_empty((*x.shape[:-1], rows), dtype=lookup(handle).out_dtype)

    _OP = torch.ops.solgemm.linear  # (the overload packet: what torch.compile traces)
    return _OP


class Linear:
    """``y = x @ W[:rows].T`` for a weight matrix prepared once (PyTorch tensors, the current CUDA stream).

    weight: (N, K) CUDA tensor, bfloat16 or float32 (float32 weights give float32 outputs).
    rows: output features computed by default (the first ``rows`` of N; None = N).
    options: ``solgemm.Weights.prepare``'s keywords (compress, router_mode, tune_vendor, tune_file, max_m, kernel,
    shared_workspace: one cuBLAS workspace for every layer prepared so on the device; their calls must then be ordered,
    e.g. all on one stream; row_counts: the ``rows`` values calls will use, e.g. ``[N, 1024]``: other row counts are
    then refused, and per-slice data is prepared only for these (an empty list, the default: any rows)).

    A call checks x and out in Python (attribute reads only) and hands their addresses to the C++ core
    (``Weights.run_ptr``): its host path is about as long as ``F.linear``'s (``bench/py_call_overhead.py``).

    Ordering: the prepared weights own scratch memory shared by their calls (split-K partials, barrier counters,
    cuBLAS's workspace), so calls of one Linear must not overlap on the GPU: one stream at a time (or streams
    ordered by events), one host thread at a time; for concurrent streams, one Linear per stream. With
    ``shared_workspace=True`` the rule covers every Linear prepared so on the device (``device_bytes``: 32 MiB less each).
    """

    def __init__(self, weight, rows=None, **options):
        torch = _torch()
        if not isinstance(weight, torch.Tensor):
            raise Error(f"solgemm.Linear: weight is a {type(weight).__name__}; expected a torch.Tensor")
        if weight.device.type != "cuda":
            raise Error(f"solgemm.Linear: weight is on {weight.device}; expected a CUDA tensor")
        weight = weight.detach().contiguous()
        with torch.cuda.device(weight.device):
            stream = torch.cuda.current_stream(weight.device).cuda_stream
            self.weights = Weights.prepare(weight, stream=stream, **options)
        self.device = weight.device
        self.n, self.k = self.weights.n, self.weights.k
        self.out_dtype = torch.float32 if self.weights.out_dtype == "f32" else torch.bfloat16
        self.rows = self.n if rows is None else int(rows)
        if not 1 <= self.rows <= self.n:
            raise Error(f"solgemm.Linear: rows = {self.rows}; expected 1 <= rows <= N = {self.n}")
        self._torch = torch
        self._tensor = torch.Tensor
        self._op = _register_op(torch)
        self._handle = 0
        if self._op is not None:
            self._handle = next(_HANDLES)
            _LINEARS[self._handle] = self
        compiler = getattr(torch, "compiler", None)
        self._compiling = getattr(compiler, "is_compiling", None) or (lambda: False)
        # The current stream's raw handle without building a Stream object (torch's private accessor, as Triton
        # uses it), else the public one.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        index = self.device.index if self.device.index is not None else torch.cuda.current_device()
        if raw is not None:
            self._stream = lambda: raw(index)
        else:  # pragma: no cover - older or newer torch
            self._stream = lambda: torch.cuda.current_stream(self.device).cuda_stream

    @property
    def description(self):
        return self.weights.description

    @property
    def device_bytes(self):
        """Device memory the prepared weights own, in bytes (W's copy, the packed code, workspaces)."""
        return self.weights.device_bytes

    def _fail(self, what):
        raise Error(f"solgemm.Linear: {what}")

    def __call__(self, x, rows=None, out=None):
        """x: (..., K) bfloat16 CUDA tensor on the weight's device -> (..., rows). ``out`` (optional): a
        contiguous tensor of that shape and the output dtype on that device, written in place and returned.
        Under ``torch.compile`` the call is the custom operator ``torch.ops.solgemm.linear`` (without ``out``)."""
        rows = self.rows if rows is None else int(rows)
        if out is None and self._op is not None and self._compiling():
            return self._op(x, self._handle, rows)
        return self._eager(x, rows, out)

    def _eager(self, x, rows, out):
        torch = self._torch
        if not isinstance(x, self._tensor):
            self._fail(f"x is a {type(x).__name__}; expected a torch.Tensor")
        shape = x.shape
        if len(shape) < 1 or shape[-1] != self.k:
            self._fail(f"x has shape {tuple(shape)}; expected (..., K) with K = {self.k}")
        if x.dtype != torch.bfloat16:
            self._fail(f"x has dtype {str(x.dtype)[6:]}; expected bfloat16")
        if x.device != self.device:
            self._fail(f"x is on {x.device}; expected {self.device}, where the weights are")
        if not 1 <= rows <= self.n:
            self._fail(f"rows = {rows}; expected 1 <= rows <= N = {self.n}")
        lead = shape[:-1]
        if not x.is_contiguous():
            x = x.contiguous()
        if x.data_ptr() % 16 != 0:  # a view at an odd offset: the kernels read x in 16-byte pieces
            x = x.clone()
        if out is None:
            out = torch.empty((*lead, rows), dtype=self.out_dtype, device=self.device)
        elif (not isinstance(out, self._tensor) or out.shape != (*lead, rows) or out.dtype != self.out_dtype
              or out.device != self.device or not out.is_contiguous()):
            what = (f"{tuple(out.shape)} {str(out.dtype)[6:]} on {out.device}" if isinstance(out, self._tensor)
                    else type(out).__name__)
            self._fail(f"out is {what}; expected a contiguous {str(self.out_dtype)[6:]} tensor of shape "
                       f"{(*lead, rows)} on {self.device}")
        m = x.numel() // self.k
        if m > 0:
            self.weights.run_ptr(x.data_ptr(), m, out.data_ptr(), rows, self._stream())
        return out


def linear(x, weights, rows=None, out=None):
    """``torch.nn.functional.linear(x, W)`` (no bias) for ``weights``, a ``solgemm.Linear``."""
    return weights(x, rows=rows, out=out)


def from_module(module, **options):
    """A ``torch.nn.Module`` that computes what ``module`` (a ``torch.nn.Linear`` with bfloat16 or float32 weights)
    computes, through a ``Linear`` of its weight, its bias (if any) added to the output; for swapping the projections
    of a loaded model in place (``parent.proj = solgemm.from_module(parent.proj)``). Inputs must be bfloat16 (float32
    weights give float32 outputs, as ``Linear``). ``options``: ``Linear``'s."""
    torch = _torch()
    if not isinstance(module, torch.nn.Linear):
        raise Error(f"solgemm.from_module: module is a {type(module).__name__}; expected a torch.nn.Linear")

    class SolgemmLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = Linear(module.weight, **options)
            self.in_features, self.out_features = module.in_features, module.out_features
            bias = module.bias
            self.register_buffer("bias", None if bias is None else bias.detach().to(self.lin.out_dtype).clone())

        def forward(self, x):
            y = self.lin(x)
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                    f"weights: {self.lin.description}")

    return SolgemmLinear()

