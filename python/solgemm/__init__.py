"""solgemm: the linear projections of LLM inference, out = x @ W.T, at serving batch sizes, on Hopper.

Two layers:

* ``Weights`` (the C++ core through nanobind; any DLPack array: PyTorch, CuPy, JAX): ``Weights.prepare(W)``
  copies and packs W once; ``w.run(x, out, rows, stream)`` enqueues ``out = x @ W[:rows].T`` on a CUDA stream
  given as an integer handle. No framework is needed.
* ``Linear`` / ``linear`` (PyTorch): a drop-in for ``torch.nn.functional.linear(x, W)`` without bias, on the
  current CUDA stream, any leading batch dimensions, output allocated for you; CUDA-graph capturable.

    import torch, solgemm
    W = torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16)
    lin = solgemm.Linear(W)                  # once: packs W losslessly, tunes the cuBLAS fallback
    y = lin(x)                               # x: (..., 8192) bfloat16 -> y: (..., 4096) bfloat16

FP32 weights (the router) give FP32 outputs from BF16 x. Every bad argument raises ``solgemm.Error`` (a
ValueError) with one line naming the argument, what it is and what was expected.
"""

from ._solgemm import Error, Weights

__all__ = ["Error", "Weights", "Linear", "linear"]


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise Error("solgemm.Linear: PyTorch is not installed; use solgemm.Weights with any DLPack array") from e
    return torch


class Linear:
    """``y = x @ W[:rows].T`` for a weight matrix prepared once (PyTorch tensors, the current CUDA stream).

    weight: (N, K) CUDA tensor, bfloat16 or float32 (float32 weights give float32 outputs).
    rows: output features computed by default (the first ``rows`` of N; None = N).
    options: ``solgemm.Weights.prepare``'s keywords (compress, router_mode, tune_vendor, tune_file, max_m, kernel).
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
        self.out_dtype = torch.float32 if self.weights.out_dtype == "f32" else torch.bfloat16
        self.rows = self.weights.n if rows is None else int(rows)
        if not 1 <= self.rows <= self.weights.n:
            raise Error(f"solgemm.Linear: rows = {self.rows}; expected 1 <= rows <= N = {self.weights.n}")

    @property
    def description(self):
        return self.weights.description

    def __call__(self, x, rows=None, out=None):
        """x: (..., K) bfloat16 CUDA tensor on the weight's device -> (..., rows). ``out`` (optional): a
        contiguous tensor of that shape and the output dtype, written in place and returned."""
        torch = _torch()
        rows = self.rows if rows is None else int(rows)
        if not isinstance(x, torch.Tensor):
            raise Error(f"solgemm.Linear: x is a {type(x).__name__}; expected a torch.Tensor")
        if x.dim() < 1:
            raise Error("solgemm.Linear: x is a scalar; expected (..., K) with K = {}".format(self.weights.k))
        k = x.shape[-1]
        if k != self.weights.k:
            raise Error(f"solgemm.Linear: x has shape {tuple(x.shape)}; expected (..., K) with K = {self.weights.k}")
        lead = tuple(x.shape[:-1])
        x2 = x.reshape(-1, k)
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        if x2.data_ptr() % 16 != 0:  # a view at an odd offset: the kernels read x in 16-byte pieces
            x2 = x2.clone()
        if out is None:
            out = torch.empty(lead + (rows,), dtype=self.out_dtype, device=self.device)
        elif not isinstance(out, torch.Tensor) or tuple(out.shape) != lead + (rows,) or not out.is_contiguous():
            what = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise Error(f"solgemm.Linear: out is {what}; expected a contiguous tensor of shape {lead + (rows,)}")
        # On the weights' device's current stream; the module checks that x and out are on that device.
        self.weights.run(x2, out.view(-1, rows), rows, torch.cuda.current_stream(self.device).cuda_stream)
        return out


def linear(x, weights, rows=None, out=None):
    """``torch.nn.functional.linear(x, W)`` (no bias) for ``weights``, a ``solgemm.Linear``."""
    return weights(x, rows=rows, out=out)
