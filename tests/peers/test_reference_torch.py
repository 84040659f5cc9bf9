"""The peer script's inputs and fp32 reference (peers/torch_peer/reference.py)
on the served shapes, with torch on the CPU: GQA and MQA (a K/V head shared by
its group of query heads), Nq != Nk with the bottom-right causal mask of
docs/model.md section 7, odd lengths (Nk = 1, 17, 4097), and the blocks that
let any length fit. The expected outputs come from a float64 attention written
here the plain way (K and V repeated per query head, the mask built with
torch.tril), not from the reference's own grouping; the backward reference's
gradients from torch's autograd through that attention. Needs torch (any device):
test_peers_torch skips this module where the tests' python has none."""

import math
import unittest

import tool_binary  # noqa: F401 - puts peers/ on the path

from torch_peer import reference
from torch_peer.tool import Problem

try:
    import torch
except ImportError:  # test_peers_torch does not run this module then
    torch = None


def problem(batch, heads, kv_heads, q_len, kv_len, head_dim, causal, dtype="fp32"):
    return Problem(batch, heads, q_len, head_dim, causal, dtype, kv_len, kv_heads, 0, {})


def plain_attention(q, k, v, causal):
    """float64 softmax(Q K^T / sqrt(d), bottom-right mask) V, K/V repeated."""
    group = q.shape[1] // k.shape[1]
    keys = k.double().repeat_interleave(group, dim=1)
    values = v.double().repeat_interleave(group, dim=1)
    scores = q.double() @ keys.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n_q, n_k = q.shape[2], k.shape[2]
        seen = torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
        scores = scores.masked_fill(~seen, float("-inf"))
    return torch.softmax(scores, dim=-1) @ values


@unittest.skipIf(torch is None, "torch is not installed")
class ServedReference(unittest.TestCase):
    # (batch, heads, kv_heads, Nq, Nk, d, causal): GQA, MQA, decode, odd lengths
    SHAPES = [(2, 8, 2, 3, 17, 16, True), (1, 8, 1, 1, 1, 8, False), (1, 4, 4, 1, 1, 8, True),
              (1, 4, 2, 5, 4097, 16, True), (2, 6, 3, 7, 17, 8, False),
              (1, 2, 2, 17, 17, 8, True), (3, 4, 1, 16, 33, 8, True)]

    def setUp(self):
        self.block = reference.REFERENCE_BLOCK_ELEMENTS

    def tearDown(self):
        reference.REFERENCE_BLOCK_ELEMENTS = self.block

    def check_against_plain(self, shape, seed=20261202):
        p = problem(*shape)
        q, k, v = reference.make_inputs(torch, p, seed, "cpu")
        out = reference.reference_output(torch, q, k, v, p.causal)
        self.assertEqual(tuple(out.shape), (p.batch, p.heads, p.seq_len, p.head_dim))
        error = (out.double() - plain_attention(q, k, v, p.causal)).abs().max().item()
        self.assertLess(error, 1e-5)

    def test_served_shapes_match_plain_attention(self):
        for shape in self.SHAPES:
            with self.subTest(shape=shape):
                self.check_against_plain(shape)

    def test_every_block_split_gives_the_same_output(self):
        # 40 elements: one K/V head a block, a few rows a block; 4096: whole groups
        for elements in (40, 4096):
            reference.REFERENCE_BLOCK_ELEMENTS = elements
            for shape in self.SHAPES:
                with self.subTest(elements=elements, shape=shape):
                    self.check_against_plain(shape)

    def test_the_causal_mask_is_bottom_right_aligned(self):
        # Q = 0 makes every seen key equally likely: O of query i is the mean of
        # V over the keys it sees, keys 0 .. i + Nk - Nq (here 0..1 and 0..2)
        q = torch.zeros(1, 1, 2, 4)
        k = torch.randn(1, 1, 3, 4)
        v = torch.arange(12, dtype=torch.float32).reshape(1, 1, 3, 4)
        out = reference.reference_output(torch, q, k, v, True)
        self.assertTrue(torch.equal(out[0, 0, 0], v[0, 0, :2].mean(dim=0)))
        self.assertTrue(torch.equal(out[0, 0, 1], v[0, 0, :3].mean(dim=0)))

    def test_query_heads_read_their_groups_kv_head(self):
        # 4 query heads over 2 K/V heads: heads 0, 1 read K/V head 0; 2, 3 head 1
        q = torch.zeros(1, 4, 1, 2)
        k = torch.zeros(1, 2, 1, 2)
        v = torch.tensor([[[[1.0, 1.0]], [[2.0, 2.0]]]])
        out = reference.reference_output(torch, q, k, v, False)
        self.assertEqual(out[0, :, 0, 0].tolist(), [1.0, 1.0, 2.0, 2.0])

    def test_more_queries_than_keys_under_a_causal_mask_is_refused(self):
        q, k, v = reference.make_inputs(torch, problem(1, 2, 2, 8, 4, 8, True), 1, "cpu")
        with self.assertRaisesRegex(ValueError, "leaves 4 of 8 queries no key"):
            reference.reference_output(torch, q, k, v, True)

    def test_inputs_have_the_served_shapes(self):
        p = problem(2, 8, 2, 3, 17, 16, True, "bf16")
        q, k, v = reference.make_inputs(torch, p, 7, "cpu")
        self.assertEqual([tuple(t.shape) for t in (q, k, v)],
                         [(2, 8, 3, 16), (2, 2, 17, 16), (2, 2, 17, 16)])
        self.assertEqual({t.dtype for t in (q, k, v)}, {torch.bfloat16})
        again = reference.make_inputs(torch, p, 7, "cpu")
        self.assertTrue(all(torch.equal(a, b) for a, b in zip((q, k, v), again)))
        self.assertFalse(torch.equal(k, v))


@unittest.skipIf(torch is None, "torch is not installed")
class BackwardReference(unittest.TestCase):
    """reference_gradients against torch's autograd through plain_attention in
    float64 (K and V repeated per query head, so autograd sums dK and dV over a
    group), with as many keys as queries (the only backward the tool checks):
    square, GQA and MQA, causal and not, N = 1 and odd N, whole and split into
    blocks of rows."""

    # (batch, heads, kv_heads, N, d, causal)
    SHAPES = [(2, 3, 3, 17, 8, True), (1, 2, 2, 33, 16, False), (1, 1, 1, 1, 8, True),
              (2, 2, 2, 64, 16, True), (2, 4, 2, 17, 8, True), (1, 6, 3, 33, 16, False),
              (1, 4, 1, 1, 8, True), (2, 4, 1, 40, 8, True)]

    def setUp(self):
        self.block = reference.REFERENCE_BLOCK_ELEMENTS

    def tearDown(self):
        reference.REFERENCE_BLOCK_ELEMENTS = self.block

    def test_gradients_match_autograd_in_float64(self):
        for elements in (self.block, 40, 300):
            reference.REFERENCE_BLOCK_ELEMENTS = elements
            for batch, heads, kv_heads, n, d, causal in self.SHAPES:
                with self.subTest(elements=elements, shape=(batch, heads, kv_heads, n, d, causal)):
                    p = problem(batch, heads, kv_heads, n, n, d, causal)
                    q, k, v = reference.make_inputs(torch, p, 20261202, "cpu")
                    d_out = reference.make_output_gradient(torch, p, 20261202, "cpu")
                    leaves = [t.double().requires_grad_() for t in (q, k, v)]
                    expected = torch.autograd.grad(plain_attention(*leaves, causal), leaves,
                                                   d_out.double())
                    got = reference.reference_gradients(torch, q, k, v, d_out, causal)
                    for name, a, b in zip(("dQ", "dK", "dV"), got, expected):
                        self.assertEqual(a.dtype, torch.float32, name)
                        self.assertEqual(a.shape, b.shape, name)
                        self.assertLess((a.double() - b).abs().max().item(), 1e-5, name)

    def test_output_gradient_is_its_own_draw(self):
        p = problem(1, 2, 2, 5, 5, 8, False, "bf16")
        d_out = reference.make_output_gradient(torch, p, 7, "cpu")
        q, _, _ = reference.make_inputs(torch, p, 7, "cpu")
        self.assertEqual((tuple(d_out.shape), d_out.dtype), (tuple(q.shape), torch.bfloat16))
        self.assertTrue(torch.equal(d_out, reference.make_output_gradient(torch, p, 7, "cpu")))
        self.assertFalse(torch.equal(d_out, q))

    def test_more_keys_than_queries_are_refused(self):
        p = problem(1, 4, 2, 8, 12, 8, False)
        q, k, v = reference.make_inputs(torch, p, 1, "cpu")
        with self.assertRaisesRegex(ValueError, "as many keys as queries"):
            reference.reference_gradients(torch, q, k, v, torch.zeros_like(q), False)


if __name__ == "__main__":
    unittest.main()
