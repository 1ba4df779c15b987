# SPDX-License-Identifier: MIT
# The binding's version. It follows cw's (CMake's project(VERSION)); a test
# compares it with CW_VERSION_STRING of the headers. pyproject.toml reads it
# without importing the package, so this file holds a plain literal only.
__version__ = "1.1.0"
