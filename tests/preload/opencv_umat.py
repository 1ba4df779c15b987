# SPDX-License-Identifier: MIT
"""OpenCV's OpenCL path (cv2.UMat), for preload.opencv: OpenCV opens
libOpenCL itself and calls it through pointers from dlsym, which only
cw-run's OpenCL layer reaches. It prints whether OpenCL ran, the device, and
a checksum of the result, which must be the same natively and under cw-run.
"""
import hashlib
import os

# OpenCV takes GPUs only by default; PoCL's device is a CPU.
os.environ.setdefault("OPENCV_OPENCL_DEVICE", ":CPU:")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

# Shapes on noise, so that the edges are many and depend on every step.
rng = np.random.default_rng(7)
img = rng.integers(0, 64, size=(480, 640), dtype=np.uint8)
for i in range(12):
    cv2.rectangle(img, (20 + 50 * i, 30 + 30 * i), (80 + 45 * i, 120 + 25 * i), 200, -1)
    cv2.circle(img, (600 - 45 * i, 60 + 32 * i), 10 + 3 * i, 255, 2)
u = cv2.UMat(img)
for _ in range(3):
    u = cv2.GaussianBlur(u, (5, 5), 1.5)
    u = cv2.resize(u, (320, 240), interpolation=cv2.INTER_LINEAR)
    u = cv2.resize(u, (640, 480), interpolation=cv2.INTER_LINEAR)
blurred = u.get()
edges = cv2.Canny(u, 50, 150).get()
print("OpenCL in use:", cv2.ocl.useOpenCL(), "on", cv2.ocl.Device.getDefault().name())
print("blurred:", hashlib.md5(blurred.tobytes()).hexdigest())
print("edges:", int(np.count_nonzero(edges)), hashlib.md5(edges.tobytes()).hexdigest())
