/* SPDX-License-Identifier: MIT */
// Compute-bound kernel: each work-item runs `iters` dependent multiply-adds, so the
// run time grows linearly with `iters` while memory traffic stays at one store.
// The result is a closed form the host can check: x_{k+1} = x_k * 0.5f + 1.0f
// converges to 2.0f from any start, so every out[i] is 2.0f for iters >= 64.
kernel void busy(global float *out, const uint iters)
{
    size_t i = get_global_id(0);
    float x = (float)(i & 7);
    for (uint k = 0; k < iters; ++k)
        x = fma(x, 0.5f, 1.0f);
    out[i] = x;
}
