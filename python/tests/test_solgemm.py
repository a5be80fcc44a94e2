"""Tests of the Python bindings. `python3 test_solgemm.py cpu|gpu` (CTest: python_cpu, python_gpu).

cpu: the module imports and rejects bad arguments with solgemm.Error before touching a GPU (no GPU needed).
gpu: results against an FP64 reference and torch's F.linear, NaN-poisoned outputs fully written, bitwise
     determinism, batch dimensions, streams, CUDA-graph capture; needs a CUDA GPU and PyTorch, else exits 77
     (CTest reports Skipped) with the reason. Random data is seeded; a failure prints the seed.
"""
import os
import sys
import unittest

import solgemm

SEED = int(os.environ.get("SOLGEMM_TEST_SEED", "1234"))


class Cpu(unittest.TestCase):
    def test_module(self):
        self.assertTrue(issubclass(solgemm.Error, ValueError))
        for name in ("prepare", "run", "plan_for", "weight_bits", "description", "device_bytes", "n", "k", "dtype",
                     "out_dtype"):
            self.assertTrue(hasattr(solgemm.Weights, name), name)

    def test_cpu_array_rejected(self):
        w = memoryview(bytearray(4 * 16 * 16)).cast("f", (16, 16))  # a 2-D float32 array on the CPU
        with self.assertRaisesRegex(solgemm.Error, r"Weights\.prepare: W is on the CPU; expected a CUDA device array"):
            solgemm.Weights.prepare(w)

    def test_not_a_matrix_rejected(self):
        with self.assertRaises(TypeError):  # nanobind: not an array at all
            solgemm.Weights.prepare([[1.0, 2.0]])


def _gpu_or_skip_reason():
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed: GPU test of the bindings skipped"
    if not torch.cuda.is_available():
        return "no CUDA GPU: GPU test of the bindings skipped"
    return None


class Gpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch

        cls.torch = torch
        cls.dev = torch.device("cuda")

    def gen(self, shape, dtype, salt, scale=1.0):
        t = self.torch
        g = t.Generator(device="cpu").manual_seed(SEED * 1000003 + salt)
        return (t.randn(*shape, generator=g) * scale).to(dtype).to(self.dev)

    def data(self, n, k, m, dtype, salt):
        return self.gen((n, k), dtype, salt, 0.02), self.gen((m, k), self.torch.bfloat16, salt + 7919)

    def rel_err(self, got, w, x, rows):
        ref = x.double() @ w[:rows].double().T
        return ((got.double() - ref).norm() / ref.norm()).item()

    def test_against_fp64_reference(self):
        t = self.torch
        cases = [  # (N, K, dtype, rows, options): each family the plan or a forced option reaches
            (512, 1024, t.bfloat16, 512, {}),
            (2048, 1024, t.bfloat16, 1024, {"tune_vendor": False}),
            (8192, 1024, t.bfloat16, 8192, {"tune_vendor": False}),  # o: skinny at m = 1
            (1024, 4096, t.bfloat16, 1024, {"tune_vendor": False, "kernel": "skinny"}),
            (256, 8192, t.float32, 256, {}),  # router: simt / router / wide families
            (256, 8192, t.float32, 256, {"router_mode": "exact"}),
        ]
        for ci, (n, k, dtype, rows, opts) in enumerate(cases):
            w = self.gen((n, k), dtype, ci, 0.02)
            lin = solgemm.Linear(w, rows=rows, **opts)
            self.assertGreaterEqual(lin.device_bytes, w.numel() * w.element_size())  # (its own copy of W at least)
            if ci == 0:  # one cuBLAS workspace shared with every Weights prepared so: 32 MiB less of its own
                shared = solgemm.Linear(w, rows=rows, shared_workspace=True, **opts)
                self.assertEqual(shared.device_bytes + (32 << 20), lin.device_bytes)
            for m in (1, 3, 8, 16, 32, 33, 64, 128, 256, 300):
                if opts.get("kernel") == "skinny" and m > 64:
                    continue
                x = self.gen((m, k), t.bfloat16, 1000 * ci + m)
                out = t.full((m, rows), float("nan"), dtype=lin.out_dtype, device=self.dev)
                y = lin(x, out=out)
                t.cuda.synchronize()
                what = f"N={n} K={k} {dtype} rows={rows} {opts} m={m} seed={SEED}: {lin.weights.plan_for(m, rows)}"
                self.assertIs(y, out, what)
                self.assertEqual(int(t.isnan(y).sum()), 0, "NaN left in the output: " + what)
                err = self.rel_err(y, w, x, rows)
                tol = 2e-5 if dtype == t.float32 else 8e-3
                self.assertLess(err, tol, what)
                y2 = lin(x)
                self.assertTrue(t.equal(y, y2), "two calls differ: " + what)
                if dtype == t.bfloat16:  # against torch's own call on the same data
                    ref = t.nn.functional.linear(x, w[:rows])
                    d = ((y.double() - ref.double()).norm() / ref.double().norm()).item()
                    self.assertLess(d, 1e-2, "against F.linear: " + what)

    def test_batch_dims_streams_and_graphs(self):
        t = self.torch
        w, x = self.data(1024, 2048, 24, t.bfloat16, 77)
        lin = solgemm.Linear(w, tune_vendor=False)
        y = lin(x.view(2, 3, 4, 2048))
        self.assertEqual(tuple(y.shape), (2, 3, 4, 1024))
        self.assertTrue(t.equal(y.view(24, 1024), lin(x)), f"batch dims: seed={SEED}")
        xt = x.T.contiguous().T  # a non-contiguous view of the same values
        self.assertTrue(t.equal(lin(xt), lin(x)), f"non-contiguous x: seed={SEED}")
        s = t.cuda.Stream()
        s.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(s):
            ys = lin(x)
        s.synchronize()
        self.assertTrue(t.equal(ys, lin(x)), f"side stream: seed={SEED}")
        # CUDA graph: capture once, replay on new inputs; bitwise the eager result.
        xs = x.clone()
        lin(xs)  # first call outside the capture (one-time host queries; the C++ tests cover calls inside one)
        g = t.cuda.CUDAGraph()
        with t.cuda.graph(g):
            yg = lin(xs)
        for i in range(3):
            xs.copy_(self.data(1024, 2048, 24, t.bfloat16, 100 + i)[1])
            g.replay()
            t.cuda.synchronize()
            self.assertTrue(t.equal(yg, lin(xs)), f"graph replay {i}: seed={SEED}")

    def test_torch_compile(self):
        t = self.torch
        if not hasattr(t.library, "custom_op"):
            self.skipTest("torch.library.custom_op missing (torch < 2.4): no custom operator")
        w, x = self.data(1024, 2048, 24, t.bfloat16, 55)
        lin = solgemm.Linear(w, tune_vendor=False)
        want = lin(x.view(4, 6, 2048)).float() * 2 + 1
        for backend in ("aot_eager", "inductor"):  # fullgraph: the call must not break the graph
            t._dynamo.reset()
            f = t.compile(lambda a: lin(a).float() * 2 + 1, backend=backend, fullgraph=True)
            got = f(x.view(4, 6, 2048))
            self.assertEqual(tuple(got.shape), (4, 6, 1024), backend)
            self.assertTrue(t.equal(got, want), f"torch.compile ({backend}) against eager: seed={SEED}")
        self.assertTrue(t.equal(t.ops.solgemm.linear(x, lin._handle, 512), lin(x, rows=512)))

    def test_from_module(self):
        t = self.torch
        for bias in (False, True):
            ref = t.nn.Linear(2048, 1024, bias=bias, device=self.dev, dtype=t.bfloat16)
            mod = solgemm.from_module(ref, tune_vendor=False)
            x = self.gen((3, 5, 2048), t.bfloat16, 31 + bias)
            with t.no_grad():
                want = ref(x).double()
            got = mod(x)
            self.assertEqual(tuple(got.shape), (3, 5, 1024))
            d = ((got.double() - want).norm() / want.norm()).item()
            self.assertLess(d, 1e-2, f"from_module(bias={bias}) against nn.Linear: seed={SEED}")
        with self.assertRaisesRegex(solgemm.Error, r"module is a ReLU; expected a torch.nn.Linear"):
            solgemm.from_module(t.nn.ReLU())

    def test_bad_arguments(self):
        t = self.torch
        w, x = self.data(512, 1024, 4, t.bfloat16, 5)
        lin = solgemm.Linear(w, tune_vendor=False)
        cases = [
            (lambda: lin(x[:, :512]), r"x has shape \(4, 512\); expected \(\.\.\., K\) with K = 1024"),
            (lambda: lin(x.float()), r"x has dtype float32; expected bfloat16"),
            (lambda: lin(x.cpu()), r"x is on cpu; expected cuda:0, where the weights are"),
            (lambda: lin(x, out=t.empty(4, 512, dtype=t.float32, device=self.dev)),
             r"out is \(4, 512\) float32 on cuda:0; expected a contiguous bfloat16 tensor of shape \(4, 512\)"),
            (lambda: lin(x, rows=513), r"rows = 513; expected 1 <= rows <= N = 512"),
            (lambda: lin(x, out=t.empty(4, 511, dtype=t.bfloat16, device=self.dev)), r"out is \(4, 511\)"),
            (lambda: lin.weights.run(x[:, ::2], t.empty(4, 512, dtype=t.bfloat16, device=self.dev)),
             r"x has strides \(1024, 2\) for shape \(4, 512\); expected row-major contiguous"),
            (lambda: lin.weights.run(x.T, t.empty(1024, 512, dtype=t.bfloat16, device=self.dev)),
             r"x has strides \(1, 1024\) for shape \(1024, 4\); expected row-major contiguous"),
            (lambda: lin.weights.run(x, t.empty(4, 512, dtype=t.float32, device=self.dev)),
             r"out has dtype float32; expected bfloat16 for bf16 weights"),
            (lambda: solgemm.Linear(w.half()), r"W has dtype float16; expected bfloat16 or float32"),
            (lambda: solgemm.Linear(w, router_mode="fast"), r"router_mode = 'fast'; expected 'hi_lo' or 'exact'"),
            (lambda: solgemm.Linear(w, kernel="nope"), r"nope"),
            (lambda: solgemm.Linear(w.cpu()), r"weight is on cpu; expected a CUDA tensor"),
            (lambda: declared(x, rows=128),
             r"rows = 128; expected one of the row counts declared at prepare \(256, 512: PrepareOptions::row_counts\)"),
            (lambda: solgemm.Linear(w, row_counts=[512, 513]), r"row_counts\[1\] = 513; expected 1 <= rows <= N = 512"),
        ]
        declared = solgemm.Linear(w, tune_vendor=False, row_counts=[512, 256, 512])  # (declared rows: others refused)
        self.assertEqual(tuple(declared(x, rows=256).shape), (4, 256))
        for i, (call, pattern) in enumerate(cases):
            with self.assertRaisesRegex(solgemm.Error, pattern, msg=f"case {i}"):
                call()
        self.assertEqual(lin(x[:0]).shape, (0, 512))  # an empty batch gives an empty output


def main():
    part = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    if part not in ("cpu", "gpu"):
        print(f"usage: {sys.argv[0]} cpu|gpu", file=sys.stderr)
        return 2
    if part == "gpu":
        reason = _gpu_or_skip_reason()
        if reason:
            print(reason)
            return 77
    print(f"solgemm Python bindings, part {part}, seed {SEED} (SOLGEMM_TEST_SEED)")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Cpu if part == "cpu" else Gpu)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
